"""The multilingual embedder, real: USE multilingual v3.

A Dutch headline and its English report, a Chinese digest's story and the Hacker News link of
the same launch: near; unrelated headlines: far. Its vectors are cached like the English
model's, under their own name.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from storage.store import ParquetEventStore
from tasks.embed import (
    SHARED_ENV,
    USE_MULTILINGUAL,
    CachedEmbedder,
    SharedVectors,
    UniversalSentenceEncoder,
    text_key,
)

DAY = date(2026, 3, 18)
HEADLINES = [
    "Nintendo stopt met Nintendo Switch-gamevouchers voor goedkopere games",
    "Nintendo discontinues cost-saving game vouchers for Switch Online players",
    "OpenAI发布最强小模型GPT-5.4 mini",
    "GPT‑5.4 Mini and Nano",
    "Seagate maakt hdd's van 30TB op basis van hamr-techniek beschikbaar",
]


def test_a_translation_is_nearer_than_another_story(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SHARED_ENV, str(tmp_path / "vectors.sqlite"))
    vectors = UniversalSentenceEncoder().encode(HEADLINES)
    assert vectors.shape == (5, 512)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = vectors @ vectors.T
    assert cosine[0, 1] > 0.55 and cosine[2, 3] > 0.55  # Dutch-English, Chinese-English
    assert max(cosine[0, 4], cosine[1, 4], cosine[2, 4], cosine[3, 4], cosine[1, 2]) < 0.3
    # remembered on the machine under the model's own name, beside any other model's vectors
    found = SharedVectors(str(tmp_path / "vectors.sqlite")).get(USE_MULTILINGUAL, [text_key(HEADLINES[0])])
    assert np.allclose(found[text_key(HEADLINES[0])], vectors[0])


def test_its_vectors_are_cached_in_the_store_under_its_name(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    first = CachedEmbedder(UniversalSentenceEncoder(), store.fs, store.base, day=DAY)
    vectors = first.encode(HEADLINES[:2])
    again = CachedEmbedder(UniversalSentenceEncoder(), store.fs, store.base, days=[DAY])
    assert np.allclose(again.encode(HEADLINES[1::-1]), vectors[::-1])
    assert (first.computed, again.computed) == (2, 0)
    assert (tmp_path / "cache" / "embeddings" / f"model={USE_MULTILINGUAL}" / f"date={DAY}").is_dir()
