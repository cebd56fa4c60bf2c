"""Analyze, write, fact-check, gate and publish a day's brief."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC

import polars as pl

from storage.atomic import exclusive, write_bytes
from storage.store import ParquetEventStore
from tasks import analyze as an
from tasks import dedup as dd
from tasks import factcheck as fc
from tasks import write as wr
from tasks.steps.answers import answered
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.score import Scored


def analyze_stories(ctx: RunContext, outcome: DedupOutcome, scores: Mapping[str, Scored]) -> list[dict]:
    """Category and anchored facts of every story on the topic; off-topic stories stop here."""
    policy = ctx.settings.policy
    rules = [an.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
    analyses, events = [], []
    for story in outcome.stories:
        scored = scores[story.story_id]
        if not scored.kept:
            continue
        members = [outcome.items[a] for a in story.members]
        story_id = scored.story_id
        category, confidence = an.categorise(
            " ".join(f"{m.title} {m.title} {m.summary}" for m in members), rules
        )
        if story.representative in outcome.corrected_category:  # a person said so
            category, confidence = outcome.corrected_category[story.representative], 1.0
        facts = an.dedupe_facts([f for m in members for f in an.extract_facts(m, ctx.day.year)])
        payload = {
            "story_id": story_id,
            "category": category,
            "confidence": confidence,
            "importance": scored.importance,
            "facts": [f.as_payload() for f in facts],
            "sources": sorted({m.source for m in members}),
            "relevance": scored.relevance,
            "outcome": scored.outcome,
        }
        events.append(ctx.emit("story.analyzed", payload, subject=story_id, producer="analyze.rules@1"))
        analyses.append({**payload, "story": story, "lead": scored.lead})
    ctx.append(events)
    return analyses


def left_out(scores: Mapping[str, Scored]) -> int:
    return sum(not s.kept for s in scores.values())


def draft(ctx: RunContext, outcome: DedupOutcome) -> tuple[dict, list[fc.Finding], dict[str, Scored]]:
    """Score, analyze, compose and fact-check: the day's checked draft from its dedup outcome."""
    from tasks.steps.score import score_stories

    scores = score_stories(ctx, outcome)
    analyses = analyze_stories(ctx, outcome, scores)
    document, findings = factcheck(ctx, outcome, compose(ctx, outcome, analyses, left_out(scores)))
    return document, findings, scores


def injection_flags(members: Sequence[dd.Item]) -> list[str]:
    """``instructions_to_ai`` when a cited text talks to an AI system (kept, shown as quoted data)."""
    return (
        ["instructions_to_ai"]
        if any(fc.looks_like_instructions(f"{m.title} {m.summary}") for m in members)
        else []
    )


def compose(ctx: RunContext, outcome: DedupOutcome, analyses: Sequence[dict], off_topic: int = 0) -> dict:
    """The brief document (the JSON contract); ``off_topic`` stories were left out by the topic filter."""
    policy = ctx.settings.policy
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    items = []
    for analysis in analyses:
        story: dd.Story = analysis["story"]
        rep = outcome.items[story.representative]
        citations = []
        for article_id in story.members:
            m = outcome.items[article_id]
            citations.append(
                {
                    "article_id": article_id,
                    "url": m.url or m.canonical_url,  # the link as the outlet published it
                    "source": m.source,
                    "published": m.published_at.astimezone(UTC).isoformat() if m.published_at else None,
                }
            )
        items.append(
            {
                "story_id": analysis["story_id"],
                "title": rep.title,
                "category": analysis["category"],
                "category_confidence": analysis["confidence"],
                "importance": analysis["importance"],
                "relevance": analysis["outcome"],
                "relevance_score": analysis["relevance"],
                "lead": analysis["lead"],
                "summary": wr.short_summary(rep.summary),
                "facts": [
                    f
                    for f in fc.stated_facts(analysis["facts"], ctx.day)
                    if decisions.get((analysis["story_id"], f"claim:{f['kind']}", f["text"])) != "remove"
                ],
                "citations": citations,
                "follow_up_of": outcome.follow_up_of.get(story.story_id),
                "flags": injection_flags([outcome.items[a] for a in story.members]),
            }
        )
    quotas = {c.name: c.quota for c in policy.categories}
    arranged = wr.arrange(items, top=policy.top_stories, quotas=quotas, quick_links=policy.quick_links)
    return {
        "date": ctx.day.isoformat(),
        "version": 1,
        "language": ctx.settings.language,
        "policy_version": ctx.policy_version,
        "window": {"start": outcome.window[0].isoformat(), "end": outcome.window[1].isoformat()},
        "topic": policy.topic.name,
        "left_out": {"off_topic": off_topic},
        "items": arranged,
    }


def factcheck(ctx: RunContext, outcome: DedupOutcome, document: dict) -> tuple[dict, list[fc.Finding]]:
    """Check every item against its sources; record failures; mark (or drop) what failed."""
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    findings = [
        f
        for f in fc.check_brief(document, outcome.items, ctx.day)
        if decisions.get((f.story_id, f"claim:{f.kind}", f.claim)) != "keep"  # a person confirmed it
    ]
    action = "dropped" if ctx.settings.policy.unverified == "drop" else "marked_unverified"
    ctx.append(
        [
            ctx.emit(
                "factcheck.failed",
                {**f.as_payload(), "action": action},
                subject=f.story_id,
                producer="factcheck@1",
            )
            for f in findings
        ]
    )
    failed = {f.story_id for f in findings}
    items = []
    for item in document["items"]:
        if item["story_id"] in failed and action == "dropped":
            continue
        items.append({**item, "verified": item["story_id"] not in failed})
    return {**document, "items": items}, findings


def gate(ctx: RunContext, outcome: DedupOutcome, document: dict) -> tuple[dict, list]:
    """Great Expectations suites on the day's articles, the brief items and the day's events.

    Results are ``validation.completed`` events. A failed blocking suite raises ``GateFailed``
    (the run fails, naming suite, expectation and rows); a failed warning suite quarantines its
    rows: quarantined articles are no longer cited, items left without a citation and
    quarantined items leave the brief.
    """
    import pandas as pd

    from storage.registry import REGISTRY
    from validations import gate as gx_gate

    today = ctx.store.query(lambda: ctx.store.scan([ctx.day]))
    collected = set(today.filter(pl.col("event_type") == "article.collected")["subject_id"].to_list())
    articles = pd.DataFrame(
        [
            {
                "article_id": a.article_id,
                "url": a.url or None,
                "title": a.title,
                "source": a.source,
                "published_at": a.published_at,
            }
            for a in outcome.items.values()
            if a.article_id in collected
        ],
        columns=["article_id", "url", "title", "source", "published_at"],
    )
    items = pd.DataFrame(
        [
            {
                "story_id": i["story_id"],
                "category": i["category"],
                "category_confidence": i["category_confidence"],
                "importance": i["importance"],
                "citations": len(i["citations"]),
                "title": i["title"],
            }
            for i in document["items"]
        ],
        columns=["story_id", "category", "category_confidence", "importance", "citations", "title"],
    )
    events = today.select(
        "event_id", "event_type", pl.col("brief_date").cast(pl.String), "run_id"
    ).to_pandas()
    modes = ctx.settings.gates
    suites = {
        "articles": (
            modes.articles,
            articles,
            "url",
            gx_gate.article_suite([s.name for s in ctx.settings.sources], ctx.day),
        ),
        "items": (
            modes.items,
            items,
            "story_id",
            gx_gate.item_suite([c.name for c in ctx.settings.policy.categories]),
        ),
        "events": (modes.events, events, "event_id", gx_gate.event_suite(REGISTRY.types(), ctx.day)),
    }
    results = gx_gate.validate(suites)
    ctx.append(
        [
            ctx.emit(
                "validation.completed",
                {
                    "suite": r.suite,
                    "mode": r.mode,
                    "success": r.success,
                    "rows": r.rows,
                    "expectations": r.evaluated,
                    "failures": [
                        {"expectation": f.expectation, "column": f.column, "rows": list(f.rows)}
                        for f in r.failures
                    ],
                    "quarantined": r.quarantined,
                },
                subject=f"suite-{r.suite}",
                producer="gate.gx@1",
            )
            for r in results
        ]
    )
    message = gx_gate.blocking_message(results)
    if message:
        raise gx_gate.GateFailed(message)
    bad_urls = {u for r in results if r.suite == "articles" for u in r.quarantined}
    dropped_articles = {a.article_id for a in outcome.items.values() if str(a.url or None) in bad_urls}
    dropped_items = {s for r in results if r.suite == "items" for s in r.quarantined}
    kept = []
    for item in document["items"]:
        citations = [c for c in item["citations"] if c["article_id"] not in dropped_articles]
        if citations and item["story_id"] not in dropped_items:
            kept.append({**item, "citations": citations})
    return {**document, "items": kept}, results


@dataclass(frozen=True)
class Published:
    version: int
    files: dict[str, str]
    changed: bool
    markdown: str
    items: int


def publish(ctx: RunContext, document: dict) -> Published:
    """Write the brief files; a new version only when the content changed (version 1 stays)."""
    labels = {
        c.name: (c.label_zh if ctx.settings.language == "zh" else c.label_en) or c.name
        for c in ctx.settings.policy.categories
    }
    base = f"{ctx.store.base.rstrip('/')}/briefs"
    # Reading the versions, writing the files and recording the version is one critical section:
    # two publishers of one day (a review re-render while a run publishes) take distinct versions.
    with exclusive(ctx.store.fs, f"{base}/.{ctx.day.isoformat()}.lock"):
        previous = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
        versions = [json.loads(p) for p in previous.get_column("payload").to_list()]
        digest = wr.content_hash(document)
        same = [v for v in versions if v["content_hash"] == digest]
        version = same[0]["version"] if same else max((v["version"] for v in versions), default=0) + 1
        document = {**document, "version": version}
        markdown = wr.render_markdown(document, labels)
        rendered = {
            "md": markdown,
            "html": wr.render_html(document, labels),
            "json": json.dumps(document, ensure_ascii=False, indent=2) + "\n",
        }
        files = {}
        day = ctx.day.isoformat()
        for ext, text in rendered.items():
            for path in (f"{base}/{day}/v{version}.{ext}", f"{base}/{day}.{ext}"):
                _write_text(ctx.store, path, text)
            files[ext] = f"{base}/{ctx.day.isoformat()}.{ext}"
        if not same:
            ctx.append(
                [
                    ctx.emit(
                        "brief.published",
                        {
                            "brief_date": ctx.day.isoformat(),
                            "version": version,
                            "items": len(document["items"]),
                            "stories": [i["story_id"] for i in document["items"]],
                            "files": files,
                            "content_hash": digest,
                        },
                        subject=f"brief-{ctx.day.isoformat()}",
                        producer="write@1",
                    )
                ]
            )
    return Published(version, files, not same, markdown, len(document["items"]))


def _write_text(store: ParquetEventStore, path: str, text: str) -> None:
    write_bytes(store.fs, path, text.encode())
