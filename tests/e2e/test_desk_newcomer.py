"""What a new editor's first day found, at the desk (over HTTP against its application) and at the
terminal (``brief`` as the console script runs it), on the samples' day: a day with no brief is said
to have none, and why, by every command and page that reads it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import brief
from tests.e2e.test_desk_trial import built, client, config  # noqa: F401 (fixtures)

WITHHELD = "2025-08-05"  # the samples hold no archive for it: its run withholds the brief


def text_of(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


def test_review_of_a_day_with_no_brief_says_so_and_why_as_correct_does(config: Path) -> None:  # noqa: F811
    from flows.daily import daily_brief
    from storage.errors import BriefError

    with pytest.raises(BriefError, match="withheld"):
        daily_brief(WITHHELD, str(config))
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [held] = store.read(event_types=["brief.withheld"])
    review = brief("review", "--date", WITHHELD, "--config", str(config))
    assert review.returncode == 2, review.stdout
    assert review.stdout == ""
    assert review.stderr.strip() == (
        f"error: no brief is published for {WITHHELD}: its run {held.run_id} withheld it "
        f"({held.payload['reason']}); 'brief run --date {WITHHELD} --config {config}' runs it again"
    )
    correct = brief("correct", "abc", "--title", "x", "--date", WITHHELD, "--config", str(config))
    assert (correct.returncode, correct.stderr) == (2, review.stderr)
    never = brief("review", "--date", "2025-08-04", "--config", str(config))  # no run of that day
    assert never.returncode == 2
    assert never.stderr.strip() == (
        f"error: no brief is published for 2025-08-04; run 'brief run --date 2025-08-04 --config {config}' first"
    )
    # the desk's Questions page of the day says what Today says of it, not "No open questions"
    page = client(config).get(f"/questions?date={WITHHELD}")
    assert page.status_code == 200
    said = text_of(page.text)
    assert "No open questions" not in said
    assert f"No brief is published for {WITHHELD}: the run {held.run_id} withheld it" in said
    assert client(config).get("/questions?date=2025-08-04").status_code == 400
