"""``brief trace``'s printing: 80 columns whatever the text (wide glyphs; a long link whole on
its line), and a fetch's raw body named when the fetch records one."""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime

from flows.views.trace import render
from ops.trace import Node, Trace
from storage.events import Event
from storage.registry import REGISTRY

AT = datetime(2025, 8, 6, 7, 0, tzinfo=UTC)


def event(n: int, event_type: str, payload: dict, sources: tuple[str, ...] = ()) -> Event:
    return Event(
        event_id=f"{n:032x}",
        event_type=event_type,
        schema_version=REGISTRY.spec(event_type).latest_version,
        occurred_at=AT,
        brief_date=date(2025, 8, 6),
        run_id="run-1",
        subject_id="st-1",
        source_event_ids=sources,
        produced_by="tests",
        payload=payload,
    )


def fetch() -> Event:
    payload = {
        "source": "aibase",
        "url": "https://www.aibase.com/" + "zh/daily/" * 12 + "feed.xml",
        "status": 200,
        "content_hash": "5ec1fee1d551bf96e968769c0cd09031",
        "items": 20,
        "bytes": 19102,
    }
    return event(3, "feed.fetched", payload)


def chain(fetched: Event, raw: object = None) -> Trace:
    title = "MiniMax发布M2.7模型，" * 6
    collected = event(
        2,
        "article.collected",
        {
            "article_id": "art-0001",
            "source": "aibase",
            "title": title,
            "url": "https://news.aibase.com/zh/" + "x" * 150,
            "canonical_url": "https://news.aibase.com/zh/" + "x" * 150,
            "content_hash": "c0ffee01",
            "published_at": "2025-08-06T05:00:00+00:00",
            "language": "zh",
        },
        (fetched.event_id,),
    )
    published = event(
        1,
        "brief.published",
        {
            "brief_date": "2025-08-06",
            "version": 2,
            "items": 1,
            "stories": ["st-1"],
            "files": {"json": "briefs/2025-08-06.json"},
            "content_hash": "c0ffee",
        },
    )
    return Trace(date(2025, 8, 6), "st-1", 1, published, (Node(collected, (Node(fetched, raw=raw),)),))


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_lines_keep_to_80_columns_and_links_stay_whole() -> None:
    """Every line in 80 columns but a link, which is whole on its own line, to be copied."""
    lines = render(chain(fetch()))
    links = [line for line in lines if "https://" in line]
    others = [line for line in lines if line not in links]
    assert max(map(cells, others)) <= 80, max(others, key=cells)
    assert [line.lstrip("│├└─ ") for line in links if "news.aibase" in line] == [
        "https://news.aibase.com/zh/" + "x" * 150
    ]  # on one line
    assert "raw body: not kept (the hash names the bytes)" in "\n".join(lines)
    assert lines[0] == "Brief of 2025-08-06, v2, item 1 of 1"


def test_a_fetch_that_kept_its_raw_body_names_it() -> None:
    shown = "\n".join(render(chain(fetch(), "raw/5ec1fee1d551bf96e968769c0cd09031.xml")))
    assert "raw body: raw/5ec1fee1d551bf96e968769c0cd09031.xml" in shown
    shown = "\n".join(
        render(chain(fetch(), {"digest": "5ec1fee1", "path": "raw/5ec1fee1.xml.zst", "media": None}))
    )
    assert "raw body: digest: 5ec1fee1 · path: raw/5ec1fee1.xml.zst" in shown


def clustered(n: int, sources: tuple[Node, ...]) -> Node:
    payload = {
        "story_id": f"st-{100 + n:04d}",
        "members": [f"art-{k:04d}" for k in range(3)],
        "representative": "art-0000 " + "(the article the story is named after, by its id) " * 2,
        "follow_up_of": f"st-{n:04d}",
    }
    return Node(event(100 + n, "story.clustered", payload), sources)


def test_every_line_keeps_to_80_columns_at_any_depth() -> None:
    """A tree deeper than 80 columns can indent (a story continued day after day) still prints in 80:
    its outer levels are dropped in steps, the sentences wrapped between words, links whole."""
    fetched = fetch()
    root = chain(fetched).sources[0]  # article.collected over its fetch, with wide glyphs and a link
    node = root
    for n in range(40):
        node = clustered(n, (node, clustered(1000 + n, ())) if n % 3 else (node,))
    deep = Trace(date(2025, 8, 6), "st-1", 1, chain(fetched).published, (node,))
    lines = render(deep)
    others = [line for line in lines if "https://" not in line]  # a link is whole on its line
    assert max(map(cells, others)) <= 80, max(others, key=cells)
    assert sum(line.startswith("┆") for line in lines) > 10  # the deep levels, shown without the outer
    link = "".join(line.lstrip("│├└─┆ ") for line in lines if "xxxx" in line or "news.aibase" in line)
    assert link == "https://news.aibase.com/zh/" + "x" * 150
    said = " ".join(w for line in lines for w in line.lstrip("│├└─┆ ").split())
    assert (
        said.count("representative art-0000 (the article the story is named after, by its id) (the")
        == 40 + 26
    )
    # a node's lines stay aligned with each other: its details start under its branch
    for k, line in enumerate(lines[:-1]):
        if "story.clustered" in line:
            at = line.index("story.clustered")
            below = lines[k + 1]
            assert below[at : at + 3].strip(" │") == "" and below[at + 3 :].startswith("representative")


def test_a_score_shows_every_reason_the_desk_and_replay_show() -> None:
    reasons = [
        "about AI: 'model', 'release' (relevance 0.91)",
        "a lab's own post: core",
        "three outlets carried it (importance 0.74)",
    ]
    scored = event(
        4,
        "story.scored",
        {
            "story_id": "st-1",
            "topic": "AI",
            "relevance": 0.91,
            "core": 0.8,
            "outcome": "core",
            "importance": 0.74,
            "evidence": {},
            "reasons": reasons,
            "model": "builtin:default",
            "representative": "art-0001",
            "title": "Pippin-2 is out",
        },
    )
    base = chain(fetch())
    lines = render(Trace(base.day, base.story, 1, base.published, (Node(scored),)))
    flowed = " ".join(line.lstrip("│├└─ ") for line in lines)
    assert flowed.count("why: ") == 3, lines
    for reason in reasons:
        assert f"why: {reason}" in flowed, lines
