"""Stopping a run on purpose: Ctrl-C (SIGINT), SIGTERM (a service manager stopping it), or a
cancellation from the Prefect UI (the flow run's state set to Cancelling).

Each ends the run the same way: Prefect sees the interruption in the flow (a KeyboardInterrupt,
SIGTERM included) and calls the flow's ``on_crashed`` hook, which records
``run.cancelled`` instead of ``run.crashed`` (``how_stopped``) and marks the flow run Cancelled;
``brief run`` then says one line and exits 130. A cancellation from the UI is turned into the
same interruption of the main thread by a thread that watches the flow run's state.

What this process learnt of the interruption (who asked, the last step that ended) is kept in
``STOP``, which the hook reads in the same process.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from storage.errors import BriefError

# the messages Prefect gives a flow run crashed by each interruption (prefect.states)
_BY_MESSAGE = {
    "Execution was aborted by an interrupt signal.": "SIGINT",
    "Execution was aborted by a termination signal.": "SIGTERM",
}
WATCH_EVERY_S = 1.0  # how often the flow run's state is read for a cancellation from the UI


class Interrupted(BriefError):
    """A command stopped on purpose (Ctrl-C, SIGTERM, the Prefect UI): one line, exit 130."""

    code = 130


class ServerGone(Interrupted):
    """The kept Prefect server a run reported to stopped under it (``brief serve --stop`` in another
    shell): the run is recorded as crashed; one line, exit 1, as a failed run."""

    code = 1


@dataclass
class Stop:
    """What this process knows of a run's interruption."""

    how: str | None = None  # SIGINT, SIGTERM or prefect-ui, once asked
    after: str = ""  # the last step that ended
    run_id: str | None = None  # the flow run's, once it has logged
    # what the command does when the flow has not ended GRACE_S after the interruption (Prefect
    # waits for the tasks still running, a fetch of a slow feed say): record and exit at once
    overdue: Callable[[], None] | None = None
    context: contextvars.Context | None = None  # the command's, where Prefect knows its server
    server_gone: str = ""  # the URL of the kept Prefect server, once it stopped under the run

    def note_step(self, line: str) -> None:
        self.after = line.split(maxsplit=1)[0] if line.strip() else self.after


STOP = Stop()


def lose_server(url: str) -> None:
    """The kept Prefect server at ``url`` stopped while a run reported to it (called by the thread
    that watches it): the run is interrupted as by Ctrl-C, and ends as ``ServerGone``."""
    if STOP.server_gone:
        return
    STOP.server_gone = url
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)


def how_stopped(message: str) -> str | None:
    """How a crashed flow run was stopped on purpose (SIGINT, SIGTERM, prefect-ui), or None when
    its crash was not an interruption (its process failed in another way, or the kept Prefect
    server it reported to stopped under it)."""
    if STOP.server_gone:
        return None
    if STOP.how is not None:
        return STOP.how
    return _BY_MESSAGE.get(message.strip())


def cancelled_from_outside(stop: Stop) -> bool:
    """Whether a flow run seen Cancelling or Cancelled was cancelled from outside (the Prefect UI)
    and must be interrupted. Not when the run is stopping already (Ctrl-C, SIGTERM): its hook marks
    it Cancelled, and a second interruption would land in the command's unwinding, which then
    ends with a line that says nothing of the run."""
    return stop.how is None


def mark_cancelled(flow_run_id: Any, message: str) -> None:
    """Mark the flow run Cancelled in Prefect (the engine has just marked it Crashed)."""
    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(flow_run_id, Cancelled(message=message), force=True)


GRACE_S = 2.0  # an interrupted run whose flow has not ended by then is ended by the command


def _on_signal(signum: int, frame: Any) -> None:
    first = STOP.how is None or not getattr(STOP, "_timer", None)
    if STOP.how is None:
        STOP.how = signal.Signals(signum).name
    if first and STOP.overdue is not None:
        timer = threading.Timer(GRACE_S, _overdue)
        timer.daemon = True
        timer.start()
        STOP._timer = timer  # type: ignore[attr-defined]
    raise KeyboardInterrupt


def _overdue() -> None:
    if STOP.overdue is not None:
        # a copy: the thread that watches for a cancellation from the UI may be in the context itself
        (STOP.context.copy() if STOP.context else contextvars.copy_context()).run(STOP.overdue)


class _CancellationWatch(logging.Handler):
    """Starts watching the flow run's state once its first log record names it."""

    def __init__(self) -> None:
        super().__init__()
        self.done = threading.Event()
        self.thread: threading.Thread | None = None
        # Prefect's settings of the command (the server it reports to) live in a context
        # variable, which a new thread does not inherit: the watch runs in a copy of it
        self.context = contextvars.copy_context()

    def emit(self, record: logging.LogRecord) -> None:
        flow_run_id = getattr(record, "flow_run_id", None)
        if (
            threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is not _on_signal
        ):
            # SIGTERM as Ctrl-C, in place of the handler Prefect's engine installs for the flow run
            # (its TerminationSignal, raised inside a task it is starting, can fail the run instead)
            signal.signal(signal.SIGTERM, _on_signal)
        if self.thread is None and flow_run_id:
            STOP.run_id = str(flow_run_id)
            self.thread = threading.Thread(
                target=self.context.run,
                args=(self.watch, flow_run_id),
                name="cancellation-watch",
                daemon=True,
            )
            self.thread.start()

    def watch(self, flow_run_id: str) -> None:
        from prefect.client.orchestration import get_client

        with get_client(sync_client=True) as client:
            while not self.done.wait(WATCH_EVERY_S):
                try:
                    state = client.read_flow_run(UUID(str(flow_run_id))).state
                except Exception:  # the server busy for a moment: ask again
                    continue
                if state is not None and (state.is_cancelling() or state.is_cancelled()):
                    if not cancelled_from_outside(STOP):
                        return
                    STOP.how = "prefect-ui"
                    # a real signal, to the main thread: it wakes a wait on a task's result
                    # (``_thread.interrupt_main`` would only be seen once that wait ended)
                    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                    return


@contextlib.contextmanager
def interruptible() -> Iterator[Stop]:
    """While a command runs flows in this process: SIGINT and SIGTERM stop it (Prefect's own SIGTERM
    handler takes over while a flow runs, to the same end). Handlers are put back after."""
    # each command its own stop (the tests run several commands in one process)
    STOP.how, STOP.after, STOP.run_id, STOP.server_gone = None, "", None, ""
    STOP._timer = None  # type: ignore[attr-defined]
    previous = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield STOP
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def cancellable() -> Iterator[None]:
    """While a flow runs in this process: a cancellation from the Prefect UI stops it as Ctrl-C does.
    Entered once Prefect is imported (its logging set-up replaces the handlers of its loggers)."""
    watch = _CancellationWatch()
    STOP.context = watch.context
    flow_runs = logging.getLogger("prefect.flow_runs")
    flow_runs.addHandler(watch)
    try:
        yield
    finally:
        watch.done.set()
        flow_runs.removeHandler(watch)


def stop_now(code: int) -> None:
    """Exit at once: what Prefect still has to send gets two seconds (none when its server is gone),
    and tasks still running in other threads (a fetch, a model) are not waited for; all the run
    keeps is written already."""
    import os
    import sys

    if "prefect" in sys.modules and not STOP.server_gone:
        from prefect.events.worker import EventsWorker
        from prefect.logging.handlers import APILogWorker

        EventsWorker.drain_all(timeout=2)
        APILogWorker.drain_all(timeout=2)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
