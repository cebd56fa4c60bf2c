"""A date a person typed (an option, a query, a form, a flow's parameter), read in one place: a
mistake is one line naming where it was given (``InputError``)."""

from __future__ import annotations

from datetime import date

from storage.errors import InputError

# the days anything may ask about: every window of days read around one (a month, two weeks and the
# days before them) stays inside the calendar
FIRST_DAY, LAST_DAY = date(1900, 1, 1), date(2999, 12, 31)


def shown(text: str) -> str:
    """A value a person gave, quoted for a one-line message: short, its controls escaped."""
    return repr(text if len(text) <= 60 else text[:57] + "...")


def parse_date(text: str | None, name: str = "--date") -> date | None:
    """The date ``text`` names (None: nothing given); ``name`` is where it was given (``--date``,
    a query's ``end``), said in the one line that refuses anything else or a day outside
    ``FIRST_DAY`` .. ``LAST_DAY``."""
    if text is None:
        return None
    try:
        given = date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name} {shown(text)} is not a date; use YYYY-MM-DD, e.g. 2025-08-06") from None
    if not FIRST_DAY <= given <= LAST_DAY:
        raise InputError(f"{name} {given} is out of range; give a date from {FIRST_DAY} to {LAST_DAY}")
    return given


def given_day(text: str, name: str = "--date") -> date:
    """A date that must be given (an option typer requires, a range's ends), read as ``parse_date``."""
    day = parse_date(text, name)
    assert day is not None  # a text is a date or refused
    return day
