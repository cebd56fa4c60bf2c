"""What every command shares: ``--config``, ``--by``, the output format, the store, and how a
time and a person's name typed at the command line are read (a date: ``tasks.dates``, as the desk
and the flows read theirs; a mistake is one line, exit 2). What loads pyarrow, polars or Prefect
is imported when a command needs it."""

from __future__ import annotations

import os
import re
import sys
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from storage.errors import BriefError, InputError

if TYPE_CHECKING:
    from ops.workspace import Resources
    from storage.store import ParquetEventStore
    from tasks.settings import Settings


_USED: list[str] = []  # the command's `` --config PATH`` as a person would type it, once checked


def checked_config(config: str | None) -> Settings:
    """The settings of ``config``, read and checked before a command imports what loads pyarrow,
    polars, Prefect or the models: a mistake in the file is said in about a second."""
    from tasks.settings import load_settings

    settings = load_settings(config, keep=True)  # the command's first load_settings takes it
    _USED[:] = [settings.config_option]
    return settings


def remember_config(config: str | None) -> None:
    """The command's ``--config`` for its hints, when the file is not read through ``checked_config``
    (``brief check`` reads it itself, and says what is wrong with it)."""
    from tasks.settings import config_option_of, config_path

    try:
        _USED[:] = [config_option_of(config_path(config))]
    except BriefError:
        _USED.clear()  # no such file: its hint is to name the right one


def writable_out(path: Path, option: str = "--out") -> None:
    """``path``'s folder takes a file, said before the work that ends in writing it (one line, exit 2)."""
    import tempfile

    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the folders still to make are made in the nearest one that is
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".brief-probe-"):
            pass
    except OSError as exc:
        raise InputError(
            f"{option} {str(path)!r} cannot be written ({exc.strerror or exc}); "
            "choose a file in a folder you may write"
        ) from None


def with_config(said: str) -> str:
    """``said`` with each command quoted in it (``'brief …'``) given the command's ``--config``,
    when it has none: a hint is copied and run as printed."""
    if not _USED or not _USED[0]:
        return said
    option = _USED[0]
    return re.sub(
        r"'(brief [^']*)'",
        lambda m: m.group(0) if "--config" in m.group(1) else f"'{m.group(1)}{option}'",
        said,
    )


def forget_checked_config() -> None:
    """The command has ended: the settings its ``--config`` check kept are forgotten (``tasks.settings``
    is loaded only when a config was read)."""
    _USED.clear()
    settings = sys.modules.get("tasks.settings")
    if settings is not None:
        settings.forget_kept_settings()


def _config_first(config: str | None) -> str | None:
    """``--config`` (or ``BRIEF_CONFIG``) checked as it is parsed, before the command's body imports
    its services: a mistake in the file is the first thing said, at once."""
    if config is not None or os.environ.get("BRIEF_CONFIG"):
        checked_config(config)
    return config


ConfigOption = Annotated[
    str | None,
    typer.Option(
        "--config", "-c", help="Config file (default: $BRIEF_CONFIG or ./brief.toml).", callback=_config_first
    ),
]
# brief check reports a config's mistakes in its own table: its --config is read by the check itself
CheckedConfigOption = Annotated[
    str | None, typer.Option("--config", "-c", help="Config file (default: $BRIEF_CONFIG or ./brief.toml).")
]
ByOption = Annotated[str | None, typer.Option("--by", help="Who (default: $BRIEF_USER or $USER).")]


class Format(StrEnum):
    table = "table"
    jsonl = "jsonl"


def parse_time(text: str | None, option: str = "--as-of") -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{option} {text!r} is not an ISO time; use e.g. 2025-08-06T18:00:00Z") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def open_store(config: str | None, *, must_exist: bool = True) -> tuple[Settings, ParquetEventStore]:
    """The settings and the store of ``config`` (``ops/workspace.py``, imported when a command opens
    the store, once the config is read: it loads pyarrow and polars)."""
    from tasks.settings import load_settings

    settings = load_settings(config)
    return settings, store_of(settings, must_exist=must_exist)


def open_resources(config: str | None, *, must_exist: bool = True) -> tuple[Settings, Resources]:
    """The settings of ``config`` and the resources the composition root builds from them
    (``ops.workspace.resources_of``: the store, the models, the clock, once per process)."""
    from ops.workspace import resources_of
    from tasks.settings import load_settings

    settings = load_settings(config)
    return settings, resources_of(settings, must_exist=must_exist)


def store_of(settings: Settings, *, must_exist: bool = True) -> ParquetEventStore:
    """The store of settings a command has parsed already (``ops/workspace.py``)."""
    from ops.workspace import store_of as opened

    return opened(settings, must_exist=must_exist)


def person(by: str | None) -> str:
    """``--by``, else who runs the command ($BRIEF_USER, $USER), checked to be a name."""
    from ops.acts import approver
    from tasks.settings import PERSON_NAME

    who = by or approver()
    if not re.fullmatch(PERSON_NAME, who):
        raise InputError(f"--by {who!r} is not a name: use letters, digits, '.', '_' or '-' (at most 40)")
    return who


def prefect_defaults() -> None:
    """Before Prefect is imported: no analytics, and a temporary server (started when PREFECT_API_URL
    names none and no server can be kept, ``flows/keptserver.py``) gets 90 s to come up on a busy
    machine instead of 20."""
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
