"""The pace of Python's garbage collector in a ``brief`` process, and the heartbeats its runs send.

A command imports Prefect, Polars, PyArrow, pydantic's models and the project's modules: a
million or so objects that live as long as the process. At the default pace (a collection
every 700 new objects, a full one every 100 of those) the collector goes over them again and
again while they are made, and once more when the process ends, looking for cycles among
objects the end of the process frees anyway. On a warm run of the AI world's 14 sources
(2 cores, ``docs/benchmarks/daily_run.md``) that last pass alone was about 0.8 s of the
process's 4 s of CPU.
"""

from __future__ import annotations

import atexit
import gc
from contextlib import AbstractContextManager

YOUNG = 50_000  # new objects between two collections of the youngest generation (Python: 700)


def pace_collector() -> None:
    """Collect young objects every ``YOUNG`` allocations, and none at the exit.

    At the exit every object left is frozen: the interpreter still closes its modules, flushes
    the standard streams and frees what no cycle holds, but runs no collection over the rest.
    An object in a reference cycle is then not finalized; nothing a command writes waits for
    one (the run's log and the store's files are closed where they are written)."""
    gc.set_threshold(YOUNG, 10, 10)
    atexit.register(gc.freeze)  # registered first, so it runs after every other exit handler


def without_heartbeats() -> AbstractContextManager:
    """Runs started in this process send Prefect no flow-run heartbeats. A run's heartbeat thread
    sleeps a second at a time and the run waited for it to wake up as it ended (half a second of
    each run, on average); a run killed without a word is found by ``brief alerts --check``
    (``run.started`` records its process), which sets its Prefect run to Crashed."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
