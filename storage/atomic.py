"""Whole-or-nothing writes: the one helper every writer of files uses.

A file appears complete or not at all. On a local disk the bytes go to a temporary name
beside the target (unique per writer, so concurrent writers never share or rename away each
other's temporary) and are renamed over it; on an object store one PUT is already atomic.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs

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
    Other filesystems have no such primitive: there the block runs unlocked, and two writers of
    one name must be kept apart by the deployment (one worker per brief date).
    """
    if isinstance(fs, pafs.S3FileSystem):
        held = s3_lease(fs, path, **lease).acquire()
        try:
            yield held
        finally:
            held.release()
        return
    if not isinstance(fs, pafs.LocalFileSystem):
        yield Held()
        return
    import fcntl

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a+b") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning("lock %s is held by another holder; waiting", path)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield Held()
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
