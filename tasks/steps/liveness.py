"""Runs the log says are running, and whether their process still exists.

A run records its host, pid and the process's start time in ``run.started``. A process
killed with SIGKILL (or by the out-of-memory killer, or a reboot) says nothing, and Prefect
keeps such a run "running"; a check on the same host later finds its pid gone (or taken by
another process, or a zombie nobody reaped) and the run is recorded as ``run.crashed``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Literal

from storage.events import Event, new_event, utcnow
from storage.payloads import RunStarted
from storage.store import ParquetEventStore
from storage.typed import payload_of

ENDED = ("run.finished", "run.failed", "run.crashed", "run.cancelled")


@dataclass(frozen=True)
class OpenRun:
    """A daily run with a ``run.started`` and no end in the log."""

    run_id: str
    day: date
    started_at: datetime
    process: dict | None


def open_runs(store: ParquetEventStore, days: Sequence[date]) -> list[OpenRun]:
    """The daily runs of ``days`` that started and have not ended (running, or gone without a word)."""
    events = store.read(days=days, event_types=["run.started", *ENDED])
    ended = {e.run_id for e in events if e.event_type in ENDED}
    return [
        OpenRun(
            e.run_id, e.brief_date, e.occurred_at, started.process.model_dump() if started.process else None
        )
        for e in events
        if e.event_type == "run.started" and e.run_id not in ended
        if (started := payload_of(e, RunStarted)).flow == "daily-brief"
    ]


def crashed_event(
    run_id: str, day: date, how: str, message: str, detected_by: Literal["hook", "check"]
) -> Event:
    """``run.crashed`` for a run; whoever notices first records it, the same event (one per run)."""
    return new_event(
        "run.crashed",
        {"how": how, "message": message[:2000], "detected_by": detected_by},
        brief_date=day,
        run_id=run_id,
        subject_id=run_id,
        produced_by="flow.daily@1",
        occurred_at=utcnow(),
    )


def cancelled_event(run_id: str, day: date, how: str, after: str, message: str) -> Event:
    """``run.cancelled`` for a run stopped on purpose (Ctrl-C, SIGTERM, the Prefect UI); one per run."""
    return new_event(
        "run.cancelled",
        {"how": how, "after": after, "message": message[:2000]},
        brief_date=day,
        run_id=run_id,
        subject_id=run_id,
        produced_by="flow.daily@1",
        occurred_at=utcnow(),
    )


def this_process() -> dict:
    """The ``process`` of a ``run.started`` payload for the calling process."""
    return {"host": socket.gethostname(), "pid": os.getpid(), "started": _start_ticks(os.getpid())}


def process_gone(process: dict | None) -> bool | None:
    """True when the run's process no longer exists, False while it does, None when this host
    cannot tell (another host ran it, or the run did not say)."""
    if not process or process.get("host") != socket.gethostname():
        return None
    pid = int(process["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # another user's process: it exists
    stat = _stat(pid)
    if stat is None:
        return False  # no /proc to look further: the pid exists
    state, ticks = stat
    if state == "Z":
        return True  # killed, and its parent has not reaped it yet
    return process.get("started") is not None and ticks != process["started"]  # the pid was reused


def _start_ticks(pid: int) -> int | None:
    stat = _stat(pid)
    return stat[1] if stat else None


def _stat(pid: int) -> tuple[str, int] | None:
    """The process's state letter and start time (clock ticks after boot), from ``/proc``."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[0], int(fields[19])
