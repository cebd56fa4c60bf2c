"""Great Expectations gates on the day's articles, brief items and events.

Three suites (GX Core 1.x, ephemeral context, pandas dataframes). Each is ``blocking``,
``warning`` or ``off`` by config (``[gates]``). A failed blocking suite fails the run with
a message that names the suite, the expectation and the offending rows; a failed warning
suite quarantines the offending rows (they leave the brief) and the run goes on. GX is
imported only here, when a gate runs (it costs seconds to import).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pandas as pd

from storage.errors import BriefError

Expectation = Callable[[Any], Any]  # gx.expectations module -> one expectation


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
        return f"{self.expectation}{where} on {len(self.rows)} row(s): {shown}"


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
        lambda x: x.ExpectColumnValuesToNotBeNull(column="url"),
        lambda x: x.ExpectColumnValuesToMatchRegex(column="url", regex=r"^https?://"),
        lambda x: x.ExpectColumnValuesToBeUnique(column="article_id"),
        lambda x: x.ExpectColumnValueLengthsToBeBetween(column="title", min_value=1),
        lambda x: x.ExpectColumnValuesToBeBetween(column="published_at", max_value=latest),
        lambda x: x.ExpectColumnValuesToBeInSet(column="source", value_set=list(sources)),
    ]


def item_suite(categories: Sequence[str]) -> list[Expectation]:
    return [
        lambda x: x.ExpectColumnValuesToBeUnique(column="story_id"),
        lambda x: x.ExpectColumnValuesToBeInSet(column="category", value_set=[*categories, "other"]),
        lambda x: x.ExpectColumnValuesToBeBetween(column="category_confidence", min_value=0, max_value=1),
        lambda x: x.ExpectColumnValuesToBeBetween(column="importance", min_value=0, max_value=1),
        lambda x: x.ExpectColumnValuesToBeBetween(column="citations", min_value=1),
        lambda x: x.ExpectColumnValueLengthsToBeBetween(column="title", min_value=1),
    ]


def event_suite(event_types: Sequence[str], brief_date: date) -> list[Expectation]:
    return [
        lambda x: x.ExpectColumnValuesToBeUnique(column="event_id"),
        lambda x: x.ExpectColumnValuesToBeInSet(column="event_type", value_set=list(event_types)),
        lambda x: x.ExpectColumnValuesToBeInSet(column="brief_date", value_set=[brief_date.isoformat()]),
        lambda x: x.ExpectColumnValuesToNotBeNull(column="run_id"),
    ]


def warm_up() -> None:
    """Import Great Expectations now (about 3 s), not when the gate runs: for a run that waits anyway."""
    import great_expectations  # noqa: F401


def validate(suites: Mapping[str, tuple[str, pd.DataFrame, str, list[Expectation]]]) -> list[SuiteResult]:
    """Run each suite ``name -> (mode, frame, id column, expectations)`` on its frame."""
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
        if mode == "off":
            continue
        if frame.empty:
            results.append(SuiteResult(name, mode, 0, len(expectations)))
            continue
        frame = frame.reset_index(drop=True)
        batch = (
            source.add_dataframe_asset(name)
            .add_batch_definition_whole_dataframe("all")
            .get_batch(batch_parameters={"dataframe": frame})
        )
        suite = gx.ExpectationSuite(name=name)
        for build in expectations:
            suite.add_expectation(build(gx.expectations))
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
