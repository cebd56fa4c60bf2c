"""Run logs under the root: ``logs/D/run-<time>.log``, one file per run, and ``logs/D/backfill-<time>.log``
for a backfill starting on D (``flows/runlog.py``)."""

from __future__ import annotations

from datetime import date, datetime

from storage.root.files import Files

LOGS = "logs"


class RunLogs:
    def __init__(self, files: Files) -> None:
        self.files = files

    def relative(self, day: date, started: datetime, kind: str = "run") -> str:
        """``kind``: ``run`` (one day's run), ``backfill`` (a range, filed under its first day)."""
        return f"{LOGS}/{day.isoformat()}/{kind}-{started:%Y%m%dT%H%M%S%f}.log"

    def upload(self, path: str, data: bytes) -> None:
        """A run log made on this machine, copied to the root (an object store's)."""
        with self.files.fs.open_output_stream(path) as out:
            out.write(data)
