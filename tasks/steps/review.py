"""The interview protocol's steps: raise questions, record answers and corrections, re-render."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from storage.events import Event, new_event, utcnow
from storage.projections import materialize
from tasks import factcheck as fc
from tasks import review as rv
from tasks.steps.answers import answered
from tasks.steps.brief import Published, draft, gate, publish
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome, dedup_day


def raise_questions(
    ctx: RunContext, outcome: DedupOutcome, document: dict, findings: Sequence[fc.Finding]
) -> dict:
    """Ask what the run could not settle; apply earlier answers to questions asked before."""
    titles = {i["story_id"]: i["title"] for i in document["items"]}
    categories = [c.name for c in ctx.settings.policy.categories]
    questions = [
        rv.same_story_question(a, outcome.items[a].title, b, outcome.items[b].title, s)
        for a, b, s in outcome.borderline
    ]
    questions += [
        rv.category_question(i["story_id"], i["title"], i["category"], i["category_confidence"], categories)
        for i in document["items"]
        if i["category"] != "other" and i["category_confidence"] < ctx.settings.policy.min_category_confidence
    ]
    questions += [
        rv.claim_question(f.story_id, titles.get(f.story_id, f.story_id), f.kind, f.claim, f.reason)
        for f in findings
        if f.kind != "citation"
    ]
    questions += [rv.publish_time_question(a, outcome.items[a].title) for a in outcome.undated]
    earlier = answered(ctx)
    today = {r["question_id"] for r in earlier.values() if r["brief_date"] == ctx.day}
    events, counts = [], {"asked": 0, "applied": 0}
    for batch_id, q in rv.batch(questions, ctx.day)[: ctx.settings.policy.max_questions]:
        if q.question_id in today:
            continue
        before = earlier.get(q.key)
        if before is not None:
            events.append(
                ctx.emit(
                    "confirmation.resolved",
                    {
                        "question_id": q.question_id,
                        "subject": q.subject,
                        "field": q.field,
                        "value": q.value,
                        "answer": before["answer"],
                        "by": "earlier-answer",
                        "applied_from": before["question_id"],
                    },
                    subject=q.subject,
                    producer="review@1",
                )
            )
            counts["applied"] += 1
        else:
            events.append(
                ctx.emit(
                    "confirmation.requested", q.payload(batch_id), subject=q.subject, producer="review@1"
                )
            )
            counts["asked"] += 1
    ctx.append(events)
    return counts


def open_questions(ctx: RunContext) -> pl.DataFrame:
    frame = materialize(ctx.store, "questions", days=[d for d in ctx.store.days() if d <= ctx.day])
    return frame.filter((pl.col("status") == "open") & (pl.col("brief_date") == ctx.day))


def resolve(ctx: RunContext, question: dict, answer: str, by: str) -> list[Event]:
    """The answer as a fact, and the correction it implies."""

    events = [
        ctx.emit(
            "confirmation.resolved",
            {
                "question_id": question["question_id"],
                "subject": question["subject"],
                "field": question["field"],
                "value": question["value"],
                "answer": answer,
                "by": by,
            },
            subject=question["subject"],
            producer="review@1",
        )
    ]

    def fact(event_type: str, payload: dict, subject: str) -> Event:
        return new_event(
            event_type,
            payload,
            brief_date=ctx.day,
            run_id=ctx.run_id,
            subject_id=subject,
            produced_by=f"review@1:{by}",
            occurred_at=utcnow(),
            source_event_ids=[events[0].event_id],
        )

    field_ = question["field"]
    if field_ == "same_story":
        ids = question["subject"].split("|")
        kind = "story.merged" if answer == "yes" else "story.split"
        events.append(fact(kind, {"article_ids": ids, "question_id": question["question_id"]}, ids[0]))
    elif field_ == "category" and answer != question["value"]:
        stories = materialize(ctx.store, "stories", days=[ctx.day])
        rows = stories.filter(pl.col("story_id") == question["subject"])
        if rows.height:
            article = rows["representative"][0]
            events.append(
                fact(
                    "article.corrected",
                    {
                        "article_id": article,
                        "field": "category",
                        "value": answer,
                        "reason": f"answer to {question['question_id']}",
                        "by": by,
                    },
                    article,
                )
            )
    elif field_ == "published_at" and answer not in ("", "skip"):
        events.append(
            fact(
                "article.corrected",
                {
                    "article_id": question["subject"],
                    "field": "published_at",
                    "value": f"{answer}T00:00:00+00:00",
                    "reason": f"answer to {question['question_id']}",
                    "by": by,
                },
                question["subject"],
            )
        )
    return events


def rebrief(ctx: RunContext) -> Published:
    """The day's brief again from stored facts and answers (no collection); a new version if it changed."""
    outcome = dedup_day(ctx)
    document, findings, _ = draft(ctx, outcome)
    raise_questions(ctx, outcome, document, findings)
    document, _ = gate(ctx, outcome, document)
    return publish(ctx, document)
