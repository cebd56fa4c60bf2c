"""Expectations whose outcome is evident without Great Expectations: every value plainly meets them.

Importing GX takes seconds, most of a warm run when a suite needs it. On most days every value
of a suite is plainly valid (a URL that starts with ``https://``, a known source, a date before
the limit), and then what GX would find is known: the suite is met, with no failure. ``met``
says so only when it is certain, the way GX reads the column: null values are left to
``ExpectColumnValuesToNotBeNull`` (GX skips them in every other expectation), strings are
compared as strings, numbers and dates as numbers and dates. Anything else (a value of
another type, a comparison Python refuses, an expectation or argument not listed here) is
"not evident", never "failed": GX then runs the suite and says what failed.
``tests/unit/test_gate_evident.py`` holds ``met`` to GX's own verdicts.
"""

from __future__ import annotations

import re
from datetime import datetime
from numbers import Real
from typing import Any

import pandas as pd

Expectation = tuple[str, dict[str, Any]]  # a class of gx.expectations and its arguments

_BOUNDS = {"column", "min_value", "max_value"}


def met(frame: pd.DataFrame, expectation: Expectation) -> bool:
    """True when GX would find ``expectation`` met on ``frame``; False when that is not evident."""
    kind, arguments = expectation
    column = arguments.get("column")
    if column not in frame.columns:
        return False
    values = frame[column]
    if kind == "ExpectColumnValuesToNotBeNull" and set(arguments) == {"column"}:
        return not bool(values.isna().any())
    present = values[values.notna()].tolist()
    if kind == "ExpectColumnValuesToBeUnique" and set(arguments) == {"column"}:
        return _strings(present) and len(set(present)) == len(present)
    if kind == "ExpectColumnValuesToBeInSet" and set(arguments) == {"column", "value_set"}:
        allowed = set(arguments["value_set"])
        return _strings(present) and _strings(allowed) and all(v in allowed for v in present)
    if kind == "ExpectColumnValuesToMatchRegex" and set(arguments) == {"column", "regex"}:
        # anchored at the start: GX's search, match and contains agree
        pattern = arguments["regex"]
        anchored = isinstance(pattern, str) and pattern.startswith("^")
        return anchored and _strings(present) and all(re.search(pattern, v) for v in present)
    if kind == "ExpectColumnValueLengthsToBeBetween" and set(arguments) <= _BOUNDS:
        return _strings(present) and _between([len(v) for v in present], arguments)
    if kind == "ExpectColumnValuesToBeBetween" and set(arguments) <= _BOUNDS:
        return _between(present, arguments)
    return False


def _strings(values: Any) -> bool:
    return all(isinstance(v, str) for v in values)


def _between(values: list[Any], arguments: dict[str, Any]) -> bool:
    """Every value within the inclusive bounds, each bound of the values' own kind."""
    low, high = arguments.get("min_value"), arguments.get("max_value")
    bounds = [b for b in (low, high) if b is not None]
    if not bounds:
        return False
    if all(_number(b) for b in bounds):
        kind_ok = _number
    elif all(_aware(b) for b in bounds):
        kind_ok = _aware
    else:
        return False
    if not all(kind_ok(v) for v in values):
        return False
    return all((low is None or low <= v) and (high is None or v <= high) for v in values)


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool)


def _aware(value: Any) -> bool:
    return isinstance(value, datetime) and value.tzinfo is not None  # pd.Timestamp is one
