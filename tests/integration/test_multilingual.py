"""The multilingual embedder, real: USE multilingual v3 compares a pair with non-English text.

A Dutch headline and its English report, a Chinese digest's story and the Hacker News link of
the same launch: near; unrelated headlines: far. Its vectors are cached like the English
model's, under their own name; a day of English text never loads it.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest

from storage.store import ParquetEventStore
from tasks import steps
from tasks.embed import (
    SHARED_ENV,
    USE_MULTILINGUAL,
    CachedEmbedder,
    SharedVectors,
    UniversalSentenceEncoder,
    text_key,
)
from tasks.settings import PolicySettings, parse_settings
from tests.runs import hashing_run

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
    threshold = PolicySettings().cross_language_threshold
    assert cosine[0, 1] > threshold and cosine[2, 3] > threshold  # Dutch-English, Chinese-English
    assert max(cosine[0, 4], cosine[1, 4], cosine[2, 4], cosine[3, 4], cosine[1, 2]) < 0.3
    # remembered on the machine under the model's own name, beside any other model's vectors
    found = SharedVectors(str(tmp_path / "vectors.sqlite")).get(USE_MULTILINGUAL, [text_key(HEADLINES[0])])
    assert np.allclose(found[text_key(HEADLINES[0])], vectors[0])


def test_its_vectors_are_cached_in_the_store_under_its_name(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path))
    first = CachedEmbedder(
        UniversalSentenceEncoder(), store.tree.caches.embeddings(USE_MULTILINGUAL), day=DAY
    )
    vectors = first.encode(HEADLINES[:2])
    again = CachedEmbedder(
        UniversalSentenceEncoder(), store.tree.caches.embeddings(USE_MULTILINGUAL), days=[DAY]
    )
    assert np.allclose(again.encode(HEADLINES[1::-1]), vectors[::-1])
    assert (first.computed, again.computed) == (2, 0)
    assert (tmp_path / "cache" / "embeddings" / f"model={USE_MULTILINGUAL}" / f"date={DAY}").is_dir()


def run_context(
    tmp_path: Path, shared_data: Path, sources: list[tuple[str, str, str]], policy: dict | None = None
) -> steps.RunContext:
    feeds = shared_data / "aiweb" / "feeds"
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path)},
            **({"policy": policy} if policy else {}),
            "sources": [
                {
                    "name": name,
                    "url": f"{(feeds / name).as_uri()}/{{date}}.xml",
                    "kind": kind,
                    "language": language,
                }
                for name, kind, language in sources
            ],
        }
    )
    # the multilingual model's vectors are cached in the store (the hashing ones beside them)
    return hashing_run(
        str(tmp_path), settings, DAY, "run-multilingual", multilingual=UniversalSentenceEncoder(), cached=True
    )


def test_a_chinese_digest_story_joins_the_hacker_news_link_of_its_launch(
    tmp_path: Path, shared_data: Path
) -> None:
    ctx = run_context(
        tmp_path,
        shared_data,
        [("aibase_daily", "digest", "zh"), ("hackernews_best_stories", "community", "en")],
    )
    for name in ("aibase_daily", "hackernews_best_stories"):
        steps.collect_one(ctx, name)
    outcome = steps.dedup_day(ctx)
    titles = {a: outcome.items[a].title for s in outcome.stories for a in s.members}
    (launch,) = [s for s in outcome.stories if any(titles[a] == "GPT‑5.4 Mini and Nano" for a in s.members)]
    assert sorted(titles[a] for a in launch.members) == [
        "GPT‑5.4 Mini and Nano",
        "OpenAI发布最强小模型GPT-5.4 mini",
    ]
    producers = ctx.store.read([DAY], event_types=["story.clustered"])
    assert {e.produced_by for e in producers} == {f"dedup.embedding@1:hashing-384+{USE_MULTILINGUAL}"}


def test_a_day_of_english_text_never_loads_the_multilingual_model(tmp_path: Path, shared_data: Path) -> None:
    ctx = run_context(tmp_path, shared_data, [("hackernews_best_stories", "community", "en")])
    steps.collect_one(ctx, "hackernews_best_stories")
    assert steps.dedup_day(ctx).stories
    assert ctx.multilingual is not None and ctx.multilingual.computed == 0
    producers = ctx.store.read([DAY], event_types=["story.clustered"])
    assert {e.produced_by for e in producers} == {"dedup.embedding@1:hashing-384"}


def test_the_settings_name_the_multilingual_model_or_none(tmp_path: Path) -> None:
    base = {"storage": {"root": str(tmp_path)}}
    default = steps.make_context(parse_settings(base), DAY)
    assert default.multilingual is not None and default.multilingual.name == USE_MULTILINGUAL
    assert default.embedder.name == "all-MiniLM-L6-v2"  # relevance keeps its embedder
    off = steps.make_context(parse_settings({**base, "embedding": {"multilingual": ""}}), DAY)
    assert off.multilingual is None
    everywhere = {**base, "embedding": {"model": USE_MULTILINGUAL}}
    one = steps.make_context(parse_settings(everywhere), DAY)
    assert one.multilingual is one.embedder


def test_the_editorial_readers_vectors_are_shared_on_the_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run's reader (multilingual-e5) is embedded once per machine, as the run's models are: a
    learn, an evaluation and a replay over other stores of the same days do not compute it again."""
    from tasks.embed_multilingual import MULTILINGUAL_MODEL, MultilingualEmbedder

    monkeypatch.setenv(SHARED_ENV, str(tmp_path / "vectors.sqlite"))
    reader = steps.bootstrap(parse_settings({"storage": {"root": str(tmp_path / "store")}})).models.reader
    assert reader is not None and reader.name == MULTILINGUAL_MODEL
    vectors = reader.encode(HEADLINES[:3])
    assert np.allclose(vectors, MultilingualEmbedder().encode(HEADLINES[:3]), atol=1e-6)
    found = SharedVectors(str(tmp_path / "vectors.sqlite")).get(
        MULTILINGUAL_MODEL, [text_key(h) for h in HEADLINES[:3]]
    )
    assert np.array_equal(np.stack([found[text_key(h)] for h in HEADLINES[:3]]), vectors)


def test_a_pair_model_fitted_on_other_embedding_models_leaves_the_decision_to_the_rules(
    tmp_path: Path, shared_data: Path
) -> None:
    """The shipped pair model's weights are those of MiniLM's and USE's cosines: under another
    embedder (here the hashing one) the rules decide, and the stories say so."""
    sources = [("aibase_daily", "digest", "zh"), ("hackernews_best_stories", "community", "en")]
    ctx = run_context(tmp_path, shared_data, sources, policy={"story_model": "builtin:stories"})
    for name in ("aibase_daily", "hackernews_best_stories"):
        steps.collect_one(ctx, name)
    steps.dedup_day(ctx)
    clustered = ctx.store.read([DAY], event_types=["story.clustered"])
    assert clustered and {e.payload["decided_by"] for e in clustered} == {"rules"}
    assert {e.produced_by for e in clustered} == {f"dedup.embedding@1:hashing-384+{USE_MULTILINGUAL}"}
