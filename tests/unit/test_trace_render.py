"""``brief trace``'s printing: 80 columns whatever the text (wide glyphs, long links), and a fetch's
raw body named when the fetch records one."""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime

from ops.trace import Node, Trace, render
from storage.events import Event

AT = datetime(2025, 8, 6, 7, 0, tzinfo=UTC)


def event(n: int, event_type: str, payload: dict, sources: tuple[str, ...] = ()) -> Event:
    return Event(
        event_id=f"{n:032x}",
        event_type=event_type,
        schema_version=1,
        occurred_at=AT,
        brief_date=date(2025, 8, 6),
        run_id="run-1",
        subject_id="st-1",
        source_event_ids=sources,
        produced_by="tests",
        payload=payload,
    )


def fetch(raw: object) -> Event:
    payload = {
        "source": "aibase",
        "url": "https://www.aibase.com/" + "zh/daily/" * 12 + "feed.xml",
        "status": 200,
        "content_hash": "5ec1fee1d551bf96e968769c0cd09031",
        "items": 20,
        "bytes": 19102,
    }
    return event(3, "feed.fetched", payload | ({"raw": raw} if raw else {}))


def chain(fetched: Event) -> Trace:
    title = "MiniMax发布M2.7模型，" * 6
    collected = event(
        2,
        "article.collected",
        {
            "source": "aibase",
            "title": title,
            "url": "https://news.aibase.com/zh/" + "x" * 150,
            "published_at": "2025-08-06T05:00:00+00:00",
            "language": "zh",
        },
        (fetched.event_id,),
    )
    published = event(1, "brief.published", {"version": 2, "items": 1, "stories": ["st-1"]})
    return Trace(date(2025, 8, 6), "st-1", 1, published, (Node(collected, (Node(fetched),)),))


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_lines_keep_to_80_columns_and_links_stay_whole() -> None:
    lines = render(chain(fetch(None)))
    assert max(map(cells, lines)) <= 80, max(lines, key=cells)
    link = "".join(line.lstrip("│├└─ ") for line in lines if "xxxx" in line or "news.aibase" in line)
    assert link == "https://news.aibase.com/zh/" + "x" * 150
    assert "raw body: not kept (the hash names the bytes)" in "\n".join(lines)
    assert lines[0] == "Brief of 2025-08-06, v2, item 1 of 1"


def test_a_fetch_that_kept_its_raw_body_names_it() -> None:
    shown = "\n".join(render(chain(fetch("raw/5ec1fee1d551bf96e968769c0cd09031.xml"))))
    assert "raw body: raw/5ec1fee1d551bf96e968769c0cd09031.xml" in shown
    shown = "\n".join(
        render(chain(fetch({"digest": "5ec1fee1", "path": "raw/5ec1fee1.xml.zst", "media": None})))
    )
    assert "raw body: digest: 5ec1fee1 · path: raw/5ec1fee1.xml.zst" in shown
