"""What ``brief run`` shows, and where the rest of a run's output goes.

The screen gets one line per step (the records the flow marks with ``STEP_LINE``) and then the
brief. Everything else a run prints (Prefect's log lines, its server, Great
Expectations, the embedding model's loading and progress bars, warnings) goes to the run's log
file: ``{root}/logs/{date}/run-{UTC time}.log``. On an object store the file is written
locally and copied there when the run ends. With ``--verbose`` it goes to the screen (stderr)
as well.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TextIO

from flows.daily import STEP_LINE
from storage.events import utcnow
from storage.root.logs import RunLogs
from storage.store import ParquetEventStore
from tasks.embed import LOADING_LOG, MODEL_LOADING
from tasks.settings import Settings


@dataclass(frozen=True)
class RunLog:
    local: Path  # where the run writes it
    shown: str  # where it ends up (the store's path), as the screen names it
    upload: str | None = None  # the store path to copy it to when the run ends (an object store)
    logs: RunLogs | None = None  # the root's run logs, which take that copy


def run_log(settings: Settings, store: ParquetEventStore, day: date, kind: str = "run") -> RunLog:
    """The run's log file: under the root of ``store`` (the settings', opened already), or a local copy
    of it when the root is remote. ``kind="backfill"``: one file for a whole backfill, filed under its
    first day."""
    tree = store.tree
    name = tree.logs.relative(day, utcnow(), kind)
    target = tree.files.path(name)
    if tree.is_local:
        return RunLog(Path(target), target)
    folder = Path(tempfile.mkdtemp(prefix="brief-run-log-"))
    local = folder / Path(name).name
    return RunLog(local, f"{settings.storage.root.rstrip('/')}/{name}", upload=target, logs=tree.logs)


def _is_console(handler: logging.Handler) -> bool:
    """A handler that writes to a terminal stream: Prefect's console handlers, and the plain
    ``StreamHandler`` a library adds (transformers); never a file, nor a test runner's capture."""
    if not isinstance(handler, logging.StreamHandler) or isinstance(handler, logging.FileHandler):
        return False
    return type(handler).__module__.split(".")[0] in {"logging", "prefect"}


def _loggers() -> list[logging.Logger]:
    named = [v for v in logging.Logger.manager.loggerDict.values() if isinstance(v, logging.Logger)]
    return [logging.getLogger(), *named]


def _like(handler: logging.Handler, stream: TextIO) -> logging.Handler:
    """A plain stream handler to ``stream`` with ``handler``'s level, formatter and filters."""
    copy = logging.StreamHandler(stream)
    copy.setLevel(handler.level)
    copy.setFormatter(handler.formatter)
    for f in handler.filters:
        copy.addFilter(f)
    return copy


class _ModelLoading(logging.Handler):
    """Tells ``show`` what model is loading (the record's message), and when it is loaded (None)."""

    def __init__(self, show: Callable[[str | None], None]) -> None:
        super().__init__()
        self.show = show

    def emit(self, record: logging.LogRecord) -> None:
        loading = getattr(record, MODEL_LOADING, None)
        if loading is not None:
            self.show(record.getMessage() if loading else None)


class _StepLines(logging.Handler):
    """Prints the flow's step lines (records marked ``marker``: ``STEP_LINE`` for a run)."""

    def __init__(self, show: Callable[[str], None], marker: str = STEP_LINE) -> None:
        super().__init__()
        self.show, self.marker = show, marker

    def filter(self, record: logging.LogRecord) -> bool:
        return bool(getattr(record, self.marker, False))

    def emit(self, record: logging.LogRecord) -> None:
        self.show(record.getMessage())


@contextlib.contextmanager
def run_output(
    log: RunLog,
    show: Callable[[str], None],
    *,
    verbose: bool = False,
    marker: str = STEP_LINE,
    loading: Callable[[str | None], None] | None = None,
) -> Iterator[None]:
    """While a run goes: its lines (records marked ``marker``: a run's steps, a backfill's dates) to
    ``show``; a slow model's first load to ``loading`` (what loads, then None once it is loaded),
    for the spinner to say; every console log handler, and stderr (progress
    bars, warnings), to the run's log file; with ``verbose``, console handlers to the screen's
    stderr as well. All is put back when the run ends, and a remote log is copied to the store."""
    log.local.parent.mkdir(parents=True, exist_ok=True)
    stream = log.local.open("a", encoding="utf-8", buffering=1)
    swapped: list[tuple[logging.Logger, logging.Handler, list[logging.Handler]]] = []
    for logger in _loggers():
        for handler in [h for h in logger.handlers if _is_console(h)]:
            instead = [_like(handler, stream)] + ([_like(handler, sys.stderr)] if verbose else [])
            logger.removeHandler(handler)
            for h in instead:
                logger.addHandler(h)
            swapped.append((logger, handler, instead))
    steps = _StepLines(show, marker)
    flow_runs = logging.getLogger("prefect.flow_runs")
    flow_runs.addHandler(steps)
    models = _ModelLoading(loading or (lambda _: None))
    LOADING_LOG.addHandler(models)
    screen = sys.stderr
    if not verbose:
        sys.stderr = stream
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            stop_temporary_server()  # its goodbye goes to the log too, not to the screen at exit
        sys.stderr = screen
        flow_runs.removeHandler(steps)
        LOADING_LOG.removeHandler(models)
        for logger, handler, instead in reversed(swapped):
            for h in instead:
                logger.removeHandler(h)
            logger.addHandler(handler)
        for logger in _loggers():  # handlers made during the run (a library imported then) keep stderr
            for handler in logger.handlers:
                if isinstance(handler, logging.StreamHandler) and handler.stream is stream:
                    handler.setStream(sys.stderr)
        stream.close()
        if log.upload:
            _upload(log)


def stop_temporary_server() -> None:
    """Flush the run's logs and events to Prefect's temporary server, when the run started one,
    and stop it now (else it says goodbye on the screen when the process exits)."""
    if (
        "prefect.server.api.server" not in sys.modules
    ):  # no temporary server started (importing it costs seconds)
        return
    from prefect.server.api.server import SubprocessASGIServer

    server = SubprocessASGIServer._instances.get(None)
    if server is None or not server.running:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    EventsWorker.drain_all(timeout=30)
    APILogWorker.drain_all(timeout=30)
    server.stop()


def _upload(log: RunLog) -> None:
    assert log.upload is not None and log.logs is not None
    log.logs.upload(log.upload, log.local.read_bytes())
    log.local.unlink()
    log.local.parent.rmdir()
