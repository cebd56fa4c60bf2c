"""Many sources collected at once, run after run, under a real Prefect server: the context their
tasks share is not changed while they run, and the run's counts come out exact.

A run failed now and then with "dictionary changed size during iteration": Prefect walked the
context it handed to each collect task (dataclass fields, dicts, sets) while the tasks already
running added event types to the context's counts. This runs the flow's collection
(``flows.daily.collect_all``) on 40 sources, three times over, while a thread walks the shared
context as Prefect walks a task argument, and records which threads write the context's counts
and written days: only the flow's own thread may, once the tasks are done.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.utilities.collections import visit_collection

from flows.daily import collect_all
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import Settings, parse_settings
from tests.conftest import REPO
from tests.runs import hashing_run

DAY = date(2025, 8, 6)
SOURCES, ROUNDS = 40, 3


class WrittenDict(dict):
    """A dict that remembers which threads wrote to it."""

    def __init__(self, *items: Any) -> None:
        super().__init__(*items)
        self.writers: set[int] = set()

    def __setitem__(self, key: Any, value: Any) -> None:
        self.writers.add(threading.get_ident())
        super().__setitem__(key, value)


class WrittenSet(set):
    """A set that remembers which threads added to it."""

    def __init__(self, *items: Any) -> None:
        super().__init__(*items)
        self.writers: set[int] = set()

    def add(self, item: Any) -> None:
        self.writers.add(threading.get_ident())
        super().add(item)

    def update(self, *others: Any) -> None:
        self.writers.add(threading.get_ident())
        super().update(*others)


def settings_for(tmp_path: Path) -> Settings:
    feeds = (REPO / "samples" / "feeds").as_uri()
    # two real archives and a missing one: articles, fetches and failures, each source its own
    kinds = ("labnotes/{date}.xml", "techwire/{date}.xml", "gone/{date}.xml")
    sources = [{"name": f"source-{k:02d}", "url": f"{feeds}/{kinds[k % 3]}"} for k in range(SOURCES)]
    return parse_settings({"storage": {"root": str(tmp_path / "store")}, "sources": sources})


@flow(name="collect-at-once")
def collect_rounds(root: str, settings: Settings) -> list[str]:
    problems: list[str] = []
    for n in range(ROUNDS):
        counts, days = WrittenDict(), WrittenSet()
        run = hashing_run(ParquetEventStore(f"{root}/{n}"), settings, DAY, f"round-{n}")
        ctx = dataclasses.replace(run, counts=counts, written_days=days)
        done = threading.Event()

        def walk(ctx: steps.RunContext = ctx, done: threading.Event = done, n: int = n) -> None:
            while not done.wait(0.0005):  # walks again and again, leaving the tasks most of the time
                try:
                    visit_collection(ctx, lambda value: value, return_data=False)
                except RuntimeError as exc:  # "dictionary changed size during iteration"
                    problems.append(f"round {n}: walking the shared context failed: {exc}")
                    return

        walker = threading.Thread(target=walk)
        walker.start()
        try:
            outcomes = collect_all(ctx)
        finally:
            done.set()
            walker.join()
        others = (counts.writers | days.writers) - {threading.get_ident()}
        if others:
            problems.append(f"round {n}: {len(others)} task thread(s) wrote the shared context")
        expected: Counter[str] = Counter()
        for outcome in outcomes:
            expected.update(outcome.counts)
        if dict(counts) != dict(expected) or not expected["feed.failed"] or not expected["article.collected"]:
            problems.append(f"round {n}: counts {dict(counts)} where the sources counted {dict(expected)}")
        if days != {DAY}:
            problems.append(f"round {n}: written days {sorted(days)}")
    return problems


def test_forty_sources_collected_at_once_leave_the_shared_context_alone_run_after_run(
    tmp_path: Path, prefect_harness: None
) -> None:
    problems = collect_rounds(str(tmp_path / "stores"), settings_for(tmp_path))
    assert problems == []
