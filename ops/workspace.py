"""What a command works on: the config's settings, the event store they name, and the day.

Every entrypoint opens the store here, so a store that is not there is refused in one line, and
a date is checked (not after tomorrow) the same way wherever it is given.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import date
from pathlib import Path

from storage.errors import StoreError
from storage.events import utcnow
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import Settings, load_settings

Stage = Callable[[str], AbstractContextManager[object]]
"""A long part of a service, named for a person while it lasts (a spinner at the command line)."""


def quietly(what: str) -> AbstractContextManager[object]:
    """A stage nobody is shown."""
    return nullcontext()


def open_store(config: str | None, *, must_exist: bool = True) -> tuple[Settings, ParquetEventStore]:
    """The settings of ``config`` and their store; a store root that does not exist is refused
    unless ``must_exist`` is false (a command that writes the first events)."""
    settings = load_settings(config)
    return settings, store_of(settings, must_exist=must_exist)


def store_of(settings: Settings, *, must_exist: bool = True) -> ParquetEventStore:
    """The store of ``settings`` (parsed already); refused as ``open_store`` refuses it."""
    store = settings.storage.event_store()
    if must_exist and not store.tree.exists():
        writable(settings)  # a root that could never be made says so, not "run 'brief run' first"
        raise StoreError(
            f"storage root {settings.storage.root!r} does not exist; run 'brief run' first "
            "or fix [storage] root in the config"
        )
    return store


def writable(settings: Settings) -> None:
    """Refuse (one line) a store root nothing can be written under: a probe file is written there
    and removed, with any folder the probe made, so that a command that writes fails before it
    starts, not half-way with a traceback (``/proc/…``, a path under a regular file, a read-only
    disk, a bucket without write access)."""
    root = settings.storage.root
    try:
        files = settings.storage.event_store().tree.files
        made = _missing_folders(files.base) if files.is_local else []
        probe = files.path(f".brief-probe-{uuid.uuid4().hex}")
        try:
            files.write(probe, b"")
            files.delete(probe)
        finally:
            for folder in made:  # deepest first: only what the probe made, and only if empty
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
    except OSError as exc:
        why = exc.strerror or str(exc).splitlines()[0]
        raise StoreError(
            f"storage root {root!r} cannot be written ({why}); set [storage] root in the config "
            "to a folder you may write (or give the bucket's credentials write access)"
        ) from None


def _missing_folders(base: str) -> list[str]:
    """The folders of ``base`` (itself included) that do not exist yet, deepest first."""
    missing = []
    folder = Path(base)
    while not folder.exists() and folder != folder.parent:
        missing.append(str(folder))
        folder = folder.parent
    return missing


def today(settings: Settings, clock: steps.Clock = steps.SYSTEM_CLOCK) -> date:
    """Today in the configured timezone, by ``clock``."""
    return steps.today(settings, clock)


def refuse_future(day: date, settings: Settings, option: str = "--date") -> date:
    """``day``, refused (one line naming ``option``) when it is after tomorrow."""
    return steps.refuse_future(day, settings, option)


def brief_day(settings: Settings, given: date | None, option: str = "--date") -> date:
    """The day a command is about: ``given``, else today; never after tomorrow."""
    return steps.refuse_future(given or steps.today(settings), settings, option)


def run_tag() -> str:
    """A moment as a run id's suffix (``20250806T180000123456``)."""
    return utcnow().strftime("%Y%m%dT%H%M%S%f")


def brief_text(settings: Settings, path: str) -> str:
    """A brief file's text (its Markdown, say), by the path a run printed."""
    return settings.storage.event_store().tree.briefs.text(path)
