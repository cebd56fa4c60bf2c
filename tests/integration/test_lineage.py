"""Lineage on the sample feeds: every derived event of a run names events of the log, and the events
gate fails a run that wrote one naming none."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from storage.events import new_event, utcnow
from storage.lineage import SOURCED
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.conftest import REPO
from tests.runs import hashing_run
from validations.gate import GateFailed

DAY = date(2025, 8, 6)


def sample_run(root: Path, run_id: str = "run-lineage") -> tuple[steps.RunContext, steps.DedupOutcome, dict]:
    """The sample's day collected, deduplicated, scored, analysed, written and asked about."""
    feeds = REPO / "samples" / "feeds"
    sources = "".join(
        f'[[sources]]\nname = "{name}"\nurl = "{(feeds / name).as_uri()}/{{date}}.xml"\n'
        for name in ("labnotes", "techwire")
    )
    # a wide margin: the run asks about the stories near its relevance threshold, so questions
    # (and their lineage) are there to check whatever the shipped model scores the sample
    policy = "[policy]\nrelevance_margin = 0.5\n"
    settings = parse_settings(tomllib.loads(f'[storage]\nroot = "{root}"\n' + sources + policy))
    ctx = hashing_run(ParquetEventStore(str(root)), settings, DAY, run_id)
    for source in settings.sources:
        steps.collect_one(ctx, source.name)
    outcome = steps.dedup_day(ctx)
    document, findings, scores = steps.draft(ctx, outcome)
    steps.raise_questions(ctx, outcome, document, findings, scores)
    return ctx, outcome, document


def test_every_derived_event_of_a_run_names_events_of_the_log(tmp_path: Path) -> None:
    ctx, outcome, document = sample_run(tmp_path)
    steps.publish(ctx, steps.run_gates(ctx, outcome, document)[0])
    events = ctx.store.read([DAY])
    by_id = {e.event_id: e for e in events}
    derived = [e for e in events if e.event_type in SOURCED]
    assert {e.event_type for e in derived} >= {
        "article.collected",
        "story.clustered",
        "story.scored",
        "story.analyzed",
        "confirmation.requested",
    }
    for e in derived:
        assert e.source_event_ids, e
        assert all(i in by_id for i in e.source_event_ids), e
    # each step names the one before it
    expected = {
        "article.collected": {"feed.fetched"},
        "story.clustered": {"article.collected"},
        "story.scored": {"story.clustered"},
        "story.analyzed": {"story.scored"},
    }
    for e in derived:
        if e.event_type in expected:
            assert {by_id[i].event_type for i in e.source_event_ids} == expected[e.event_type], e
    clustered = [e for e in events if e.event_type == "story.clustered"]
    for e in clustered:
        assert sorted(by_id[i].subject_id for i in e.source_event_ids) == sorted(e.payload["members"])
    # the brief names its items' analyses, in the brief's order: stories, not articles
    [published] = [e for e in events if e.event_type == "brief.published"]
    analyses = [by_id[i] for i in published.source_event_ids if by_id[i].event_type == "story.analyzed"]
    assert [a.subject_id for a in analyses] == published.payload["stories"]
    assert all(by_id[i].event_type != "article.collected" for i in published.source_event_ids)


def test_the_events_gate_fails_a_derived_event_of_the_run_without_sources(tmp_path: Path) -> None:
    ctx, outcome, document = sample_run(tmp_path)
    members = list(outcome.stories[0].members)

    def orphan(run_id: str):
        """A clustering that names none of the articles it groups."""
        return new_event(
            "story.clustered",
            {"story_id": f"st-orphan-{run_id}", "members": members, "representative": members[0]},
            brief_date=DAY,
            run_id=run_id,
            subject_id=f"st-orphan-{run_id}",
            produced_by="tests",
            occurred_at=utcnow(),
        )

    # written by a run before lineage was recorded: stored logs stay valid
    ctx.store.append([orphan("run-before-lineage")])
    _, results = steps.run_gates(ctx, outcome, document)
    assert all(r.success for r in results)

    mine = orphan(ctx.run_id)
    ctx.store.append([mine])
    with pytest.raises(GateFailed) as failed:
        steps.run_gates(ctx, outcome, document)
    assert "'events'" in str(failed.value) and "derived_from" in str(failed.value)
    assert mine.event_id in str(failed.value)


def test_a_brief_published_before_lineage_reads_and_trace_says_so(tmp_path: Path) -> None:
    from ops.trace import trace
    from storage.errors import InputError

    ctx, _, document = sample_run(tmp_path)
    story = document.items[0].story_id
    old = new_event(  # as runs wrote it before lineage: no sources in its envelope
        "brief.published",
        {
            "brief_date": DAY.isoformat(),
            "version": 1,
            "items": 1,
            "stories": [story],
            "files": {},
            "content_hash": "old",
        },
        brief_date=DAY,
        run_id="run-before-lineage",
        subject_id=f"brief-{DAY}",
        produced_by="write@1",
        occurred_at=utcnow(),
    )
    ctx.store.append([old])
    [read] = ctx.store.read([DAY], event_types=["brief.published"])
    assert read == old and read.source_event_ids == ()
    with pytest.raises(InputError, match="published before lineage was recorded"):
        trace(ctx.store, ctx.settings, DAY, story)
    steps.publish(ctx, document)  # v2 names its items' analyses
    chain = trace(ctx.store, ctx.settings, DAY, story)
    assert chain.version == 2 and chain.sources[0].event.event_type == "story.analyzed"
