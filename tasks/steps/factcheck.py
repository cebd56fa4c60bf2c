"""The fact-check step: every item checked against its sources; failures recorded, items marked or dropped."""

from __future__ import annotations

from storage.brief import Brief
from tasks import factcheck
from tasks.steps.answers import answered
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome


def check_draft(
    ctx: RunContext, outcome: DedupOutcome, document: Brief
) -> tuple[Brief, list[factcheck.Finding]]:
    """Check every item against its sources; record failures; mark (or drop) what failed."""
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    findings = [
        f
        for f in factcheck.check_brief(document, outcome.items, ctx.day)
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
                sources=ctx.made("story.analyzed", f.story_id)[-1:],
            )
            for f in findings
        ]
    )
    failed = {f.story_id for f in findings}
    items = []
    for item in document.items:
        if item.story_id in failed and action == "dropped":
            continue
        items.append(item.model_copy(update={"verified": item.story_id not in failed}))
    return document.with_items(items), findings
