"""Compose and fact-check: a day's written draft (the stages before it: ``tasks/steps/stages.py``)."""

from __future__ import annotations

from storage.brief import Brief
from tasks import factcheck, write
from tasks.steps.compose import compose
from tasks.steps.context import RunContext
from tasks.steps.corrections import editor_acts
from tasks.steps.dedup import DedupOutcome
from tasks.steps.factcheck import check_draft


def written(
    ctx: RunContext, outcome: DedupOutcome, analyses: list[dict], off_topic: int
) -> tuple[Brief, list[factcheck.Finding]]:
    """Compose and fact-check the document, then apply the day's corrections and retractions."""
    document, findings = check_draft(ctx, outcome, compose(ctx, outcome, analyses, off_topic))
    acts = editor_acts(ctx)
    composed = write.apply_editor_acts(
        document, acts.corrections, acts.retractions, acts.silent, acts.first_seen
    )
    return composed, findings
