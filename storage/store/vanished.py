"""Telling a file that vanished under a reader from any other error, and reading again when one did."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import polars as pl

T = TypeVar("T")


_VANISHED = (
    "no such file",
    "not found",  # pyarrow S3 says "AWS Error RESOURCE_NOT_FOUND during GetObject operation"
    "does not exist",
    "nosuchkey",
    "no such key",
    "404",
    "path does not exist",
)


def vanished(exc: Exception) -> bool:
    """Whether an error says a file was not there (compaction removed it under a reader).

    Local disks raise ``FileNotFoundError``; object stores say it in words (S3 ``NoSuchKey``,
    HTTP 404, fsspec's "not found"), which reach us as ``OSError`` or a Polars compute error.
    """
    if isinstance(exc, FileNotFoundError):
        return True
    text = str(exc).lower().replace("_", " ")  # "NO_SUCH_KEY", "RESOURCE_NOT_FOUND": words with underscores
    return any(marker in text for marker in _VANISHED)


_TRANSIENT = (
    "internal failure",  # pyarrow S3: "AWS Error INTERNAL_FAILURE during GetObject operation"
    "failed to flush response stream",  # a response cut short (an object deleted while it was read)
    "service unavailable",
    "slow down",
    "request timeout",
)


def transient(exc: Exception) -> bool:
    """Whether an object store's error says a read may succeed if made again (a 5xx, a response cut
    short): reading is idempotent, so it is read again rather than failing a run."""
    text = str(exc).lower().replace("_", " ")
    return any(marker in text for marker in _TRANSIENT)


def rereading(read: Callable[[], T], attempts: int = 8) -> T:
    """Run ``read`` (which lists, then reads); when a file it listed vanished, or an object store
    answered with a transient error, list and read again.

    Compaction writes its merged file before it deletes the old ones, so a new listing finds
    every event; the pauses (5 ms, 10 ms, … 0.6 s) let a compaction in progress finish.
    """
    for attempt in range(attempts):
        try:
            return read()
        except (FileNotFoundError, OSError, pl.exceptions.ComputeError) as exc:
            if attempt == attempts - 1 or not (vanished(exc) or transient(exc)):
                raise
            time.sleep(0.005 * 2**attempt)
    raise AssertionError("unreachable")
