"""Compacting the log: each day's segments merged into one file, and [retention] applied.

A day past a rule's age is thinned as it is rewritten (``storage/retention.py``); any other day
is compacted with its events unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from ops import workspace
from storage import retention
from storage.errors import InputError
from storage.store import ParquetEventStore
from storage.store.base import CompactResult
from tasks import steps
from tasks.settings import Settings

Done = retention.Thinned | CompactResult


@dataclass
class Compaction:
    days: list[Done] = field(default_factory=list)
    frozen: int = 0  # frozen events of the regression set thinned


def compact(
    settings: Settings,
    store: ParquetEventStore,
    day: date | None = None,
    done: Callable[[Done], None] = lambda _: None,
    clock: steps.Clock = steps.SYSTEM_CLOCK,
) -> Compaction:
    """Every day of the log (or ``day``) compacted, ``done`` told of each as it ends; what the retention
    rules keep is counted back from today by ``clock``."""
    stored = store.days()
    if day is not None and day not in stored:
        raise InputError(f"no events for {day}; 'brief events' lists what the log holds")
    rules, today = retention.parse_rules(settings.retention), workspace.today(settings, clock)
    result = Compaction()
    for d in [day] if day else stored:
        outcome: Done | None = retention.apply(store, d, rules, today)
        if outcome is None:
            outcome = store.compact(d)
        result.days.append(outcome)
        done(outcome)
    if rules:
        result.frozen = retention.thin_frozen(store, rules, today)
    return result
