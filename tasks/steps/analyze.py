"""The analyze step: category and anchored facts of every story on the topic (``story.analyzed``)."""

from __future__ import annotations

from collections.abc import Mapping

from tasks import analyze, llm
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.llm import analyst as llm_analyst
from tasks.steps.score import Scored


def analyze_stories(ctx: RunContext, outcome: DedupOutcome, scores: Mapping[str, Scored]) -> list[dict]:
    """Category and anchored facts of every story on the topic; off-topic stories stop here."""
    policy = ctx.settings.policy
    rules = [analyze.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
    analyses, events = [], []
    analyst = llm_analyst(ctx)
    for story in outcome.stories:
        scored = scores[story.story_id]
        if not scored.kept:
            continue
        members = [outcome.items[a] for a in story.members]
        story_id = scored.story_id
        category, confidence = analyze.categorise(
            " ".join(f"{m.title} {m.title} {m.summary}" for m in members), rules
        )
        producer = "analyze.rules@1"
        sources = [scored.event_id] if scored.event_id else []
        if story.representative in outcome.corrected_category:  # a person said so
            category, confidence = outcome.corrected_category[story.representative], 1.0
            said = outcome.corrections.get((story.representative, "category"))
            sources += [said] if said else []
        elif analyst is not None:
            sorted_ = analyst.ask("category", story_id, members)
            if isinstance(sorted_, llm.CategoryAnswer):
                category, confidence, producer = sorted_.category, sorted_.confidence, "analyze.llm@1"
                sources += analyst.used("category", story_id)
        facts = analyze.dedupe_facts([f for m in members for f in analyze.extract_facts(m, ctx.day.year)])
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
        events.append(
            ctx.emit("story.analyzed", payload, subject=story_id, producer=producer, sources=sources)
        )
        analyses.append(
            {
                **payload,
                "story": story,
                "lead": scored.lead,
                "promotion": scored.promotion,
            }
        )
    ctx.append(events)
    if analyst is not None:
        analyst.flush()
    return analyses


def left_out(scores: Mapping[str, Scored]) -> int:
    return sum(not s.kept for s in scores.values())
