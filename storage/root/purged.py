"""What a purge keeps under the root: the tombstones (``purged/tombstones.json``, the file and its
lock are ``storage/tombstones.py``'s) and the lock a purge holds from start to end."""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager

from storage import tombstones as index
from storage.lease import Held
from storage.root.files import Files
from storage.tombstones import Tombstones


class Purged:
    def __init__(self, files: Files) -> None:
        self.files = files

    def tombstones(self) -> Tombstones:
        return index.read(self.files.fs, self.files.base)

    def add(
        self, target: str, article_ids: Iterable[str], links: Iterable[str], content_hashes: Iterable[str]
    ) -> Tombstones:
        return index.add(self.files.fs, self.files.base, target, article_ids, links, content_hashes)

    def lock(self) -> AbstractContextManager[Held]:
        """Held by a purge from start to end: two purges never interleave."""
        return self.files.lock(self.files.path(index.FOLDER, ".purge.lock"))
