"""The published brief cites links without tracking parameters; every other link is as the feed gave it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tasks.settings import load_settings
from tests.conftest import REPO

DAY = "2025-08-06"
TRACKED = "https://labnotes.example/2025/08/pippin-2-release?utm_source=rss&amp;utm_medium=feed"
MIXED = (
    "https://labnotes.example/2025/08/Northwind-Series-B?id=7&amp;UTM_Campaign=x&amp;Page=2&amp;fbclid=z#Sec"
)


def test_citations_drop_tracking_parameters_in_every_format(tmp_path: Path, prefect_harness: None) -> None:
    from flows.daily import daily_brief

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    feed = tmp_path / "feeds" / "labnotes" / f"{DAY}.xml"
    text = feed.read_text()
    assert TRACKED in text  # the sample publishes a link with utm_ parameters
    feed.write_text(text.replace("https://labnotes.example/2025/08/northwind-series-b", MIXED))
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        + "".join(
            f'[[sources]]\nname = "{s}"\nurl = "file://feeds/{s}/{{date}}.xml"\n'
            for s in ("labnotes", "techwire")
        )
    )
    daily_brief(DAY, str(config))
    base = Path(load_settings(str(config)).storage.event_store().base) / "briefs"
    document = json.loads((base / f"{DAY}.json").read_text())
    cited = {c["url"] for i in document["items"] for c in i["citations"]}
    assert "https://labnotes.example/2025/08/pippin-2-release" in cited
    assert "https://labnotes.example/2025/08/Northwind-Series-B?id=7&Page=2#Sec" in cited
    assert "https://techwire.example/news/brightwater-ai-triage" in cited  # the sample's ?fbclid=, dropped
    assert "https://techwire.example/news/orchard-pippin-2" in cited  # a link without them: as published
    markdown, html = (base / f"{DAY}.md").read_text(), (base / f"{DAY}.html").read_text()
    for rendered in (json.dumps(document), markdown, html):
        assert "utm_" not in rendered.lower() and "fbclid" not in rendered
    assert "(<https://labnotes.example/2025/08/pippin-2-release>)" in markdown
    assert 'href="https://labnotes.example/2025/08/Northwind-Series-B?id=7&Page=2#Sec"' in html
    assert 'href="https://techwire.example/news/brightwater-ai-triage"' in html
    assert 'href="https://techwire.example/news/orchard-pippin-2"' in html
