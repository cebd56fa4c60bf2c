"""Raw feed bodies under the root (the layout and the codec are ``storage/raw.py``'s):
``raw/date=D/<hash>.zst``, what collection keeps, reparse reads, retention drops, a purge rewrites."""

from __future__ import annotations

from datetime import date

from storage import raw
from storage.root.files import Files


def _iso(day: date | str) -> str:
    return day if isinstance(day, str) else day.isoformat()


class RawBodies:
    def __init__(self, files: Files) -> None:
        self.files = files

    def put(self, day: date | str, data: bytes) -> str:
        """Keep ``data`` for ``day`` under its digest (once); the path relative to the root."""
        return raw.put_body(self.files.fs, self.files.base, _iso(day), data)

    def write(self, relative: str, data: bytes) -> None:
        """Keep ``data`` at ``relative`` unless a body is there already."""
        raw.write_body(self.files.fs, self.files.base, relative, data)

    def get(self, relative: str) -> bytes:
        """A kept body's bytes (``StoreError`` when it is no longer kept)."""
        return raw.get_body(self.files.fs, self.files.base, relative)

    def of_day(self, day: date | str) -> list[str]:
        """The bodies kept for a brief date, relative to the root, in name order."""
        return raw.bodies(self.files.fs, self.files.base, _iso(day))

    def days(self) -> list[str]:
        return raw.kept_days(self.files.fs, self.files.base)

    def every(self) -> list[tuple[str, str]]:
        """Every kept body as (its day, its path relative to the root): what may quote any article."""
        return [(day, relative) for day in self.days() for relative in self.of_day(day)]

    def replace(self, day: str, relative: str, data: bytes) -> str:
        """A body kept again as ``data`` (under its new digest), the old one gone; the new path."""
        fresh = self.put(day, data)
        if fresh != relative:
            self.files.delete(self.files.path(relative))
        return fresh

    def drop(self, day: date | str, relatives: list[str]) -> None:
        """Delete bodies of a day (retention), and the day's folder once it is empty."""
        for relative in relatives:
            self.files.delete(self.files.path(relative))
        if relatives:
            self.files.delete_folder_if_empty(self.files.path(raw.day_folder(_iso(day))))
