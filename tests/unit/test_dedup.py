from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import numpy as np

from tasks.dedup import DedupPolicy, Item, cluster, news_window, pairwise_scores
from tasks.embed import CachedEmbedder, HashingEmbedder


def item(
    aid: str, source: str, title: str, summary: str = "", url: str | None = None, h: str | None = None
) -> Item:
    return Item(
        aid,
        source,
        title,
        summary,
        url or f"https://{source}.example/{aid}",
        h or aid,
        datetime(2025, 8, 6, 9, tzinfo=UTC),
    )


def run(items: list[Item], **policy: object) -> list[tuple[str, ...]]:
    vectors = HashingEmbedder().encode([i.text for i in items])
    return sorted(s.members for s in cluster(items, vectors, DedupPolicy(**policy)).stories)  # type: ignore[arg-type]


def test_exact_duplicates_by_url_and_content() -> None:
    items = [
        item("a", "s1", "One", url="https://x/1"),
        item("b", "s2", "Two", url="https://x/1"),
        item("c", "s3", "Three", h="same"),
        item("d", "s4", "Four", h="same"),
    ]
    assert run(items, near_duplicate_threshold=1.01) == [("a", "b"), ("c", "d")]


def test_an_organisation_the_other_never_mentions_keeps_stories_apart() -> None:
    launch = item("a", "ars", "OpenAI releases open model gpt-oss", "OpenAI released two open-weight models")
    partner = item(
        "b", "tc", "Microsoft brings OpenAI open model gpt-oss to Windows", "OpenAI gpt-oss on Windows"
    )
    assert run([launch, partner], near_duplicate_threshold=0.1) == [("a",), ("b",)]
    assert run([launch, partner], near_duplicate_threshold=0.1, organisation_conflicts=False) == [("a", "b")]


def test_one_outlet_reports_once_unless_nearly_identical() -> None:
    a = item("a", "tc", "Constitution pages vanish from website")
    b = item("b", "tc", "Library explains why Constitution pages vanished")
    assert run([a, b], near_duplicate_threshold=0.1, same_source_threshold=0.99) == [("a",), ("b",)]


def test_non_english_items_join_on_shared_names() -> None:
    a = item("a", "qbitai", "PyTorch 1.9发布！移动端疯狂更新")
    b = item("b", "jiqizhixin", "PyTorch 1.9发布，支持新API")
    c = item("c", "36kr", "五菱汽车与快递公司合作造车")
    assert run([a, b, c]) == [("a", "b"), ("c",)]


def test_clustering_is_deterministic_and_idempotent() -> None:
    topics = [
        "Orchard Labs releases the Pippin-2 language model",
        "Harbor Robotics ships its first warehouse arm",
        "Brightwater council pilots emergency call triage",
        "Lakeside University publishes a benchmark of tiny models",
        "Northwind raises a Series B round from Harbor Ventures",
        "Solar farm opens on the old airfield in Kestrel Bay",
    ]
    items = [item(str(i), f"s{i % 3}", topics[i // 2] + (" today" if i % 2 else "")) for i in range(12)]
    first = run(items)
    assert len(first) == len(topics)  # one story per topic: the data can tell a second pass apart
    assert run(list(reversed(items))) == first
    # idempotent: clustering the stories' representatives again finds nothing more to join
    by_id = {i.article_id: i for i in items}
    representatives = [by_id[members[0]] for members in first]
    assert run(representatives) == [
        (r.article_id,) for r in sorted(representatives, key=lambda i: i.article_id)
    ]


def test_window_is_hours_before_the_end_of_the_day_in_the_zone() -> None:
    start, end = news_window(date(2025, 8, 6), ZoneInfo("Europe/Amsterdam"), 48)
    assert end == datetime(2025, 8, 6, 22, tzinfo=UTC) and (end - start).days == 2


def test_pairwise_scores() -> None:
    assert pairwise_scores([("a", "b"), ("c",)], {"a": "1", "b": "1", "c": "1"}) == (1, 0, 2)


def test_embedding_cache_never_recomputes(tmp_path) -> None:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(str(tmp_path))
    first = CachedEmbedder(HashingEmbedder(), store.fs, store.base)
    vectors = first.encode(["alpha", "beta"])
    again = CachedEmbedder(HashingEmbedder(), store.fs, store.base)  # a new process, same cache
    assert np.allclose(again.encode(["beta", "alpha"]), vectors[::-1])
    assert (first.computed, again.computed) == (2, 0)
