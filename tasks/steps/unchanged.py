"""A date whose run would read exactly what its last run read: decided already, not decided again.

A day's brief is a function of what its run reads (the events of its ``reach``), the settings
it decides under and the code that decides. A run that ends (published, or withheld) records a
digest of the three as ``run.inputs``, with its outcome. A backfill that finds a date's digest
unchanged records ``run.unchanged`` (the date, the run whose outcome stands) and keeps that
outcome, instead of loading models and running every stage again to the same brief.

What the digest leaves out is what a run writes about itself, whatever it decides: the runs'
own records (``run.*``: started, finished, this digest) and a collection's attempts that found
nothing (``feed.failed``, ``feed.skipped``), which carry the run that made them and so are new
at every run. Everything else the reach holds is in it: the facts, people's acts, and every
derivation of every run, so a date run again since (alone, or because an earlier date of its
reach changed) has the dates after it decided again too.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from functools import cache
from pathlib import Path

import polars as pl

from storage.payloads import RunInputs
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.steps.context import RunContext

BOOKKEEPING = ("run.",)  # prefixes of the event types a run writes about itself
ATTEMPTS = ("feed.failed", "feed.skipped")  # new at every collection that tried and found nothing
CODE = ("storage", "tasks", "ops", "flows", "validations")  # the packages a run's decisions come from


@dataclass(frozen=True)
class Settled:
    """A date's outcome that stands: its last run's, its inputs unchanged since."""

    day: date
    run_id: str  # the run whose outcome it is
    digest: str
    published: bool
    version: int | None
    items: int
    reason: str  # why it was withheld ("" when published)


@cache
def code_digest() -> str:
    """The pipeline's code, files and templates, as one digest (once per process)."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.blake2b(digest_size=16)
    for package in CODE:
        for path in sorted((root / package).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


def day_digest(store: ParquetEventStore, day: date) -> str:
    """The ids of the events of ``day`` the digest reads (each once, sorted), as one digest.

    Kept per set of files (a file is never changed, only replaced under a new name: a day's
    digest is read again only when its files changed), so a backfill reads each day once. Only a
    Parquet store's files have names no other store gives its own (a time and a random part)."""
    units = tuple(store.units(day))
    if type(store) is not ParquetEventStore:
        return _ids_digest(store, units)
    if units not in _DAYS:
        _DAYS[units] = _ids_digest(store, units)
        while len(_DAYS) > _DAYS_KEPT:
            _DAYS.pop(next(iter(_DAYS)))
    return _DAYS[units]


_DAYS: dict[tuple[str, ...], str] = {}
_DAYS_KEPT = 4096


def _ids_digest(store: ParquetEventStore, units: tuple[str, ...]) -> str:
    if not units:
        return "-"
    kept = ~pl.col("event_type").is_in(ATTEMPTS)
    for prefix in BOOKKEEPING:
        kept &= ~pl.col("event_type").str.starts_with(prefix)
    ids = store.query(
        lambda: store.raw_units(list(units)).filter(kept).select("event_id").unique().sort("event_id")
    ).get_column("event_id")
    digest = hashlib.blake2b("\n".join(ids.to_list()).encode(), digest_size=16)
    return f"{ids.len()}:{digest.hexdigest()}"


def inputs_digest(ctx: RunContext) -> str:
    """What the run of ``ctx`` reads, as one digest: its reach's events (but the runs' records of
    themselves), the settings and policy it decides under (but where the store is), and the code."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(code_digest().encode())
    digest.update(ctx.policy_version.encode())
    # where the store is says nothing of what is in it: a store moved or copied keeps its dates
    digest.update(ctx.settings.model_dump_json(exclude={"storage"}).encode())
    for day in ctx.reach:
        digest.update(f"\n{day.isoformat()}={day_digest(ctx.store, day)}".encode())
    return digest.hexdigest()


def record_inputs(ctx: RunContext, *, version: int | None = None, items: int = 0, withheld: str = "") -> str:
    """``run.inputs``: what the run read (``inputs_digest``, the log as the run leaves it) and its
    outcome (a version published, or the reason it was withheld). Returns the digest."""
    digest = inputs_digest(ctx)
    outcome = {"published": not withheld, "version": version, "items": items, "reason": withheld}
    ctx.append(
        [
            ctx.emit(
                "run.inputs",
                {"brief_date": ctx.day.isoformat(), "digest": digest, **outcome},
                subject=ctx.run_id,
                producer="flow.daily@1",
            )
        ]
    )
    return digest


def settled(ctx: RunContext) -> Settled | None:
    """The outcome of ``ctx``'s day that stands, when the day's last recorded inputs are what a
    run of ``ctx`` would read now (and a published brief's files are still there); else None."""
    store = ctx.store
    rows = store.query(lambda: store.scan([ctx.day], event_types=["run.inputs"]))
    if rows.is_empty():
        return None
    last = rows.row(rows.height - 1, named=True)
    recorded = payload_of(last, RunInputs)
    if recorded.published and not store.tree.briefs.exists(store.tree.briefs.current(ctx.day, "json")):
        return None
    if recorded.digest != inputs_digest(ctx):
        return None
    return Settled(
        ctx.day,
        last["run_id"],
        recorded.digest,
        recorded.published,
        recorded.version,
        recorded.items,
        recorded.reason,
    )


def record_unchanged(ctx: RunContext, standing: Settled) -> None:
    """``run.unchanged``: the day was looked at by ``ctx``'s run and its outcome stands."""
    ctx.append(
        [
            ctx.emit(
                "run.unchanged",
                {"brief_date": ctx.day.isoformat(), "digest": standing.digest, "outcome_of": standing.run_id},
                subject=ctx.run_id,
                producer="flow.backfill@1",
            )
        ]
    )
