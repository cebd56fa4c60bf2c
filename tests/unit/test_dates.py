"""A date a person typed is read in one place (``tasks.dates``): the command line's options, the
desk's queries and forms, a flow's ``date_`` and a range's ends say a mistake in the same words."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from ops.runs import date_range
from storage.errors import InputError
from tasks import steps
from tasks.dates import given_day, parse_date
from tasks.settings import parse_settings


def test_a_date_is_read_or_refused_in_one_line_naming_where_it_was_given() -> None:
    assert parse_date("2025-08-06") == date(2025, 8, 6)
    assert parse_date(None) is None
    with pytest.raises(InputError, match=r"^--date '06-08-2025' is not a date; use YYYY-MM-DD"):
        parse_date("06-08-2025")
    with pytest.raises(InputError, match=r"^end '' is not a date"):
        parse_date("", "end")  # an empty option is a mistake; the desk passes an empty field as None
    with pytest.raises(InputError, match=r"^date 0001-01-01 is out of range"):
        parse_date("0001-01-01", "date")
    with pytest.raises(InputError, match=r"^--start '.{57}\.\.\.' is not a date"):
        given_day("x" * 200, "--start")  # a long value is cut in the message


def test_a_flow_and_a_range_read_their_dates_as_an_option_is_read() -> None:
    settings = parse_settings({"storage": {"root": "unused"}})
    clock = steps.FixedClock(datetime(2031, 2, 3, 12, tzinfo=UTC))
    assert steps.resolve_day(None, settings, clock) == date(2031, 2, 3)
    assert steps.resolve_day("2025-08-06", settings, clock) == date(2025, 8, 6)
    with pytest.raises(InputError, match=r"^date 'yesterday' is not a date"):
        steps.resolve_day("yesterday", settings, clock)
    with pytest.raises(InputError, match=r"^--end '2025-13-01' is not a date"):
        date_range("2025-08-01", "2025-13-01")
    assert date_range("2025-08-01", "2025-08-03")[-1] == date(2025, 8, 3)
