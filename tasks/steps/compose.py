"""The write step: the brief document (the JSON contract) from the day's analyses."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

from storage.brief import Brief, Citation, Item, LeftOut, Window
from storage.payloads import Fact
from tasks import dedup, factcheck, injection, llm, outlets, write
from tasks.steps.answers import answered
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.llm import analyst as llm_analyst
from tasks.steps.translate import translated_title


def injection_flags(members: Sequence[dedup.Item]) -> list[str]:
    """``instructions_to_ai`` when a cited text talks to an AI system (kept, shown as quoted data)."""
    return (
        ["instructions_to_ai"]
        if any(injection.looks_like_instructions(f"{m.title} {m.summary}") for m in members)
        else []
    )


def cited_members(story: dedup.Story, outcome: DedupOutcome) -> list[str]:
    """The story's articles a reader is pointed to. Of the news and lab articles that are one page
    (an exact duplicate: the same canonical URL, or the same text under another link, as a
    syndicated copy is), only the first (the earliest published) is cited: one page is one source.
    A community item, a digest's entry, a repository or a paper at that page is cited all the
    same, for the evidence its citation carries (a discussion, points, a position, stars)."""
    pages: set[str] = set()
    cited = []
    for article_id in story.members:
        item = outcome.items[article_id]
        if item.kind not in outlets.NAMED_KINDS:
            if {item.canonical_url, item.content_hash} & pages:
                continue
            pages |= {item.canonical_url, item.content_hash}
        cited.append(article_id)
    return cited


def summarise(
    ctx: RunContext, story_id: str, outcome: DedupOutcome, story: dedup.Story, rejected: list
) -> str:
    """The item's summary: the language model's when one is configured and every claim of it is in the
    story's sources, else the representative's own (what the offline writer uses)."""
    rep = outcome.items[story.representative]
    offline = write.short_summary(rep.summary)
    analyst = llm_analyst(ctx)
    if analyst is None:
        return offline
    members = [outcome.items[a] for a in story.members]
    answer = analyst.ask("summary", story_id, members)
    if not isinstance(answer, llm.SummaryAnswer):
        return offline
    collected = {m.url for m in members} | {m.canonical_url for m in members}
    findings = llm.check_model_text(answer.summary.strip(), members, collected, ctx.day)
    if findings:
        sources = sorted({m.url or m.canonical_url for m in members})
        rejected.extend((story_id, sources, f) for f in findings)
        return offline
    return write.short_summary(answer.summary.strip())


def item_citations(ctx: RunContext, story: dedup.Story, outcome: DedupOutcome) -> list[Citation]:
    """The item's citations: each cited article's link as its outlet published it, its source and
    publish time, and what its kind says of it (``outlets.citation_fields``)."""
    out = []
    for article_id in cited_members(story, outcome):
        m = outcome.items[article_id]
        out.append(
            Citation(
                article_id=article_id,
                url=m.url or m.canonical_url,  # the link as the outlet published it
                source=m.source,
                published=m.published_at.astimezone(UTC).isoformat() if m.published_at else None,
                **outlets.citation_fields(
                    m.kind,
                    m.source,
                    m.outlet,
                    m.discussion_url,
                    dict(m.evidence),
                    language=ctx.settings.language,
                ),
            )
        )
    return out


def brief_item(
    ctx: RunContext,
    analysis: dict,
    outcome: DedupOutcome,
    decisions: dict,
    rejected: list,
    translations: list,
) -> Item:
    """One story's item: its representative's title (and its translation), the analysis's category,
    importance and relevance, the summary, the facts people did not remove, its citations."""
    story: dedup.Story = analysis["story"]
    rep = outcome.items[story.representative]
    cited = item_citations(ctx, story, outcome)
    translated = translated_title(ctx, analysis["story_id"], rep, translations)
    return Item(
        story_id=analysis["story_id"],
        title=rep.title,
        language=write.item_language(rep.language, ctx.settings.language).get("language"),
        translated_title=translated or None,
        category=analysis["category"],
        category_confidence=analysis["confidence"],
        importance=analysis["importance"],
        relevance=analysis["outcome"],
        relevance_score=analysis["relevance"],
        lead=analysis["lead"],
        promotion=analysis.get("promotion", False),
        summary=summarise(ctx, analysis["story_id"], outcome, story, rejected),
        facts=[
            Fact.model_validate(f)
            for f in factcheck.stated_facts(analysis["facts"], ctx.day)
            if decisions.get((analysis["story_id"], f"claim:{f['kind']}", f["text"])) != "remove"
        ],
        citations=cited,
        follow_up_of=outcome.follow_up_of.get(story.story_id),
        flags=injection_flags([outcome.items[a] for a in story.members]),
    )


def record_model_text(ctx: RunContext, rejected: list, translations: list) -> None:
    """The language model's calls for the summaries and titles, then the titles' translations and a
    ``factcheck.failed`` for each summary refused for a claim its sources do not hold."""
    model = llm_analyst(ctx)
    if model is not None:
        model.flush()  # the summaries' and titles' calls, before the findings about them
    ctx.append(
        translations
        + [
            ctx.emit(
                "factcheck.failed",
                {
                    "story_id": story_id,
                    "kind": f.kind,
                    "claim": f.claim,
                    "reason": f.reason,
                    "sources_checked": sources,
                    "action": "removed_model_text",
                },
                subject=story_id,
                producer="factcheck.model_text@1",
                sources=[
                    *ctx.made("story.analyzed", story_id)[-1:],
                    *(model.used("summary", story_id) if model else []),
                ],
            )
            for story_id, sources, f in rejected
        ]
    )


def compose(ctx: RunContext, outcome: DedupOutcome, analyses: Sequence[dict], off_topic: int = 0) -> Brief:
    """The brief (the JSON contract); ``off_topic`` stories were left out by the topic filter."""
    policy = ctx.settings.policy
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    rejected: list = []
    translations: list = []  # title.translated events
    items = [brief_item(ctx, a, outcome, decisions, rejected, translations) for a in analyses]
    record_model_text(ctx, rejected, translations)
    quotas = {c.name: c.quota for c in policy.categories}
    arranged = write.arrange(items, top=policy.top_stories, quotas=quotas, quick_links=policy.quick_links)
    return Brief(
        date=ctx.day.isoformat(),
        version=1,
        language=ctx.settings.language,
        policy_version=ctx.policy_version,
        window=Window(start=outcome.window[0].isoformat(), end=outcome.window[1].isoformat()),
        topic=policy.topic.name,
        left_out=LeftOut(off_topic=off_topic),
        items=arranged,
    )
