"""How the desk shows a brief's news window: as days in the configured timezone, whatever the zone."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

import pytest

from flows.desk.web import shown_window
from tasks.dedup import news_window


@pytest.mark.parametrize("zone", ["UTC", "Europe/Amsterdam", "Asia/Shanghai", "America/New_York"])
def test_a_window_of_whole_local_days_is_shown_as_its_days(zone: str) -> None:
    start, end = news_window(date(2025, 8, 6), ZoneInfo(zone), 48)  # stored as UTC moments
    assert shown_window(start.isoformat(), end.isoformat(), zone) == "2025-08-05 – 2025-08-06"
    one_day = news_window(date(2025, 8, 6), ZoneInfo(zone), 24)
    assert shown_window(*(at.isoformat() for at in one_day), zone) == "2025-08-06"


def test_local_midnights_read_in_another_zone_are_moments_in_utc() -> None:
    start, end = news_window(date(2025, 8, 6), ZoneInfo("Europe/Amsterdam"), 48)
    assert shown_window(start.isoformat(), end.isoformat(), "Asia/Shanghai") == (
        "2025-08-04 22:00 – 2025-08-06 22:00 UTC"
    )
    assert shown_window("2025-08-05T06:00:00+00:00", "2025-08-07T06:00:00+00:00", "UTC") == (
        "2025-08-05 06:00 – 2025-08-07 06:00 UTC"
    )
