"""Every published version of every day, each in a line: the people's acts it first carried, or the
run that published it. The desk's History page and ``brief history`` both show these rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ops import changes
from ops.reads import versions
from storage.store import ParquetEventStore


@dataclass(frozen=True)
class VersionLine:
    """One published version of a day's brief, and what it carried."""

    day: date
    version: int
    items: int
    published_at: str  # "YYYY-MM-DD HH:MM UTC"
    run_id: str
    said: str  # "ann: marked lead", or "the run <id>" for a version no act made ("": not known)
    types: tuple[str, ...]  # the types of the events ``said`` names (for auditors)


def history(store: ParquetEventStore, days: list[date] | None = None) -> dict[date, list[VersionLine]]:
    """Each of ``days`` (None: every day) that has a published brief, newest first, with its versions
    in order."""
    said = changes.summaries(store, days)
    return {
        day: [
            VersionLine(
                day,
                v.version,
                v.items,
                v.published_at,
                v.run_id,
                (line := said.get((day, v.version), changes.Summary(""))).said,
                line.types,
            )
            for v in found
        ]
        for day, found in versions(store, days).items()
    }
