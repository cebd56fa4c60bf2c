"""Policies under the root: content-addressed files (``policies/blobs``, the layout and the check
are ``storage/blobs.py``'s: a policy's model, vocabulary and prompts, the regression set's frozen
facts) and the copies of the adoptions (``policies/adopted/<time>-<event id>.json``)."""

from __future__ import annotations

from pathlib import Path

from storage import blobs
from storage.root.files import Files

ADOPTED = "policies/adopted"


class Blobs:
    def __init__(self, files: Files) -> None:
        self.files = files

    def put(self, data: bytes, suffix: str) -> tuple[str, str]:
        """Keep ``data`` by its digest; (digest, path relative to the root)."""
        return blobs.put(self.files.fs, self.files.base, data, suffix)

    def get(self, relative: str) -> bytes:
        """A blob's bytes, checked against its name's digest (``StoreError`` when missing or changed)."""
        return blobs.get(self.files.fs, self.files.base, relative)

    def local_copy(self, relative: str) -> Path:
        return blobs.local_copy(self.files.fs, self.files.base, relative)

    def delete(self, relative: str) -> None:
        self.files.delete(self.files.path(relative))


class AdoptedCopies:
    """One file per adoption, named so that names sort by adoption time: read without the log."""

    def __init__(self, files: Files) -> None:
        self.files = files
        self.folder = files.path(ADOPTED)

    def name(self, micros: int, event_id: str) -> str:
        return f"{self.folder}/{micros:020d}-{event_id}.json"

    def keep(self, path: str, data: bytes) -> None:
        """Write the copy unless it is there already."""
        if not self.files.is_file(path):
            self.files.write(path, data)

    def listed(self) -> list[str]:
        """Every copy, oldest adoption first."""
        return sorted(i.path for i in self.files.listing(self.folder) if i.path.endswith(".json"))

    @staticmethod
    def micros(path: str) -> int:
        """When the adoption a copy holds was made, as its name says (microseconds since 1970)."""
        return int(path.rsplit("/", 1)[1].split("-", 1)[0])

    def read(self, path: str) -> bytes:
        return self.files.read(path)
