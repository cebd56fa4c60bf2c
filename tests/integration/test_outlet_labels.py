"""A real Hacker News day: each HN item of the brief names the linked article's host and its points."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

from storage.store import ParquetEventStore
from tasks import steps
from tasks.render import render_html, render_markdown
from tasks.settings import parse_settings
from tests.runs import hashing_run

HN = "hackernews_best_stories"


def test_a_real_hn_day_cites_the_host_and_its_points_and_links_the_discussion(
    shared_data: Path, tmp_path: Path
) -> None:
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path)},
            "sources": [
                {
                    "name": HN,
                    "url": f"{(shared_data / 'aiweb' / 'feeds' / HN).as_uri()}/{{date}}.xml",
                    "kind": "community",
                    "on_topic": True,
                }
            ],
        }
    )
    ctx = hashing_run(ParquetEventStore(str(tmp_path)), settings, date(2026, 3, 18), "run-hn")
    steps.collect_one(ctx, HN)
    outcome = steps.dedup_day(ctx)
    scores = steps.score_stories(ctx, outcome)
    doc = steps.compose(ctx, outcome, steps.analyze_stories(ctx, outcome, scores))

    cited = [c for item in doc.items for c in item.citations]
    linked = [c for c in cited if c.discussion_url]
    assert linked, "a day of HN best stories cites linked articles"
    for c in linked:
        host = urlsplit(c.url).hostname or ""
        label = c.outlet_label or ""
        assert c.kind == "community"
        assert re.fullmatch(r"\S+ · Hacker News \(\d{1,3}(,\d{3})* points?\)", label)
        assert host.removeprefix("www.") in label
        assert label.endswith(f"({(c.evidence or {})['points']:,} points)")
        assert (c.discussion_url or "").startswith("https://news.ycombinator.com/item?id=")
    assert all("hackernews_best_stories" not in (c.outlet_label or "") for c in cited)

    first = linked[0]
    markdown = render_markdown(doc, {})
    html = render_html(doc, {})
    assert f"(<{first.discussion_url}>)" in markdown
    assert f'<a href="{first.discussion_url}" rel="noopener nofollow">discussion</a>' in html
    assert (first.outlet_label or "") in html
    assert "Score:" not in markdown and "Comments:" not in markdown
