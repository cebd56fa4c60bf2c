"""The shipped editorial model on the real labelled days, through the pipeline with the real embedding model.

These days are the ones the shipped model was fitted on, so this guards the wiring (scores reach the
brief, only core stories lead, a lab's own launch post leads on the day it breaks); the held-out
figures, each day left out of the fit, are in ``bench/editorial.py``.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from tasks import steps
from tasks.settings import parse_settings

SOURCES = {
    "arstechnica": False,
    "techcrunch": False,
    "wired": False,
    "openai_research": True,
    "anthropic_news": True,
}
DAYS = [date(2025, 8, 5), date(2025, 8, 6), date(2025, 8, 7)]


@pytest.fixture(scope="module")
def briefs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[date, dict]:
    root = tmp_path_factory.mktemp("editorial")
    settings = parse_settings(
        {
            "storage": {"root": str(root)},
            "sources": [
                {"name": n, "url": f"{(shared_data / 'feeds' / n).as_uri()}/{{date}}.xml", "on_topic": on}
                for n, on in SOURCES.items()
            ],
        }
    )
    out = {}
    for day in DAYS:
        ctx = steps.make_context(settings, day, f"editorial-{day}")
        for name in SOURCES:
            steps.collect_one(ctx, name)
        published = steps.rebrief(ctx)
        out[day] = json.loads(Path(published.files["json"]).read_text())
    return out


@pytest.mark.slow
def test_a_labs_own_launch_leads_on_the_day_it_breaks(briefs: dict[date, dict]) -> None:
    def top(day: date) -> list[str]:
        return [i["title"] for i in briefs[day]["items"] if i["section"] == "top"]

    assert "Claude Opus 4.1" in top(date(2025, 8, 5))  # only Anthropic's own feed has it that day
    assert "Introducing GPT-5" in top(date(2025, 8, 7))  # only OpenAI's own feed has it that day


@pytest.mark.slow
def test_the_top_section_is_core_and_the_brief_is_ai_news(
    briefs: dict[date, dict], shared_data: Path
) -> None:
    labels = {
        x["id"]: x for x in json.loads((shared_data / "labels" / "relevance-2025-08-05..07.json").read_text())
    }
    shown = on_topic = 0
    for brief in briefs.values():
        assert brief["left_out"]["off_topic"] > 10  # most of a tech feed is not AI news
        for item in brief["items"]:
            assert item["relevance"] in ("core", "related")
            if item["section"] == "top":
                assert item["relevance"] == "core"
            found = [labels[c["url"]] for c in item["citations"] if c["url"] in labels]
            if found:
                shown += 1
                on_topic += any(f["relevance"] != "none" for f in found)
    assert shown > 40 and on_topic / shown >= 0.9
