"""The embedding cache under the root: ``cache/embeddings/model=<slug>/date=D/part-<id>.parquet``,
one folder per model (``tasks/embed.py:CachedEmbedder`` reads and fills it), each part a table of
``key`` (the text's hash, ``tasks/embed.py:text_key``) and ``vector``. Parts written before the
cache was partitioned by day lie directly under the model's folder and are always read."""

from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from storage.root.files import Files

EMBEDDINGS = "cache/embeddings"


def model_slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model)


def _part_name() -> str:
    return f"part-{uuid.uuid4().hex}.parquet"


def part_vectors(table: pa.Table) -> tuple[list[str], np.ndarray]:
    """A part's keys and its vectors as one float32 array, a row each."""
    return table.column("key").to_pylist(), np.asarray(table.column("vector").to_pylist(), dtype=np.float32)


KEPT_PARTS = 128  # the parts read last, kept as arrays: a backfill's next date reads most again
_kept: OrderedDict[tuple[str, str, int, int | None], tuple[list[str], np.ndarray]] = OrderedDict()
_kept_lock = threading.Lock()


class EmbeddingCache:
    """One model's vectors, by day."""

    def __init__(self, files: Files, model: str) -> None:
        self.files = files
        self.directory = files.path(EMBEDDINGS, f"model={model_slug(model)}")

    def folders(self, days: Sequence[date] | None = None) -> list[str]:
        """The folders a reader of ``days`` (every day when None) loads: the model's own, and its days'."""
        wanted = None if days is None else {f"date={d.isoformat()}" for d in days}
        folders = [self.directory]
        for info in self.files.listing(self.directory):
            is_day = info.type == pafs.FileType.Directory and info.base_name.startswith("date=")
            if is_day and (wanted is None or info.base_name in wanted):
                folders.append(info.path)
        return folders

    def parts(self, days: Sequence[date] | None = None) -> Iterator[pa.Table]:
        """Every stored part a reader of ``days`` loads."""
        for folder in self.folders(days):
            for info in self.files.listing(folder):
                if info.base_name.startswith("part-") and info.base_name.endswith(".parquet"):
                    yield pq.read_table(info.path, filesystem=self.files.fs)

    def vectors(self, days: Sequence[date] | None = None) -> Iterator[tuple[list[str], np.ndarray]]:
        """Every stored part a reader of ``days`` loads, as its keys and vectors (``part_vectors``).

        A part is a file of its own that is never written again (a new part replaces one): one
        read lately, with the same size and time, is not read again (``KEPT_PARTS``)."""
        for folder in self.folders(days):
            for info in self.files.listing(folder):
                if not (info.base_name.startswith("part-") and info.base_name.endswith(".parquet")):
                    continue
                key = (self.files.fs.type_name, info.path, info.size or 0, info.mtime_ns)
                with _kept_lock:
                    held = _kept.get(key)
                    if held is not None:
                        _kept.move_to_end(key)
                if held is None:
                    held = part_vectors(pq.read_table(info.path, filesystem=self.files.fs))
                    with _kept_lock:
                        _kept[key] = held
                        while len(_kept) > KEPT_PARTS:
                            _kept.popitem(last=False)
                yield held

    def write(self, day: date | None, table: pa.Table) -> str:
        """A new part with ``table``, in ``day``'s folder (the model's own when None)."""
        folder = self.directory if day is None else f"{self.directory}/date={day.isoformat()}"
        return self.files.write_with(
            f"{folder}/{_part_name()}", lambda out: pq.write_table(table, out, compression="zstd")
        )


class Caches:
    def __init__(self, files: Files) -> None:
        self.files = files
        self.folder = files.path(EMBEDDINGS)

    def embeddings(self, model: str) -> EmbeddingCache:
        """The embedding cache of the model named ``model`` (an embedder's ``name``)."""
        return EmbeddingCache(self.files, model)

    def drop_embeddings(self, keys: Iterable[str]) -> int:
        """Every model's cached vectors of the texts keyed ``keys`` removed (a part that held one is
        written again without it, then goes); the number of rows removed."""
        keys = set(keys)
        removed = 0
        fs = self.files.fs
        for info in self.files.files_in(self.folder, recursive=True):
            if not info.base_name.endswith(".parquet"):
                continue
            if not keys & set(
                pq.read_table(info.path, columns=["key"], filesystem=fs).column("key").to_pylist()
            ):
                continue
            table = pq.read_table(info.path, filesystem=fs)
            kept = table.filter([k not in keys for k in table.column("key").to_pylist()])
            removed += table.num_rows - kept.num_rows
            if kept.num_rows:
                sink = pa.BufferOutputStream()
                pq.write_table(kept, sink, compression="zstd")
                self.files.write(f"{info.path.rsplit('/', 1)[0]}/{_part_name()}", sink.getvalue())
            self.files.delete(info.path)
        return removed
