"""What readers get holds no operator hint, and cites a syndicated copy of a page once; the run's
own output keeps the hints; the exact duplicates of a day are facts, stored once."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, datetime
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest

from storage.brief import Brief, LeftOut
from storage.events import new_event
from tasks import deliver
from tasks.briefs_feed import FeedEntry, atom_feed
from tasks.channels import Channel
from tasks.dedup import Item, Story
from tasks.render import TEMPLATES, render, view
from tasks.steps.compose import cited_members
from tasks.steps.dedup import DedupOutcome
from tasks.steps.report import RunReport
from tests.factories import hostile_brief

# what an operator types, never what a reader reads
OPERATOR_HINT = re.compile(r"brief (replay|events|stats|run|deliver|review|approve)|--projection|says why")
ZONE = ZoneInfo("Europe/Amsterdam")


def left_outhostile_brief(language: str) -> Brief:
    return hostile_brief(language=language, topic="AI", left_out=LeftOut(off_topic=2))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_operator_hint_in_any_reader_output(language: str) -> None:
    doc = left_outhostile_brief(language)
    outputs = {kind: render(kind, view(doc, {})) for kind in TEMPLATES}  # type: ignore[arg-type]
    for fmt in ("html", "markdown", "text"):
        channel = Channel(name="c", url="json://x", format=fmt)
        for send in (
            deliver.Send(channel, "brief", "direct"),
            deliver.Send(channel, "update", "direct", previous=1),
            deliver.Send(channel, "brief", "deadline"),
        ):
            message = deliver.compose_message(
                send, doc, {}, zone=ZONE, until=datetime(2025, 8, 6, tzinfo=UTC)
            )
            outputs[f"{fmt} {send.kind} {send.released}"] = message.subject + "\n" + message.body
    moment = datetime(2025, 8, 6, 6, tzinfo=UTC)
    outputs["feed"] = atom_feed(
        [FeedEntry("2025-08-06", 1, moment, moment, doc)], feed_id="urn:x", title="AI", category_labels={}
    ).decode()
    footer = (
        "2 stories off the topic (AI) left out." if language == "en" else "2 条与主题（AI）无关的新闻未收录。"
    )
    for name, text in outputs.items():
        assert not OPERATOR_HINT.search(text), (name, OPERATOR_HINT.search(text))
        # how many stories the topic filter left out is the desk's to show (Today links it to Left
        # out), not the readers': they cannot see those stories or act on the count
        assert footer not in text and "off the topic" not in text, name


def test_the_run_output_keeps_the_hint() -> None:
    settings = SimpleNamespace(config_option="")  # the default config: no --config to copy
    report = RunReport(SimpleNamespace(day=date(2025, 8, 6), settings=settings))  # type: ignore[arg-type]
    report.off_topic = 2
    assert report.scored(5, "AI") == "5 stories on AI, 2 left out"
    assert (
        report.left_out_hint() == "2 left out: 'brief replay --date 2025-08-06 --projection scores' says why"
    )
    settings.config_option = " --config team.toml"  # another: the command runs as printed
    assert report.left_out_hint() == (
        "2 left out: 'brief replay --date 2025-08-06 --projection scores --config team.toml' says why"
    )
    report.off_topic = 0
    assert report.scored(5, "AI") == "5 stories on AI, 0 left out" and report.left_out_hint() is None


def item(article_id: str, source: str, url: str, kind: str = "news") -> Item:
    return Item(article_id, source, "Pippin-2", "", url, f"hash-{article_id}", None, url=url, kind=kind)


def test_a_syndicated_copy_is_not_a_second_source_but_a_discussion_is() -> None:
    page = "https://labnotes.example/2025/08/pippin-2-release"
    items = {
        i.article_id: i
        for i in (
            item("art-1", "labnotes", page),
            item("art-2", "techwire", page),  # the syndicated copy: the same page
            item("art-3", "hn", page, kind="community"),  # a discussion of it: points, a thread
            item("art-4", "techwire", "https://techwire.example/news/pippin-2"),  # its own report
        )
    }
    window = (datetime(2025, 8, 5, tzinfo=UTC), datetime(2025, 8, 7, tzinfo=UTC))
    outcome = DedupOutcome(
        items,
        [Story(("art-1", "art-2", "art-3", "art-4"))],
        {},
        window,
        same_url={"art-2": "art-1", "art-3": "art-1"},
    )
    assert cited_members(outcome.stories[0], outcome) == ["art-1", "art-3", "art-4"]
    # whichever the duplicates were recorded against (here the discussion, first by id), the page's
    # first news article is cited and its copy is not
    outcome = DedupOutcome(
        items,
        [Story(("art-3", "art-1", "art-2", "art-4"))],
        {},
        window,
        same_url={"art-1": "art-3", "art-2": "art-3"},
    )
    assert cited_members(outcome.stories[0], outcome) == ["art-3", "art-1", "art-4"]


def test_a_copy_under_another_link_is_not_a_second_source() -> None:
    """The same text at another canonical URL (a ``same_content`` duplicate) is one page: its first
    news article is cited; a discussion of it, and an outlet's own report, are cited all the same."""
    lab = item("art-1", "labnotes", "https://labnotes.example/2025/08/pippin-2")
    copy = replace(
        item("art-2", "techwire", lab.url), url="https://labnotes.example/2025/08/pippin-2-release"
    )
    copy = replace(copy, canonical_url=copy.url, content_hash=lab.content_hash)
    talk = replace(
        item("art-3", "hn", "https://news.example/item?id=1", kind="community"), content_hash=lab.content_hash
    )
    own = item("art-4", "techwire", "https://techwire.example/news/pippin-2")
    items = {i.article_id: i for i in (lab, copy, talk, own)}
    window = (datetime(2025, 8, 5, tzinfo=UTC), datetime(2025, 8, 7, tzinfo=UTC))
    outcome = DedupOutcome(items, [Story(("art-1", "art-2", "art-3", "art-4"))], {}, window)
    assert cited_members(outcome.stories[0], outcome) == ["art-1", "art-3", "art-4"]
    # the copy first: it is the one cited, and the lab's later page is not
    outcome = DedupOutcome(items, [Story(("art-2", "art-1", "art-4"))], {}, window)
    assert cited_members(outcome.stories[0], outcome) == ["art-2", "art-4"]


def test_an_exact_duplicate_is_one_fact_whoever_runs_the_day() -> None:
    def detected(reason: str, run_id: str, policy: str) -> str:
        return new_event(
            "article.duplicate_detected",
            {"article_id": "art-2", "duplicate_of": "art-1", "reason": reason},
            brief_date=date(2025, 8, 6),
            run_id=run_id,
            subject_id="art-2",
            produced_by="dedup.exact@1",
            occurred_at=datetime.now(UTC),
            policy_version=policy,
        ).event_id

    for exact in ("same_url", "same_content"):
        assert detected(exact, "run-1", "p1") == detected(exact, "run-2", "p2")
    # that an article was news on an earlier day is the run's judgement, under its window
    assert detected("seen_before", "run-1", "p1") != detected("seen_before", "run-2", "p1")


def corrected_brief(language: str) -> Brief:
    """A brief whose lead's headline was corrected, and a second item retracted, after
    readers had it."""
    from storage.payloads import BriefCorrected, StoryRetracted
    from tasks.write import apply_editor_acts
    from tests.factories import brief, brief_item

    original = brief(
        brief_item("st-1", "Orchard raises $12M", summary="Old summary text.", section="top"),
        brief_item("st-2", "TinyEval ships", summary="s", section="quick_link"),
        language=language,
    )
    fix = {
        "title": BriefCorrected(
            story_id="st-1",
            field="title",
            value="Orchard raises $21M",
            previous="Orchard raises $12M",
            by="ann",
        ),
    }
    gone = {"st-2": StoryRetracted(story_id="st-2", title="TinyEval ships", note="not news", by="ann")}
    return apply_editor_acts(original, {"st-1": fix}, gone).model_copy(update={"version": 3})


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_reader_output_carries_the_correction_and_the_retraction(language: str) -> None:
    """What docs/delivery.md promises: a correction made after readers had the brief carries the line
    naming the text they had, in the feed as in the files and every channel's message."""
    doc = corrected_brief(language)
    line = doc.items[0].correction
    assert line and "Orchard raises $12M" in line
    outputs: dict[str, str] = {kind: render(kind, view(doc, {})) for kind in TEMPLATES}  # type: ignore[arg-type]
    for fmt in ("html", "markdown", "text"):
        channel = Channel(name="c", url="json://x", format=fmt)
        send = deliver.Send(channel, "update", "direct", previous=2)
        outputs[f"{fmt} update"] = deliver.compose_message(send, doc, {}, zone=ZONE).body
    moment = datetime(2025, 8, 6, 6, tzinfo=UTC)
    feed = atom_feed(
        [FeedEntry("2025-08-06", 3, moment, moment, doc)], feed_id="urn:x", title="AI", category_labels={}
    ).decode()
    from xml.etree import ElementTree

    content = ElementTree.fromstring(feed).find(".//{http://www.w3.org/2005/Atom}content")
    assert content is not None and content.text
    outputs["feed"] = content.text  # the entry's HTML, as a feed reader shows it
    for name, text in outputs.items():
        plain = text.replace("\\", "").replace("&#34;", '"')
        assert line.split("“")[0] in plain and "Orchard raises $12M" in plain, name
        assert "TinyEval ships" in plain and "not news" in plain, name
