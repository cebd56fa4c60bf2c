"""The interview protocol's steps: raise questions, record answers and corrections, re-render."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from storage.brief import Brief
from storage.errors import InputError
from storage.events import Event, new_event, utcnow
from storage.projections import materialize
from tasks import factcheck, review
from tasks.steps.answers import answered
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.score import Scored


def raise_questions(
    ctx: RunContext,
    outcome: DedupOutcome,
    document: Brief,
    findings: Sequence[factcheck.Finding],
    scores: Mapping[str, Scored] | None = None,
) -> dict:
    """Ask what the run could not settle; apply earlier answers to questions asked before."""
    titles = {i.story_id: i.title for i in document.items}
    policy = ctx.settings.policy
    categories = [c.name for c in ctx.settings.policy.categories]
    questions = [
        review.same_story_question(a, outcome.items[a].title, b, outcome.items[b].title, s)
        for a, b, s in outcome.borderline
    ]
    questions += [
        review.category_question(i.story_id, i.title, i.category, i.category_confidence, categories)
        for i in document.items
        if i.category != "other" and i.category_confidence < ctx.settings.policy.min_category_confidence
    ]
    questions += [
        review.claim_question(f.story_id, titles.get(f.story_id, f.story_id), f.kind, f.claim, f.reason)
        for f in findings
        if f.kind != "citation"
    ]
    questions += [review.publish_time_question(a, outcome.items[a].title) for a in outcome.undated]
    stories = {s.story_id: s for s in outcome.stories}
    questions += [
        review.relevance_question(
            s.story_id,
            outcome.items[stories[key].representative].title,
            policy.topic.name,
            s.outcome,
            s.relevance,
        )
        for key, s in (scores or {}).items()
        if abs(s.relevance - 0.5) < policy.relevance_margin and not s.marked
    ]
    earlier = answered(ctx)
    today = {r["question_id"] for r in earlier.values() if r["brief_date"] == ctx.day}
    events, counts = [], {"asked": 0, "applied": 0}
    for batch_id, q in review.batch(questions, ctx.day)[: ctx.settings.policy.max_questions]:
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
                    "confirmation.requested",
                    q.payload(batch_id),
                    subject=q.subject,
                    producer="review@1",
                    sources=question_sources(ctx, outcome, q),
                )
            )
            counts["asked"] += 1
    ctx.append(events)
    return counts


def question_sources(ctx: RunContext, outcome: DedupOutcome, q: review.Question) -> list[str]:
    """What made the run ask: the two articles of a same-story pair, the analysis of a category,
    the fact-check of a claim, the score of a relevance, the article of a missing publish time."""
    if q.field == "same_story":
        return outcome.collected_events(q.subject.split("|"))
    if q.field == "published_at":
        return outcome.collected_events([q.subject])
    if q.field.startswith("claim:"):
        return ctx.made("factcheck.failed", q.subject)
    made = {"category": "story.analyzed", "relevance": "story.scored"}.get(q.field)
    return ctx.made(made, q.subject)[-1:] if made else []


def open_questions(ctx: RunContext) -> pl.DataFrame:
    frame = materialize(ctx.store, "questions", days=[ctx.day])
    return frame.filter((pl.col("status") == "open") & (pl.col("brief_date") == ctx.day))


def resolve(
    ctx: RunContext, question: dict, answer: str, by: str, person: str | None = None, via: str | None = None
) -> list[Event]:
    """The answer as a fact, and the correction it implies. ``by`` says how it was given (a person,
    the default); ``person`` names who gave it and ``via`` where (``desk``), when known."""
    answered = ctx.emit(
        "confirmation.resolved",
        {
            "question_id": question["question_id"],
            "subject": question["subject"],
            "field": question["field"],
            "value": question["value"],
            "answer": answer,
            "by": by,
            "person": person,
            "via": via,
        },
        subject=question["subject"],
        producer="review@1",
    )
    return [answered, *implied_by(ctx, question, answer, answered, by, person, via)]


def implied_by(
    ctx: RunContext,
    question: dict,
    answer: str,
    answered: Event,
    by: str,
    person: str | None,
    via: str | None,
) -> list[Event]:
    """What an answer (``answered``) says besides itself: a same-story link, a category or publish time
    corrected, a story marked; nothing when it agrees with what the run found."""
    field_, because = question["field"], f"answer to {question['question_id']}"

    def corrected(article_id: str, value: str | None) -> Event:
        payload = {"article_id": article_id, "field": field_, "value": value}
        return new_event(
            "article.corrected",
            {**payload, "reason": because, "by": person or by, "via": via},
            brief_date=ctx.day,
            run_id=ctx.run_id,
            subject_id=article_id,
            produced_by=f"review@1:{by}",
            occurred_at=utcnow(),
            source_event_ids=[answered.event_id],
        )

    if field_ == "same_story":
        ids = question["subject"].split("|")
        return [
            story_link(ctx, ids, answer == "yes", by, question_id=question["question_id"], cause=answered)
        ]
    if field_ == "category" and answer != question["value"]:
        stories = materialize(ctx.store, "stories", days=[ctx.day])
        rows = stories.filter(pl.col("story_id") == question["subject"])
        return [corrected(rows["representative"][0], answer)] if rows.height else []
    if field_ == "relevance" and answer != question["value"]:
        return mark_story(ctx, question["subject"], answer, person or by, because, answered, via)
    if field_ == "published_at" and answer not in ("", "skip"):
        return [corrected(question["subject"], _start_of(answer, ctx))]
    return []


def story_link(
    ctx: RunContext,
    article_ids: Sequence[str],
    same: bool,
    by: str,
    *,
    question_id: str | None = None,
    cause: Event | None = None,
    person: str | None = None,
    via: str | None = None,
) -> Event:
    """People's word that articles are one story (``story.merged``) or not (``story.split``): a fact
    that binds the clustering of every later run of the days it reaches (``human_links``)."""
    return new_event(
        "story.merged" if same else "story.split",
        {"article_ids": list(article_ids), "question_id": question_id, "person": person, "via": via},
        brief_date=ctx.day,
        run_id=ctx.run_id,
        subject_id=article_ids[0],
        produced_by=f"review@1:{by}",
        occurred_at=utcnow(),
        source_event_ids=[cause.event_id] if cause else [],
    )


def same_story(ctx: RunContext, stories: Sequence[str], person: str, via: str | None = None) -> list[Event]:
    """Two (or more) of the day's stories are one: their representatives are linked, so the next
    clustering puts their articles together (as a "yes" to a same-story question does)."""
    named = sorted(set(stories))
    if len(named) < 2:
        raise InputError("name two different stories of the day to say they are one")
    representatives = sorted(find_representative(ctx, s) for s in named)
    return [story_link(ctx, representatives, True, "human", person=person, via=via)]


def members_of(ctx: RunContext, story: str) -> list[str]:
    """The articles of one of the day's stories, as the log clusters them now (none: no such story)."""
    frame = materialize(ctx.store, "stories", days=[ctx.day]).filter(pl.col("story_id") == story)
    return list(frame["members"][0]) if frame.height else []


def settle_same_story(
    ctx: RunContext,
    answer_of: Callable[[str, str], str | None],
    person: str,
    via: str | None,
    cause: Sequence[Event],
) -> list[Event]:
    """The day's open same-story questions a person's same-story or two-stories act settled
    (``answer_of(a, b)``: "yes", "no", or None when the act says nothing of that pair), each answered
    as a fact that cites the act. The answer implies nothing more: the act's own link says it."""
    settled = []
    for q in open_questions(ctx).iter_rows(named=True):
        pair = q["subject"].split("|")
        answer = answer_of(pair[0], pair[-1]) if q["field"] == "same_story" and len(pair) == 2 else None
        if answer is None:
            continue
        payload = {
            "question_id": q["question_id"],
            "subject": q["subject"],
            "field": q["field"],
            "value": q["value"],
            "answer": answer,
            "by": "human",
            "person": person,
            "via": via,
        }
        sources = [e.event_id for e in cause]
        settled.append(
            ctx.emit(
                "confirmation.resolved", payload, subject=q["subject"], producer="review@1", sources=sources
            )
        )
    return settled


def settle_relevance(
    ctx: RunContext, marks: Sequence[Event], person: str, via: str | None, answered: Sequence[str] = ()
) -> list[Event]:
    """The day's open relevance questions a person's marks settled: a question asking whether a story
    is on the topic is answered with the mark given to that story (``marks``: ``article.corrected``
    events of the field ``relevance``), as a fact citing the mark; the questions ``answered`` in the
    same act keep their own answer. The answer implies nothing more: the mark says it."""
    from storage.payloads import ArticleCorrected
    from storage.typed import payload_of

    corrections = [(e, payload_of(e, ArticleCorrected)) for e in marks if e.event_type == "article.corrected"]
    given = {
        c.article_id: (c.value, e.event_id) for e, c in corrections if c.field == "relevance" and c.value
    }
    if not given:
        return []
    stories = materialize(ctx.store, "stories", days=[ctx.day])
    story_of = dict(zip(stories["representative"], stories["story_id"], strict=True))
    by_story = {story_of.get(article, article): mark for article, mark in given.items()}
    settled = []
    for q in open_questions(ctx).iter_rows(named=True):
        if q["field"] != "relevance" or q["question_id"] in answered or q["subject"] not in by_story:
            continue
        mark, cause = by_story[q["subject"]]
        payload = {
            "question_id": q["question_id"],
            "subject": q["subject"],
            "field": q["field"],
            "value": q["value"],
            "answer": mark,
            "by": "human",
            "person": person,
            "via": via,
        }
        settled.append(
            ctx.emit(
                "confirmation.resolved", payload, subject=q["subject"], producer="review@1", sources=[cause]
            )
        )
    return settled


def two_stories(
    ctx: RunContext, story: str, apart: Sequence[str], person: str, via: str | None = None
) -> list[Event]:
    """One story is two: the articles in ``apart`` are a story of their own, apart from the rest of
    its members (as a "no" to a same-story question, for every pair across the cut)."""
    frame = materialize(ctx.store, "stories", days=[ctx.day]).filter(pl.col("story_id") == story)
    if not frame.height:
        raise InputError(f"no story {story!r} on {ctx.day}; pick an item of the day's brief")
    members = list(frame["members"][0])
    chosen = sorted(set(apart))
    strangers = [a for a in chosen if a not in members]
    if strangers:
        raise InputError(f"article {strangers[0]!r} is not one of story {story}'s articles")
    rest = sorted(set(members) - set(chosen))
    if not chosen or not rest:
        raise InputError(
            f"tick some of story {story}'s {len(members)} articles, but not all, to make a story of their own"
        )
    pages = materialize(ctx.store, "articles", days=ctx.reach).filter(pl.col("article_id").is_in(members))
    same_page = {
        r["article_id"]: (r["canonical_url"], r["content_hash"]) for r in pages.iter_rows(named=True)
    }
    for a in chosen:
        for b in rest:
            if a in same_page and b in same_page and set(same_page[a]) & set(same_page[b]) - {None}:
                raise InputError(
                    f"articles {a} and {b} are one page (the same link or the same text): they stay one "
                    "item; tick them both, or neither"
                )
    return [
        story_link(ctx, sorted((a, b)), False, "human", person=person, via=via) for a in chosen for b in rest
    ]


def _start_of(day_text: str, ctx: RunContext) -> str:
    """A publish date a person typed: the start of that day in the configured timezone, in UTC."""
    from datetime import UTC, date, datetime, time

    start = datetime.combine(date.fromisoformat(day_text), time(0), tzinfo=ctx.settings.zone)
    return start.astimezone(UTC).isoformat()


def mark_story(
    ctx: RunContext,
    story: str,
    mark: str,
    by: str,
    reason: str,
    cause: Event | None = None,
    via: str | None = None,
) -> list[Event]:
    """A person's relevance mark on a story (off-topic, related, core, lead), as a correction of its
    representative article; the next brief applies it."""
    from storage.payloads import RELEVANCE_MARKS

    if mark not in RELEVANCE_MARKS:
        raise InputError(f"mark {mark!r} is not one of {', '.join(RELEVANCE_MARKS)}")
    article = find_representative(ctx, story)
    return [
        new_event(
            "article.corrected",
            {
                "article_id": article,
                "field": "relevance",
                "value": mark,
                "reason": reason,
                "by": by,
                "via": via,
            },
            brief_date=ctx.day,
            run_id=ctx.run_id,
            subject_id=article,
            produced_by=f"review@1:{by}",
            occurred_at=utcnow(),
            source_event_ids=[cause.event_id] if cause else [],
        )
    ]


def find_representative(ctx: RunContext, story: str) -> str:
    """The representative article of a story named by its story id, an article id or a link."""
    stories = materialize(ctx.store, "stories", days=[ctx.day])
    rows = stories.filter(pl.col("story_id") == story)
    if rows.height:
        return rows["representative"][0]
    articles = materialize(ctx.store, "articles", days=ctx.reach)
    hit = articles.filter(
        (pl.col("article_id") == story) | (pl.col("url") == story) | (pl.col("canonical_url") == story)
    )
    if hit.height:
        article = hit["article_id"][0]
        member = stories.filter(pl.col("members").list.contains(article))
        return member["representative"][0] if member.height else article
    raise InputError(
        f"no story, article or link {story!r} on {ctx.day}; "
        f"'brief events --type story.scored --date {ctx.day}' lists the day's stories"
    )
