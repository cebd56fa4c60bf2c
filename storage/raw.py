"""Raw feed bodies: the bytes a fetch got, kept by content hash beside the day's events.

``{root}/raw/date=YYYY-MM-DD/<hash>.zst``: one zstd file per distinct body a day's fetches got,
named by the same digest ``feed.fetched`` records as ``content_hash`` and referenced from it as
``body``. A body is written once (same bytes, same name) before the events that name it, so a
reference never points at nothing unless retention dropped it (and then cleared it). Partitioned
by brief date like the log, so retention drops a day's folder and a purge finds them by day.
"""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.fs as pafs

from storage.atomic import write_bytes
from storage.errors import StoreError

RAW = "raw"
CODEC = pa.Codec("zstd", compression_level=3)


def digest(data: bytes) -> str:
    """The body's content hash (what ``feed.fetched`` records as ``content_hash``)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def day_folder(day: str) -> str:
    """Relative to the root: the folder of a brief date's bodies (``day`` in ISO form)."""
    return f"{RAW}/date={day}"


def body_path(day: str, content_hash: str) -> str:
    return f"{day_folder(day)}/{content_hash}.zst"


def put_body(fs: pafs.FileSystem, base: str, day: str, data: bytes) -> str:
    """Keep ``data`` for ``day`` under its digest (once); the path relative to the root."""
    relative = body_path(day, digest(data))
    write_body(fs, base, relative, data)
    return relative


def write_body(fs: pafs.FileSystem, base: str, relative: str, data: bytes) -> None:
    """Keep ``data`` at ``relative`` unless a body is there already (same name, same bytes)."""
    where = f"{base.rstrip('/')}/{relative}"
    if fs.get_file_info(where).type != pafs.FileType.File:
        write_bytes(fs, where, compress(data))


def compress(data: bytes) -> bytes:
    return CODEC.compress(data, asbytes=True)  # type: ignore[no-any-return]


ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def decompress(data: bytes) -> bytes:
    """A zstd frame's bytes, whatever size it declares (or none). An object store's writer may
    have compressed a ``.zst`` name once more (pyarrow detects compression by extension): every
    layer is undone."""
    while data.startswith(ZSTD_MAGIC):
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            data = stream.read()
    return data


def get_body(fs: pafs.FileSystem, base: str, relative: str) -> bytes:
    try:
        with fs.open_input_stream(f"{base.rstrip('/')}/{relative}", compression=None) as src:
            data: bytes = src.read()
    except FileNotFoundError:
        raise StoreError(f"{relative} is no longer kept (retention dropped it, or a purge did)") from None
    return decompress(data)


def bodies(fs: pafs.FileSystem, base: str, day: str) -> list[str]:
    """The bodies kept for a brief date, relative to the root, in name order."""
    selector = pafs.FileSelector(f"{base.rstrip('/')}/{day_folder(day)}", allow_not_found=True)
    names = sorted(i.base_name for i in fs.get_file_info(selector) if i.base_name.endswith(".zst"))
    return [f"{day_folder(day)}/{n}" for n in names if not n.startswith(".")]


def kept_days(fs: pafs.FileSystem, base: str) -> list[str]:
    selector = pafs.FileSelector(f"{base.rstrip('/')}/{RAW}", allow_not_found=True)
    return sorted(
        i.base_name[5:]
        for i in fs.get_file_info(selector)
        if i.type == pafs.FileType.Directory and i.base_name.startswith("date=")
    )
