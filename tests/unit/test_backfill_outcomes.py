"""A backfill date's outcome when its run raised (``ops.backfill``): a withheld brief is the run's
outcome, said in the publish step's words; anything else is a failure, said in one line."""

from __future__ import annotations

from datetime import date

from ops.backfill import BackfillResult, any_run, not_completed
from ops.runs import BriefWithheld, DateOutcome
from tasks.steps.report import StepFailed

DAY = date(2025, 8, 5)


def test_a_withheld_brief_is_withheld_in_its_own_words_even_raised_by_its_step() -> None:
    reason = "2 of 2 sources failed (labnotes, techwire)"
    for raised in (BriefWithheld(reason), StepFailed("publish", BriefWithheld(reason))):
        outcome = not_completed(DAY, raised)
        assert (outcome.day, outcome.status, outcome.error) == (DAY, "withheld", reason), outcome
        assert outcome.version is None and not outcome.unchanged


def test_any_other_error_is_a_failure_named_by_its_step_and_cut_to_a_line() -> None:
    outcome = not_completed(DAY, StepFailed("compose", ValueError("no model at /nowhere " + "x" * 400)))
    assert outcome.status == "failed"
    assert outcome.error.startswith("step 'compose' failed: ValueError: no model at /nowhere")
    assert len(outcome.error) == 300


def test_the_result_lists_failed_and_withheld_dates_and_a_run_date_is_seen() -> None:
    kept = DateOutcome(DAY, "completed", version=1, items=5, unchanged=True)
    later = [
        DateOutcome(date(2025, 8, 6), "withheld", error="thin"),
        DateOutcome(date(2025, 8, 7), "failed", error="boom"),
    ]
    result = BackfillResult([kept, *later])
    assert (result.failed, result.withheld) == ([date(2025, 8, 7)], [date(2025, 8, 6)])
    assert not any_run([kept]) and any_run([kept, later[0]])
