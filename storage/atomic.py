"""Whole-or-nothing writes: the one helper every writer of files uses.

A file appears complete or not at all. On a local disk the bytes go to a temporary name
beside the target (unique per writer, so concurrent writers never share or rename away each
other's temporary) and are renamed over it; on an object store one PUT is already atomic.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

from storage.errors import StoreError
from storage.lease import Held, log, s3_lease


def temporary_name(path: str) -> str:
    directory, _, name = path.rpartition("/")
    return f"{directory}/.{name}.{uuid.uuid4().hex[:12]}.tmp"


def write_with(fs: pafs.FileSystem, path: str, write: Callable[[Any], None]) -> str:
    """Call ``write(stream)`` into ``path`` on ``fs`` atomically; returns ``path``."""
    directory = path.rpartition("/")[0]
    if not isinstance(fs, pafs.LocalFileSystem):
        fs.create_dir(directory, recursive=True)
        with fs.open_output_stream(path) as out:  # one PUT
            write(out)
        return path
    temporary = temporary_name(path)
    try:
        try:
            handle = open(temporary, "wb")  # noqa: SIM115 - closed below, before the rename
        except FileNotFoundError:
            os.makedirs(directory, exist_ok=True)
            handle = open(temporary, "wb")  # noqa: SIM115
        with handle:
            write(handle)
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    return path


def write_bytes(fs: pafs.FileSystem, path: str, data: bytes | Any) -> str:
    return write_with(fs, path, lambda out: out.write(data))


def write_text(path: Path | str, text: str) -> None:
    """A local file holds ``text`` entirely or keeps what it held."""
    write_bytes(pafs.LocalFileSystem(), str(Path(path).resolve()), text.encode("utf-8"))


@contextlib.contextmanager
def exclusive(fs: pafs.FileSystem, path: str, **lease: Any) -> Iterator[Held]:
    """Hold an exclusive lock named ``path`` while the block runs (processes, threads and hosts alike).

    On a local disk this is an ``flock`` on a lock file. On S3 (and S3-compatible stores) it is a
    lease object created with a conditional write (``storage/lease.py``): a second holder waits
    while the first renews it, and takes it over once the first stopped renewing it for the
    lease's ``ttl_s`` (``lease``: ``ttl_s``, ``poll_s``), so a crashed holder blocks nobody for
    long. A block that must not act twice calls ``check()`` on what this yields before acting.
    fsspec's ``memory://`` lives in one process, so a lock of that process is the whole lock.
    Any other filesystem has no such primitive: the block is refused (``StoreError``, naming the
    backend), never run unlocked.
    """
    if isinstance(fs, pafs.S3FileSystem):
        held = s3_lease(fs, path, **lease).acquire()
        try:
            yield held
        finally:
            held.release()
        return
    if isinstance(fs, pafs.LocalFileSystem):
        with _flock(path):
            yield Held()
        return
    if _in_process(fs):
        with _process_lock(path):
            yield Held()
        return
    raise StoreError(
        f"lock {path}: the storage root's filesystem ({backend_name(fs)}) cannot hold a lock, so two "
        "writers of one brief date could overwrite each other; put [storage] root on a local or "
        "shared POSIX disk, or on S3 (s3://bucket/prefix, endpoint_url for an S3-compatible server)"
    )


def backend_name(fs: pafs.FileSystem) -> str:
    """What a filesystem is, as a message names it: ``s3``, ``local``, or the fsspec protocol."""
    if isinstance(fs, pafs.PyFileSystem) and isinstance(fs.handler, pafs.FSSpecHandler):
        protocol = fs.handler.fs.protocol
        return f"fsspec {protocol if isinstance(protocol, str) else protocol[0]}"
    return str(fs.type_name)


def _in_process(fs: pafs.FileSystem) -> bool:
    return backend_name(fs) == "fsspec memory"


_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


@contextlib.contextmanager
def _process_lock(path: str) -> Iterator[None]:
    with _PROCESS_LOCKS_GUARD:
        lock = _PROCESS_LOCKS.setdefault(path, threading.Lock())
    if not lock.acquire(blocking=False):
        log.warning("lock %s is held by another holder; waiting", path)
        lock.acquire()
    try:
        yield
    finally:
        lock.release()


@contextlib.contextmanager
def _flock(path: str) -> Iterator[None]:
    import fcntl

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("lock %s is held by another holder; waiting", path)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
