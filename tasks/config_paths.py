"""Paths written in a config file, taken relative to that file's folder.

A config names folders and files (the store root, a policy file, templates, prompts, a model, a
dated archive): a relative one means the config file's folder, wherever the command runs. The
types below say so once; the folder is the one of the file being read (``reading_from``), and a
value validated outside a file (a test's dict) is left as written.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

_FOLDER: ContextVar[Path | None] = ContextVar("config_folder", default=None)


@contextmanager
def reading_from(file: Path | None) -> Iterator[None]:
    """While validating what ``file`` holds: its relative paths are its folder's."""
    token = _FOLDER.set(file.resolve().parent if file is not None else None)
    try:
        yield
    finally:
        _FOLDER.reset(token)


def _absolute(value: str) -> str:
    """``value`` joined to the config file's folder when it is relative (``~`` counts as absolute)."""
    folder = _FOLDER.get()
    if folder is None or not value or Path(value).expanduser().is_absolute():
        return value
    return os.path.normpath(folder / value)


def _local_path(value: str | None) -> str | None:
    return _absolute(value) if value is not None else None


def _root(value: str) -> str:
    """A store root: a URL (``s3://…``) as it is, a folder relative to the config; never empty
    (an empty root would be whatever folder the command runs in)."""
    if not value.strip():
        raise ValueError("is empty; name the store's folder (relative to the config) or an s3:// URL")
    return value if "://" in value else _absolute(value)


def _model_ref(value: str) -> str:
    """A model: ``rules`` and ``builtin:<name>`` as they are, a file relative to the config."""
    return value if value == "rules" or value.startswith("builtin:") else _absolute(value)


def _feed_url(value: str) -> str:
    """A feed's address: ``file://archive/{date}.xml`` relative to the config; others as they are."""
    scheme = "file://"
    if value.startswith(scheme) and not value[len(scheme) :].startswith("/"):
        return scheme + _absolute(value[len(scheme) :])
    return value


ConfigPath = Annotated[str, AfterValidator(_absolute)]
"""A file or folder, relative to the config file's folder."""
OptionalConfigPath = Annotated[str | None, AfterValidator(_local_path)]
StoreRoot = Annotated[str, AfterValidator(_root)]
ModelRef = Annotated[str, AfterValidator(_model_ref)]
FeedUrl = Annotated[str, AfterValidator(_feed_url)]
