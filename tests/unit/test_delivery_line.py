"""The deliver step's line of ``brief run``: a few words that fit 80 columns beside the step's name."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from tasks.steps.deliver import DeliveryOutcome, Sent

DAY = date(2025, 8, 6)
PREFIX = f"{'deliver':<11} 0.1 s  "  # as the run's report prints a step


def test_a_held_brief_says_until_when_and_how_to_send_it_in_one_short_line() -> None:
    waiting = "held for review: readers get it after 'brief approve' or at 2025-08-07 11:00 CEST"
    held = DeliveryOutcome(
        DAY,
        1,
        sent=[Sent("editors-desk-review", "review", 1, True, 1)],
        skipped=[("newsletter-readers", waiting), ("team-chat-general", waiting)],
        waiting=waiting,
        until=datetime(2025, 8, 7, 9, tzinfo=UTC),
        zone=ZoneInfo("Europe/Amsterdam"),
    )
    line = held.line()
    assert line == "held until 08-07 11:00 CEST or approved, review copy sent"
    assert len(PREFIX + line) <= 80
    failed = DeliveryOutcome(DAY, 1, sent=[Sent("newsletter-readers", "brief", 1, False, 3, "HTTP 500")])
    assert failed.line() == "sent to 0 of 1 channel, 1 failed (how to resend: below)"
    assert len(PREFIX + failed.line()) <= 80
    no_deadline = DeliveryOutcome(DAY, 1, waiting=waiting)
    assert no_deadline.line() == "held until approved"
