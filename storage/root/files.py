"""What every owner of a place under the root shares: the filesystem, the base path, whole-file
reads and writes, listings and locks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pyarrow.fs as pafs

from storage.atomic import backend_name, exclusive, write_bytes, write_with
from storage.lease import Held


class Files:
    """The root's filesystem and base path; every path it takes or gives is a full store path."""

    def __init__(self, fs: pafs.FileSystem, base: str) -> None:
        self.fs = fs
        self.base = base.rstrip("/")
        self.is_local = isinstance(fs, pafs.LocalFileSystem)
        self.backend = backend_name(fs)

    def path(self, *parts: str) -> str:
        """A place under the root, from its parts relative to the root."""
        return "/".join([self.base, *parts])

    def relative(self, path: str) -> str:
        return path[len(self.base) + 1 :] if path.startswith(f"{self.base}/") else path

    def exists(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type != pafs.FileType.NotFound)

    def is_file(self, path: str) -> bool:
        return bool(self.fs.get_file_info(path).type == pafs.FileType.File)

    def read(self, path: str, *, as_stored: bool = False) -> bytes:
        """A file's bytes (``FileNotFoundError`` when there is none); ``as_stored``: never
        decompressed on the way, whatever its name's extension."""
        options: dict[str, Any] = {"compression": None} if as_stored else {}
        with self.fs.open_input_stream(path, **options) as src:
            data: bytes = src.read()
        return data

    def write(self, path: str, data: bytes | Any) -> str:
        """``data`` at ``path``, whole or not at all (``storage/atomic.py``)."""
        return write_bytes(self.fs, path, data)

    def write_with(self, path: str, write: Callable[[Any], None]) -> str:
        return write_with(self.fs, path, write)

    def delete(self, path: str) -> None:
        self.fs.delete_file(path)

    def delete_folder_if_empty(self, folder: str) -> None:
        if not self.listing(folder):
            self.fs.delete_dir(folder)

    def listing(self, folder: str, *, recursive: bool = False) -> list[pafs.FileInfo]:
        """What a folder holds (nothing when it does not exist)."""
        selector = pafs.FileSelector(folder, allow_not_found=True, recursive=recursive)
        return list(self.fs.get_file_info(selector))

    def files_in(self, folder: str, *, recursive: bool = False) -> Iterator[pafs.FileInfo]:
        return (i for i in self.listing(folder, recursive=recursive) if i.type == pafs.FileType.File)

    def lock(self, path: str, **lease: Any) -> AbstractContextManager[Held]:
        """The exclusive lock named ``path``: a lock file on a disk, a lease object on S3; a
        backend that cannot lock is refused (``storage/atomic.py:exclusive``)."""
        return exclusive(self.fs, path, **lease)
