"""Score, analyze, compose and fact-check: a day's checked draft (what rebrief and evaluate replay)."""

from __future__ import annotations

from storage.brief import Brief
from tasks import factcheck, write
from tasks.steps.analyze import analyze_stories, left_out
from tasks.steps.compose import compose
from tasks.steps.context import RunContext
from tasks.steps.corrections import editor_acts
from tasks.steps.dedup import DedupOutcome
from tasks.steps.factcheck import check_draft
from tasks.steps.score import Scored, score_stories


def draft(ctx: RunContext, outcome: DedupOutcome) -> tuple[Brief, list[factcheck.Finding], dict[str, Scored]]:
    """Score, analyze, compose and fact-check: the day's checked draft from its dedup outcome; then
    people's corrections and retractions (their words are theirs: not fact-checked against sources)."""
    scores = score_stories(ctx, outcome)
    analyses = analyze_stories(ctx, outcome, scores)
    document, findings = written(ctx, outcome, analyses, left_out(scores))
    return document, findings, scores


def written(
    ctx: RunContext, outcome: DedupOutcome, analyses: list[dict], off_topic: int
) -> tuple[Brief, list[factcheck.Finding]]:
    """Compose and fact-check the document, then apply the day's corrections and retractions."""
    document, findings = check_draft(ctx, outcome, compose(ctx, outcome, analyses, off_topic))
    acts = editor_acts(ctx)
    return write.apply_editor_acts(document, acts.corrections, acts.retractions), findings
