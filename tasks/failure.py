"""What a failed run leaves behind: a ``run.failed`` event and an explanation a person can act on."""

from __future__ import annotations

import re
import shlex

import polars as pl

from storage.events import new_event, utcnow
from tasks.settings import load_settings
from tasks.steps import resolve_day


def explain_failure(config: str | None, date_text: str | None, run_id: str, message: str) -> str:
    """Record ``run.failed`` for the run and return the Markdown explanation (step, error, rerun)."""
    settings = load_settings(config)
    day = resolve_day(date_text, settings)
    store = settings.storage.event_store()
    match = re.search(r"step '([a-z_-]+)' failed: (.*)", message, re.DOTALL)
    step, error = (match.group(1), match.group(2).strip()) if match else ("flow", message.strip())
    written = dict(
        store.query(
            lambda: store.scan([day]).filter(pl.col("run_id") == run_id).group_by("event_type").len()
        ).iter_rows()
    )
    store.append(
        [
            new_event(
                "run.failed",
                {"step": step, "error": error.split(":", 1)[0][:80], "message": error[:2000]},
                brief_date=day,
                run_id=run_id,
                subject_id=run_id,
                produced_by="flow.daily@1",
                occurred_at=utcnow(),
            )
        ]
    )
    rerun = "brief run --date " + day.isoformat() + (f" --config {shlex.quote(config)}" if config else "")
    rows = "\n".join(f"| `{t}` | {n} |" for t, n in sorted(written.items())) or "| (none) | 0 |"
    return (
        f"# Daily brief of {day.isoformat()} failed\n\n"
        f"**Step:** `{step}`\n\n**Why:** {error}\n\n"
        f"## Events this run wrote before it stopped\n\n| event type | count |\n|---|---|\n{rows}\n\n"
        f"## How to rerun\n\nFix the cause above, then run:\n\n```\n{rerun}\n```\n\n"
        "Rerunning is safe: facts already in the log are not written again.\n"
    )
