"""Recent runs, from the ``runs`` projection of the log: status, events of each type, seconds per
step, and a failed run's error with a link to its page in the Prefect UI."""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import date, timedelta
from pathlib import Path

import polars as pl

from storage.projections import materialize
from storage.store import ParquetEventStore

WINDOW_DAYS = 14
PREFECT_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
SHOWN_COUNTS = (
    "feed.fetched",
    "feed.failed",
    "article.collected",
    "story.clustered",
    "confirmation.requested",
    "brief.published",
    "brief.delivered",
)


def recent_runs(store: ParquetEventStore, end: date, ui_url: str | None) -> list[dict]:
    """The runs that wrote to the 14 days to ``end`` (a flow's runs, not the desk's single acts),
    newest first."""
    days = [end - timedelta(days=k) for k in range(WINDOW_DAYS)]
    frame = materialize(store, "runs", days=days).filter(pl.col("flow").is_not_null())
    out = []
    for row in frame.sort("started_at", descending=True).iter_rows(named=True):
        counts = {c["event_type"]: c["n"] for c in row["counts"]}
        steps = json.loads(row["step_seconds"]) if row["step_seconds"] else {}
        out.append(
            {
                **row,
                "counts": [(k, counts[k]) for k in SHOWN_COUNTS if counts.get(k)],
                "steps": sorted(steps.items(), key=lambda kv: -kv[1]),
                "link": f"{ui_url.rstrip('/')}/runs/flow-run/{row['run_id']}"
                if ui_url and PREFECT_ID.match(row["run_id"])
                else None,
            }
        )
    return out


def prefect_ui_url(environ: Mapping[str, str] | None = None) -> str | None:
    """The Prefect UI this desk's runs are seen in: ``PREFECT_UI_URL``, else the UI beside
    ``PREFECT_API_URL``, each from the environment, else from the active profile of Prefect's
    profiles file (``PREFECT_PROFILE``, else the file's ``active``). Read without importing Prefect,
    which takes seconds: the runs page's first load is as fast as the next."""
    environ = os.environ if environ is None else environ
    profile = _active_profile(environ)

    def setting(name: str) -> str | None:
        value = environ.get(name) or profile.get(name)
        return str(value) if value else None

    ui, api = setting("PREFECT_UI_URL"), setting("PREFECT_API_URL")
    if ui:
        return ui
    return api.removesuffix("/").removesuffix("/api") if api else None


def _active_profile(environ: Mapping[str, str]) -> dict[str, object]:
    """The settings of Prefect's active profile (``PREFECT_PROFILES_PATH``, else ``profiles.toml``
    in ``PREFECT_HOME``, else in ``~/.prefect``); none when the file is missing or unreadable."""
    home = Path(environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    path = Path(environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser()
    try:
        profiles = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    every = profiles.get("profiles")
    found = (
        every.get(environ.get("PREFECT_PROFILE") or profiles.get("active"))
        if isinstance(every, dict)
        else None
    )
    return found if isinstance(found, dict) else {}
