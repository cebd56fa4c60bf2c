"""The published briefs' files: the current brief per format, each version's files, the feed, and
the day's locks (``tasks/steps/publish.py`` writes them, ``ops/purge.py`` renders them again).

    briefs/D.{md,html,json}      the current brief (held or not), the store's copy the desk reads
    briefs/D/vN.{md,html,json}   version N, never changed once written (but by a purge)
    briefs/feed.xml              the readers' Atom feed of the latest dates (a held one once released)
    briefs/.D.lock               the day's lock: every writer of the day's briefs holds it
    briefs/.D.delivery.lock      a deliverer of the day's brief holds it while it sends
    briefs/.D.alerts.lock        an alerter of the day holds it while it sends
    briefs/.feed.lock            a writer of the feed holds it
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import date

from storage.brief import Brief, read_brief
from storage.lease import Held
from storage.root.files import Files

BRIEFS = "briefs"
FORMATS = ("md", "html", "json")
Day = date | str
_held = threading.local()  # the day locks this thread holds: path -> Held


def _iso(day: Day) -> str:
    return day if isinstance(day, str) else day.isoformat()


class BriefFiles:
    def __init__(self, files: Files) -> None:
        self.files = files
        self.folder = files.path(BRIEFS)

    def current(self, day: Day, ext: str = "json") -> str:
        """The day's current brief in one format: ``briefs/D.ext``."""
        return f"{self.folder}/{_iso(day)}.{ext}"

    def version(self, day: Day, number: int, ext: str = "json") -> str:
        """Version ``number`` of the day's brief in one format: ``briefs/D/vN.ext``."""
        return f"{self.folder}/{_iso(day)}/v{number}.{ext}"

    @property
    def feed(self) -> str:
        return f"{self.folder}/feed.xml"

    @contextlib.contextmanager
    def lock(self, day: Day) -> Iterator[Held]:
        """The day's lock, which whoever records a person's act on the day's brief, composes it
        and writes its files holds (a publish, an act, a purge's renders): reading the versions,
        writing the files and recording the version is one critical section. Taken again by the
        thread that holds it, it is the same hold (an act publishes under its own)."""
        path = f"{self.folder}/.{_iso(day)}.lock"
        holding: dict[str, Held] = _held.__dict__.setdefault("paths", {})
        if path in holding:
            yield holding[path]
            return
        with self.files.lock(path) as held:
            holding[path] = held
            try:
                yield held
            finally:
                del holding[path]

    def delivery_lock(self, day: Day) -> AbstractContextManager[Held]:
        return self.files.lock(f"{self.folder}/.{_iso(day)}.delivery.lock")

    def alerts_lock(self, day: Day) -> AbstractContextManager[Held]:
        return self.files.lock(f"{self.folder}/.{_iso(day)}.alerts.lock")

    def feed_lock(self) -> AbstractContextManager[Held]:
        return self.files.lock(f"{self.folder}/.feed.lock")

    def versions(self, day: Day) -> list[tuple[int, str]]:
        """The day's versions, oldest first: (number, its JSON file)."""
        found = []
        for info in self.files.listing(f"{self.folder}/{_iso(day)}"):
            name = info.base_name
            if name.startswith("v") and name.endswith(".json") and name[1:-5].isdigit():
                found.append((int(name[1:-5]), info.path))
        return sorted(found)

    def rendered(self, json_file: str, ext: str) -> str:
        """The file in format ``ext`` beside a brief's JSON file (current or version)."""
        return json_file[: -len("json")] + ext

    def exists(self, path: str) -> bool:
        return self.files.exists(path)

    def read(self, path: str) -> Brief:
        """A brief's JSON file as its model (``FileNotFoundError`` when there is none)."""
        return read_brief(self.files.read(path))

    def current_document(self, day: Day) -> Brief | None:
        """The day's current brief as readers have it, or None when none is published."""
        try:
            return self.read(self.current(day))
        except (FileNotFoundError, OSError):
            return None

    def text(self, path: str) -> str:
        return self.files.read(path).decode("utf-8")

    def write(self, path: str, text: str | bytes) -> str:
        return self.files.write(path, text.encode() if isinstance(text, str) else text)
