"""How the command line tells its errors apart: the command a usage error is about, and a withheld
brief (exit 1, the run's outcome) from a mistake in the input (exit 2)."""

from __future__ import annotations

import sys

from storage.errors import BriefError


def command_of(exc: Exception) -> str:
    """The command a usage error is about, as the person typed it (``brief policy rollback``)."""
    names, ctx = [], getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(["brief", *reversed(names)])


def withheld(exc: BriefError) -> bool:
    """A withheld brief (``ops.runs``, loaded only by the commands that run a day: not imported here)."""
    runs_module = sys.modules.get("ops.runs")
    return runs_module is not None and isinstance(getattr(exc, "cause", exc), runs_module.BriefWithheld)


def error_line(exc: BriefError) -> tuple[str, int]:
    """The line an error ends a command with, and its exit code: a withheld brief is the run's
    outcome (exit 1, as a failed date), said as withheld and why, not as a step that failed; any
    other is a mistake in the input (exit 2)."""
    if withheld(exc):
        return str(getattr(exc, "cause", exc)), 1
    return f"error: {exc}", 2


def refused_path(exc: OSError) -> str:
    """A path the system refused that no check caught before (a store root is probed first)."""
    return (
        f"error: cannot write or read {str(exc.filename)!r} ({exc.strerror or exc}); check that "
        "the path exists and that you may write there"
    )
