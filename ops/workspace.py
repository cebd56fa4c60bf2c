"""What a command works on: the event store the config's settings name, and the day.

The settings are loaded by the entrypoint (the command line, the desk, a flow) and handed here;
every entrypoint opens the store from them here, so a store that is not there is refused in one line, and
a date is checked (not after tomorrow) the same way wherever it is given.
"""

from __future__ import annotations

import contextlib
import os
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import date
from pathlib import Path

from storage.errors import StoreError
from storage.events import utcnow
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import Settings

Clock = steps.Clock
SYSTEM_CLOCK = steps.SYSTEM_CLOCK
Resources = steps.Resources
"""What a process builds once (``steps.bootstrap``) and hands to every service it calls: the store,
the models, the clock."""

Stage = Callable[[str], AbstractContextManager[object]]
"""A long part of a service, named for a person while it lasts (a spinner at the command line)."""


def quietly(what: str) -> AbstractContextManager[object]:
    """A stage nobody is shown."""
    return nullcontext()


def store_of(settings: Settings, *, must_exist: bool = True) -> ParquetEventStore:
    """The store of ``settings`` (loaded by the entrypoint); a store root that does not exist is
    refused unless ``must_exist`` is false (a command that writes the first events)."""
    store = settings.storage.event_store()
    if must_exist:
        refuse_missing(settings, store)
    return store


def refuse_missing(settings: Settings, store: ParquetEventStore) -> None:
    """A store root that does not exist, refused in one line (a command that reads the log)."""
    if not store.tree.exists():
        writable(settings, store)  # a root that could never be made says so, not "run 'brief run' first"
        raise StoreError(
            f"storage root {settings.storage.root!r} does not exist; run 'brief run' first "
            "or fix [storage] root in the config"
        )


def resources_of(
    settings: Settings, *, must_exist: bool = True, clock: steps.Clock | None = None
) -> Resources:
    """The composition root of a process: the store of ``settings`` (refused as ``store_of``
    refuses it), the models they name (loaded on first use) and the clock, built once per process
    for these settings (the same object) and clock. A command, the desk, a backfill's tasks, each
    date's run and its hooks, handed the same settings, share one store and make each model once."""
    key = (id(settings), id(clock))
    with _KEPT_LOCK:
        kept = _KEPT.get(key)
        if kept is None:
            kept = (settings, steps.bootstrap(settings, store_of(settings, must_exist=False), clock))
            _KEPT[key] = kept
            while len(_KEPT) > KEPT:
                _KEPT.popitem(last=False)
        _KEPT.move_to_end(key)
    if must_exist:
        refuse_missing(settings, kept[1].store)
    return kept[1]


KEPT = 8  # the resources of this many settings are kept (a process works with one, a test session with many)
# keyed by the settings' and the clock's identity; the settings are held, so their id is not reused
_KEPT: OrderedDict[tuple[int, int], tuple[Settings, Resources]] = OrderedDict()
_KEPT_LOCK = threading.Lock()


def writable(settings: Settings, store: ParquetEventStore | None = None) -> None:
    """Refuse (one line) a store root nothing can be written under: a probe file is written there
    and removed, with any folder the probe made, so that a command that writes fails before it
    starts, not half-way with a traceback (``/proc/…``, a path under a regular file, a read-only
    disk, a bucket without write access). ``store``: the settings' store, opened already."""
    root = settings.storage.root
    try:
        files = (store or settings.storage.event_store()).tree.files
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


def refuse_future(
    day: date, settings: Settings, option: str = "--date", clock: steps.Clock = steps.SYSTEM_CLOCK
) -> date:
    """``day``, refused (one line naming ``option``) when it is after tomorrow by ``clock``."""
    return steps.refuse_future(day, settings, option, clock)


def brief_day(
    settings: Settings, given: date | None, option: str = "--date", clock: steps.Clock = steps.SYSTEM_CLOCK
) -> date:
    """The day a command is about: ``given``, else today by ``clock``; never after tomorrow."""
    return steps.refuse_future(given or steps.today(settings, clock), settings, option, clock)


def run_tag() -> str:
    """A moment as a run id's suffix (``20250806T180000123456``)."""
    return utcnow().strftime("%Y%m%dT%H%M%S%f")


def brief_text(store: ParquetEventStore, path: str) -> str:
    """A brief file's text (its Markdown, say), by the path a run printed."""
    return store.tree.briefs.text(path)
