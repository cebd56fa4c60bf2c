"""The write step: the brief document (the JSON contract) from the day's analyses."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC

from tasks import dedup, factcheck, write
from tasks.steps.answers import answered
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome


def injection_flags(members: Sequence[dedup.Item]) -> list[str]:
    """``instructions_to_ai`` when a cited text talks to an AI system (kept, shown as quoted data)."""
    return (
        ["instructions_to_ai"]
        if any(factcheck.looks_like_instructions(f"{m.title} {m.summary}") for m in members)
        else []
    )


def compose(ctx: RunContext, outcome: DedupOutcome, analyses: Sequence[dict], off_topic: int = 0) -> dict:
    """The brief document (the JSON contract); ``off_topic`` stories were left out by the topic filter."""
    policy = ctx.settings.policy
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    items = []
    for analysis in analyses:
        story: dedup.Story = analysis["story"]
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
                "promotion": analysis.get("promotion", False),
                "summary": write.short_summary(rep.summary),
                "facts": [
                    f
                    for f in factcheck.stated_facts(analysis["facts"], ctx.day)
                    if decisions.get((analysis["story_id"], f"claim:{f['kind']}", f["text"])) != "remove"
                ],
                "citations": citations,
                "follow_up_of": outcome.follow_up_of.get(story.story_id),
                "flags": injection_flags([outcome.items[a] for a in story.members]),
            }
        )
    quotas = {c.name: c.quota for c in policy.categories}
    arranged = write.arrange(items, top=policy.top_stories, quotas=quotas, quick_links=policy.quick_links)
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
