"""No real Chinese report is taken for text that talks to an AI system.

Every item of every snapshot of the Chinese feeds in ``../shared/data`` (aibase's daily digest
and DeepSeek's news of March 2026, the four WeChat accounts of June 2021) is checked twice: as
the pipeline collects it (a digest split into its stories) and as the feed wrote the entry
(title, summary and content in full).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from tasks.collect import Fetched, Source, feed_events, parse_feed
from tasks.injection import looks_like_instructions
from tasks.normalize import clean_text

CHINESE_FEEDS = [
    ("aiweb/feeds/aibase_daily", "digest"),
    ("aiweb/feeds/deepseek_news", "lab"),
    ("feeds/36kr", "news"),
    ("feeds/jiqizhixin", "news"),
    ("feeds/qbitai", "news"),
    ("feeds/xinzhiyuan", "news"),
]
_HAN = re.compile(r"[\u4e00-\u9fff]")


def texts(path: Path, kind: str) -> list[str]:
    """The item texts the pipeline checks, then each entry's whole text as the feed wrote it."""
    events = feed_events(
        Source(path.parent.name, path.as_uri(), kind=kind),
        date(2026, 3, 18),
        "run-zh",
        at=datetime(2026, 3, 18, tzinfo=UTC),
        url=path.as_uri(),
        fetched=Fetched(path.read_bytes(), 200),
    )
    collected = [
        f"{e.payload['title']} {e.payload['summary']}" for e in events if e.event_type == "article.collected"
    ]
    written = [
        " ".join(
            clean_text(part)
            for part in [entry.get("title"), entry.get("summary")]
            + [c.get("value") for c in entry.get("content") or []]
        )
        for entry in parse_feed(path.read_bytes()).entries
    ]
    return collected + written


@pytest.mark.parametrize(("folder", "kind"), CHINESE_FEEDS, ids=[f for f, _ in CHINESE_FEEDS])
def test_no_item_of_a_real_chinese_feed_is_flagged(shared_data: Path, folder: str, kind: str) -> None:
    files = sorted((shared_data / folder).glob("*.xml"))
    checked = [(f.name, t) for f in files for t in texts(f, kind)]
    flagged = [(name, t[:80]) for name, t in checked if looks_like_instructions(t)]
    assert flagged == []
    assert len(files) >= 2 and sum(1 for _, t in checked if _HAN.search(t)) >= 40  # Chinese, and plenty
