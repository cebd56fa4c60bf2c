"""Run logs under the root: ``logs/D/run-<time>.log``, one file per run (``flows/runlog.py``)."""

from __future__ import annotations

from datetime import date, datetime

from storage.root.files import Files

LOGS = "logs"


class RunLogs:
    def __init__(self, files: Files) -> None:
        self.files = files

    def relative(self, day: date, started: datetime) -> str:
        return f"{LOGS}/{day.isoformat()}/run-{started:%Y%m%dT%H%M%S%f}.log"

    def upload(self, path: str, data: bytes) -> None:
        """A run log made on this machine, copied to the root (an object store's)."""
        with self.files.fs.open_output_stream(path) as out:
            out.write(data)
