"""Score, analyze, compose and fact-check: a day's checked draft (what rebrief and evaluate replay)."""

from __future__ import annotations

from tasks import factcheck
from tasks.steps.analyze import analyze_stories, left_out
from tasks.steps.compose import compose
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.factcheck import check_draft
from tasks.steps.score import Scored, score_stories


def draft(ctx: RunContext, outcome: DedupOutcome) -> tuple[dict, list[factcheck.Finding], dict[str, Scored]]:
    """Score, analyze, compose and fact-check: the day's checked draft from its dedup outcome."""
    scores = score_stories(ctx, outcome)
    analyses = analyze_stories(ctx, outcome, scores)
    document, findings = check_draft(ctx, outcome, compose(ctx, outcome, analyses, left_out(scores)))
    return document, findings, scores
