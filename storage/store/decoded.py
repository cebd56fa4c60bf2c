"""A process's decoded batches of a local store, kept in memory by path.

A batch (a part file) is immutable: appends, compaction and rewrites write new names and delete
the old ones. So a reader that asks for the same days again and again (the desk: every page reads
a month of the log) decodes each file once and reads it from memory after. Bounded: the least
recently used batch goes first once ``limit_bytes`` is passed; a day's batches that its listing
no longer holds (compacted away, a purge's old files) are dropped when the day is listed again.

The events of a set of batches, ordered and each id once (what a scan of those days gives before
its filters), are kept too, by the batches' names (``merged``): the latest ``MERGED_KEPT`` sets,
within the same bound. A new batch of a day is a new set: it is merged again when first read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Collection

import polars as pl

MERGED_KEPT = 12  # sets of batches kept merged (a page reads a month, a day, a window of days),
# and frames derived from them (``ParquetEventStore.derived``)


class DecodedBatches:
    """Decoded part files by path, up to ``limit_bytes`` (Polars' estimate of their size)."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.size = 0
        self._frames: OrderedDict[str, pl.DataFrame] = OrderedDict()
        self._by_folder: dict[str, set[str]] = {}
        self._merged: OrderedDict[tuple[str, ...], pl.DataFrame] = OrderedDict()
        self.merged_size = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._frames)

    def __contains__(self, path: object) -> bool:
        return path in self._frames

    def get(self, path: str, decode: Callable[[], pl.DataFrame]) -> pl.DataFrame:
        """The batch at ``path``, decoded by ``decode`` the first time it is asked for."""
        with self._lock:
            frame = self._frames.get(path)
            if frame is not None:
                self._frames.move_to_end(path)
                return frame
        frame = decode()  # outside the lock: other readers go on meanwhile
        with self._lock:
            if path not in self._frames:
                self._frames[path] = frame
                self._by_folder.setdefault(_folder(path), set()).add(path)
                self.size += int(frame.estimated_size())
                self._evict()
        return frame

    def merged(self, paths: tuple[str, ...], merge: Callable[[], pl.LazyFrame]) -> pl.DataFrame:
        """The events of the batches ``paths``, as ``merge`` orders them, merged the first time."""
        with self._lock:
            frame = self._merged.get(paths)
            if frame is not None:
                self._merged.move_to_end(paths)
                return frame
        frame = merge().collect()  # outside the lock, as a batch's decoding
        with self._lock:
            if paths not in self._merged:
                self._merged[paths] = frame
                self.merged_size += int(frame.estimated_size())
                while len(self._merged) > 1 and (
                    len(self._merged) > MERGED_KEPT or self.merged_size > self.limit_bytes
                ):
                    self.merged_size -= int(self._merged.popitem(last=False)[1].estimated_size())
        return frame

    def keep_listed(self, directory: str, listed: Collection[str]) -> None:
        """Drop the batches of ``directory`` (a day's folder) that its listing no longer holds."""
        with self._lock:
            held = self._by_folder.get(directory.rstrip("/"), set())
            for path in [p for p in held if p not in listed]:
                self._drop(path)

    def _evict(self) -> None:
        while self.size > self.limit_bytes and len(self._frames) > 1:
            self._drop(next(iter(self._frames)))

    def _drop(self, path: str) -> None:
        self.size -= int(self._frames.pop(path).estimated_size())
        self._by_folder[_folder(path)].discard(path)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0]
