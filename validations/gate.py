"""Great Expectations gates on the day's articles, brief items and events.

Three suites (GX Core 1.x, ephemeral context, pandas dataframes). Each is ``blocking``,
``warning`` or ``off`` by config (``[gates]``). A failed blocking suite fails the run with
a message that names the suite, the expectation and the offending rows; a failed warning
suite quarantines the offending rows (they leave the brief) and the run goes on. GX is
imported only here, when a suite needs it (it costs seconds to import): a suite whose every
value evidently meets its expectations (``validations/evident.py``) is met without it. An
expectation is data, its GX class name and arguments.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

import pandas as pd

from storage.errors import BriefError
from validations.evident import Expectation, met

Suite = tuple[str, pd.DataFrame, str, list[Expectation]]  # mode, frame, id column, expectations


class GateFailed(BriefError):
    """A blocking suite failed."""


@dataclass(frozen=True)
class Failure:
    suite: str
    expectation: str
    column: str | None
    rows: tuple[str, ...]  # the offending rows' ids

    def describe(self) -> str:
        shown = ", ".join(self.rows[:5]) + (f" … (+{len(self.rows) - 5})" if len(self.rows) > 5 else "")
        where = f"({self.column})" if self.column else ""
        return (
            f"{self.expectation}{where} on {len(self.rows)} row{'' if len(self.rows) == 1 else 's'}: {shown}"
        )


@dataclass
class SuiteResult:
    suite: str
    mode: str
    rows: int
    evaluated: int
    failures: list[Failure] = field(default_factory=list)

    @property
    def success(self) -> bool:
        return not self.failures

    @property
    def quarantined(self) -> list[str]:
        return sorted({r for f in self.failures for r in f.rows}) if self.mode == "warning" else []


def article_suite(sources: Sequence[str], brief_date: date) -> list[Expectation]:
    latest = datetime.combine(brief_date + timedelta(days=2), time(0), tzinfo=UTC)
    return [
        ("ExpectColumnValuesToNotBeNull", {"column": "url"}),
        ("ExpectColumnValuesToMatchRegex", {"column": "url", "regex": r"^https?://"}),
        ("ExpectColumnValuesToBeUnique", {"column": "article_id"}),
        ("ExpectColumnValueLengthsToBeBetween", {"column": "title", "min_value": 1}),
        ("ExpectColumnValuesToBeBetween", {"column": "published_at", "max_value": latest}),
        ("ExpectColumnValuesToBeInSet", {"column": "source", "value_set": list(sources)}),
    ]


def item_suite(categories: Sequence[str]) -> list[Expectation]:
    return [
        ("ExpectColumnValuesToBeUnique", {"column": "story_id"}),
        ("ExpectColumnValuesToBeInSet", {"column": "category", "value_set": [*categories, "other"]}),
        ("ExpectColumnValuesToBeBetween", {"column": "category_confidence", "min_value": 0, "max_value": 1}),
        ("ExpectColumnValuesToBeBetween", {"column": "importance", "min_value": 0, "max_value": 1}),
        ("ExpectColumnValuesToBeBetween", {"column": "citations", "min_value": 1}),
        ("ExpectColumnValueLengthsToBeBetween", {"column": "title", "min_value": 1}),
    ]


def event_suite(event_types: Sequence[str], brief_date: date) -> list[Expectation]:
    """The day's events. ``derived_from``: how many events a derived event of the run names as its
    sources (``storage.lineage.SOURCED``), empty for the others; a derived event names at least one."""
    return [
        ("ExpectColumnValuesToBeUnique", {"column": "event_id"}),
        ("ExpectColumnValuesToBeInSet", {"column": "event_type", "value_set": list(event_types)}),
        ("ExpectColumnValuesToBeInSet", {"column": "brief_date", "value_set": [brief_date.isoformat()]}),
        ("ExpectColumnValuesToNotBeNull", {"column": "run_id"}),
        ("ExpectColumnValuesToBeBetween", {"column": "derived_from", "min_value": 1}),
    ]


def validate(suites: Mapping[str, Suite], *, evident: bool = True) -> list[SuiteResult]:
    """Run each suite ``name -> (mode, frame, id column, expectations)`` on its frame.

    A suite whose expectations are all evidently met gets the result GX gives it (no failure)
    without GX; GX runs the others, or every suite when ``evident`` is False.
    """
    results: dict[str, SuiteResult] = {}
    asked = {}
    for name, (mode, frame, id_column, expectations) in suites.items():
        if mode == "off":
            continue
        if frame.empty or (evident and all(met(frame, e) for e in expectations)):
            results[name] = SuiteResult(name, mode, len(frame), len(expectations))
        else:
            asked[name] = (mode, frame, id_column, expectations)
    if asked:
        results |= {r.suite: r for r in _with_gx(asked)}
    return [results[name] for name in suites if name in results]


def _with_gx(suites: Mapping[str, Suite]) -> list[SuiteResult]:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import logging

    import great_expectations as gx

    logging.getLogger("great_expectations").setLevel(logging.ERROR)
    from great_expectations.data_context.types.base import ProgressBarsConfig

    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)  # a run's log tells the run
    source = context.data_sources.add_pandas("brief")
    results = []
    for name, (mode, frame, id_column, expectations) in suites.items():
        frame = frame.reset_index(drop=True)
        batch = (
            source.add_dataframe_asset(name)
            .add_batch_definition_whole_dataframe("all")
            .get_batch(batch_parameters={"dataframe": frame})
        )
        suite = gx.ExpectationSuite(name=name)
        for kind, arguments in expectations:
            suite.add_expectation(getattr(gx.expectations, kind)(**arguments))
        # a pass needs no row lists: only a failed suite is validated again, naming its rows
        outcome = batch.validate(suite, result_format={"result_format": "BASIC"})
        if not outcome.success:
            outcome = batch.validate(suite, result_format={"result_format": "COMPLETE"})
        result = SuiteResult(name, mode, len(frame), len(expectations))
        for check in outcome.results:
            config = check.expectation_config
            if check.success or config is None:
                continue
            indices = check.result.get("unexpected_index_list") or []
            rows = tuple(str(frame.loc[i, id_column]) for i in indices if isinstance(i, int))
            result.failures.append(Failure(name, config.type, config.kwargs.get("column"), rows))
        results.append(result)
    return results


def blocking_message(results: Sequence[SuiteResult]) -> str | None:
    failed = [f for r in results if r.mode == "blocking" for f in r.failures]
    if not failed:
        return None
    return "blocking suite failed: " + "; ".join(f"'{f.suite}': {f.describe()}" for f in failed)
