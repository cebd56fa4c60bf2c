"""Content-addressed files under the store's root: ``policies/blobs/<digest><suffix>``.

A policy's model artefact, vocabulary and prompt templates are kept here by the digest of their
bytes, so an adoption event names them by digest and a later reader gets exactly those bytes,
whatever happened to the files they were read from. A blob is written once (same bytes, same
name) and never changed; on an object store each is one PUT.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow.fs as pafs

from storage.atomic import write_bytes
from storage.errors import StoreError

BLOBS = "policies/blobs"


def digest_of(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def blob_path(digest: str, suffix: str) -> str:
    """Where a blob lives, relative to the root."""
    return f"{BLOBS}/{digest}{suffix}"


def put(fs: pafs.FileSystem, base: str, data: bytes, suffix: str) -> tuple[str, str]:
    """Store ``data`` by its digest; returns (digest, path relative to the root)."""
    digest = digest_of(data)
    relative = blob_path(digest, suffix)
    where = f"{base}/{relative}"
    if fs.get_file_info(where).type != pafs.FileType.File:
        write_bytes(fs, where, data)
    return digest, relative


def get(fs: pafs.FileSystem, base: str, relative: str) -> bytes:
    """A blob's bytes, checked against the digest its name carries."""
    try:
        with fs.open_input_stream(f"{base}/{relative}") as src:
            data: bytes = src.read()
    except FileNotFoundError:
        raise StoreError(
            f"{relative} is missing from the store; the policy that names it cannot be restored"
        ) from None
    digest = Path(relative).name.split(".", 1)[0]
    if digest_of(data) != digest:
        raise StoreError(f"{relative} does not hold the bytes its name says (digest {digest_of(data)})")
    return data


def local_copy(fs: pafs.FileSystem, base: str, relative: str) -> Path:
    """A local file with a blob's bytes: the blob itself on a local root, else a cached copy
    (``$XDG_CACHE_HOME/dailybrief``), since models and prompts are read from local files."""
    if isinstance(fs, pafs.LocalFileSystem):
        path = Path(base) / relative
        get(fs, base, relative)  # checks it is there and whole
        return path
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dailybrief" / relative
    if not cache.is_file():
        cache.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(pafs.LocalFileSystem(), str(cache.resolve()), get(fs, base, relative))
    return cache
