"""The published brief cites links without tracking parameters or fragment, host lower-cased and no
default port; every other part of a link is as the feed gave it; a copy of a page is cited once."""

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
    assert "https://labnotes.example/2025/08/Northwind-Series-B?id=7&Page=2" in cited  # no fragment
    assert "https://techwire.example/news/brightwater-ai-triage" in cited  # the sample's ?fbclid=, dropped
    assert "https://techwire.example/news/orchard-pippin-2" in cited  # a link without them: as published
    markdown, html = (base / f"{DAY}.md").read_text(), (base / f"{DAY}.html").read_text()
    for rendered in (json.dumps(document), markdown, html):
        assert "utm_" not in rendered.lower() and "fbclid" not in rendered
    assert "(<https://labnotes.example/2025/08/pippin-2-release>)" in markdown
    assert 'href="https://labnotes.example/2025/08/Northwind-Series-B?id=7&Page=2"' in html
    assert 'href="https://techwire.example/news/brightwater-ai-triage"' in html
    assert 'href="https://techwire.example/news/orchard-pippin-2"' in html


def _sample_run(
    tmp_path: Path, edit: dict[str, tuple[str, str]], sources: tuple[str, ...] = ("labnotes", "techwire")
) -> tuple[Path, dict]:
    """The sample's day from ``sources``, run on a copy of its feeds with ``edit`` (source -> (old, new))."""
    from flows.daily import daily_brief

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    for source, (old, new) in edit.items():
        feed = tmp_path / "feeds" / source / f"{DAY}.xml"
        text = feed.read_text()
        assert old in text
        feed.write_text(text.replace(old, new))
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        + "".join(f'[[sources]]\nname = "{s}"\nurl = "file://feeds/{s}/{{date}}.xml"\n' for s in sources)
    )
    daily_brief(DAY, str(config))
    base = Path(load_settings(str(config)).storage.event_store().base) / "briefs"
    return config, json.loads((base / f"{DAY}.json").read_text())


def _pippin(document: dict) -> dict:
    return next(i for i in document["items"] if "Pippin-2" in i["title"])


def test_a_copy_under_another_link_is_cited_once(tmp_path: Path, prefect_harness: None) -> None:
    """The labnotes item under a link of its own: techwire's syndicated copy is the same text at another
    canonical URL (a ``same_content`` duplicate), and the story cites labnotes once and techwire's own
    article once, never the copy."""
    moved = "https://labnotes.example/2025/08/pippin-2-open-weights"
    config, document = _sample_run(tmp_path, {"labnotes": (TRACKED, moved)})
    store = load_settings(str(config)).storage.event_store()
    reasons = [e.payload["reason"] for e in store.read(event_types=["article.duplicate_detected"])]
    assert "same_content" in reasons and "same_url" not in reasons
    pippin = _pippin(document)
    assert [c["source"] for c in pippin["citations"]] == ["labnotes", "techwire"]
    assert [c["url"] for c in pippin["citations"]] == [
        moved,
        "https://techwire.example/news/orchard-pippin-2",
    ]
    markdown = (Path(store.base) / "briefs" / f"{DAY}.md").read_text()
    assert "pippin-2-release" not in markdown.lower() and ":443" not in markdown


def test_a_link_is_shown_with_its_host_lower_cased_no_default_port_and_no_fragment(
    tmp_path: Path, prefect_harness: None
) -> None:
    """techwire alone: its syndicated copy of the lab's page, published as
    ``https://LabNotes.example:443/…/#comments``, is cited as the page's own address, nothing else changed."""
    config, document = _sample_run(tmp_path, {}, sources=("techwire",))
    shown = "https://labnotes.example/2025/08/pippin-2-release/"
    assert shown in [c["url"] for c in _pippin(document)["citations"]]
    base = Path(load_settings(str(config)).storage.event_store().base) / "briefs"
    markdown, html = (base / f"{DAY}.md").read_text(), (base / f"{DAY}.html").read_text()
    assert f"(<{shown}>)" in markdown and f'href="{shown}"' in html
    assert "LabNotes.example" not in markdown + html and "#comments" not in markdown + html
