"""Where a store's root lives: a local path, an S3 bucket (or an S3-compatible server), any fsspec URL."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from storage.errors import StoreError


def resolve_filesystem(
    root: str, *, endpoint_url: str | None = None, region: str | None = None
) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and base path for a local path or any pyarrow/fsspec URL.

    ``s3://bucket/prefix`` takes its credentials from the standard AWS chain (environment,
    shared config and credentials files, instance or task roles); ``endpoint_url`` points it
    at an S3-compatible server (MinIO, Ceph, R2, moto).
    """
    if "://" not in root:
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(root))
    if root.startswith("file://"):
        return pafs.LocalFileSystem(), root[len("file://") :]
    if root.startswith("s3://"):
        return _s3(root, endpoint_url, region)
    try:
        return pafs.FileSystem.from_uri(root)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        import fsspec
    except ImportError as exc:  # pragma: no cover - fsspec ships with the project
        raise StoreError(f"storage root {root!r}: install fsspec to use this URL scheme") from exc
    try:
        fs, path = fsspec.core.url_to_fs(root)
    except (ImportError, ValueError) as exc:
        raise StoreError(f"storage root {root!r}: no filesystem for this URL ({exc})") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _s3(root: str, endpoint_url: str | None, region: str | None) -> tuple[pafs.FileSystem, str]:
    base = root[len("s3://") :].strip("/")
    bucket = base.split("/", 1)[0]
    if not bucket:
        raise StoreError(f"storage root {root!r} names no bucket; use s3://bucket/prefix")
    options: dict[str, Any] = {
        "region": region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    }
    if endpoint_url:
        options["endpoint_override"] = endpoint_url
    fs = pafs.S3FileSystem(**{k: v for k, v in options.items() if v})
    where = f" at {endpoint_url}" if endpoint_url else ""
    try:
        found = fs.get_file_info(bucket).type
    except OSError as exc:
        reason = str(exc).splitlines()[0][:200]
        raise StoreError(
            f"storage root {root!r}: cannot reach the bucket{where} ({reason}); check [storage] "
            "endpoint_url and the AWS credentials in the environment"
        ) from None
    if found == pafs.FileType.NotFound:
        raise StoreError(
            f"storage root {root!r}: bucket {bucket!r} does not exist{where}; create it "
            "(the store needs s3:ListBucket, s3:GetObject, s3:PutObject, s3:DeleteObject on it)"
        )
    return fs, base
