"""Take the event log out: Parquet (day-partitioned), JSONL or CSV, with a manifest.

The export streams one day at a time, so memory holds one day's events however many days
are exported. Redaction (emails, phone numbers, API keys and tokens) is applied to every
text column before anything is written. Files are written under temporary names and
renamed at the end, so a failed export leaves nothing half-written.

Stable schema (``EXPORT_COLUMNS``): the envelope (``event_id``, ``event_type``,
``schema_version``, ``occurred_at`` (UTC ISO-8601 in JSONL/CSV), ``seq``, ``brief_date``,
``run_id``, ``subject_id``, ``source_event_ids``, ``produced_by``, ``policy_version``)
plus ``payload`` (a JSON object in JSONL; JSON text in Parquet and CSV) and, flattened
because analyses filter on them, ``source``, ``url`` and ``title`` where the payload has
them (null otherwise). Parquet keeps ``date=YYYY-MM-DD/`` partitions, so DuckDB and Spark
read the folder as it is.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
import polars as pl

from storage.errors import InputError
from storage.events import ENVELOPE_COLUMNS
from storage.store import EventStore

EXPORT_FORMAT_VERSION = 1
FLATTENED = ("source", "url", "title")
EXPORT_COLUMNS = (*ENVELOPE_COLUMNS, *FLATTENED)
REDACTIONS = [
    ("email", re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")),
    (
        "api_key",
        re.compile(
            r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bAKIA[0-9A-Z]{16}\b"
            r"|\bxox[abp]-[A-Za-z0-9-]{10,}|\bAIza[0-9A-Za-z_-]{35}\b"
        ),
    ),
    (
        "token",
        re.compile(
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/-]{16,}=*|\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+"
        ),
    ),
    ("phone", re.compile(r"(?<![\w/.-])\+?\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]\d{3,4}[\s.-]\d{3,4}(?![\w/-])")),
]


def redact(text: str) -> str:
    for name, pattern in REDACTIONS:
        text = pattern.sub(f"[REDACTED:{name}]", text)
    return text


@dataclass(frozen=True)
class ExportResult:
    out: Path
    events: int
    counts: dict[str, dict[str, int]]  # day -> event type -> count
    manifest: Path


def _day_frame(
    store: EventStore, day: date, types: Sequence[str] | None, run: str | None, redacting: bool
) -> pl.DataFrame:
    frame = store.query(lambda: store.scan([day], event_types=list(types) if types else None))
    if run:
        frame = frame.filter(pl.col("run_id") == run)
    payload = pl.col("payload")
    frame = frame.with_columns(*[payload.str.json_path_match(f"$.{name}").alias(name) for name in FLATTENED])
    if redacting:
        text_columns = ["payload", "subject_id", *FLATTENED]
        frame = frame.with_columns(
            [pl.col(c).map_elements(redact, return_dtype=pl.String) for c in text_columns]
        )
    return frame.select(EXPORT_COLUMNS)


def export_events(
    store: EventStore,
    start: date,
    end: date,
    fmt: str,
    out: Path,
    *,
    types: Sequence[str] | None = None,
    run: str | None = None,
    redacting: bool = False,
    command: str | None = None,
    progress: Callable[[date, int], None] | None = None,
) -> ExportResult:
    if fmt not in ("parquet", "jsonl", "csv"):
        raise InputError(f"--format {fmt!r}: choose parquet, jsonl or csv")
    if end < start:
        raise InputError(f"--end {end} is before --start {start}")
    if out.exists() and any(out.iterdir() if out.is_dir() else [out]):
        raise InputError(
            f"--out {str(out)!r} already exists; choose a new folder (an export never overwrites)"
        )
    days = [d for d in store.days() if start <= d <= end]
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(parents=True)
    except OSError as exc:
        raise InputError(
            f"--out {str(out)!r} cannot be written ({exc.strerror or exc}); choose a new folder "
            "in one you may write"
        ) from None
    counts: dict[str, dict[str, int]] = {}
    total = 0
    frozen: dict[str, str] = {}  # a regression case's frozen facts: digest -> file in the export
    try:
        writer = _Writer(fmt, staging)
        for day in days:
            frame = _day_frame(store, day, types, run, redacting)
            if frame.height:
                writer.write(day, frame)
                counts[day.isoformat()] = dict(Counter(frame["event_type"].to_list()))
                total += frame.height
                cases = frame.filter(pl.col("event_type") == "regression.case_added")["payload"]
                for case in cases:
                    _export_frozen(store, orjson.loads(case)["facts"], staging, frozen, redacting)
            if progress:
                progress(day, frame.height)
            del frame
        writer.close()
        manifest = {
            "format": fmt,
            "export_format_version": EXPORT_FORMAT_VERSION,
            "columns": list(EXPORT_COLUMNS),
            "start": start.isoformat(),
            "end": end.isoformat(),
            "types": list(types or []),
            "run": run,
            "redacted": redacting,
            "events": total,
            "counts": counts,
            "schema_versions": _schema_versions(store, days, types),
            "regression_facts": frozen,
            "created_at": datetime.now(UTC).isoformat(),
            "command": command or shlex.join(sys.argv),
        }
        (staging / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return ExportResult(out, total, counts, out / "manifest.json")


def _export_frozen(
    store: EventStore, facts: dict[str, Any], staging: Path, frozen: dict[str, str], redacting: bool
) -> None:
    """The events a regression case froze to be replayed (``ops/regress.py``), once per file, as
    JSONL under ``regression/``: the cases leave with the log whole, not as digests of files left
    behind."""
    import io

    from storage.store.base import read_segments

    digest = str(facts["digest"])
    tree = getattr(store, "tree", None)  # an in-memory store keeps no file
    if digest in frozen or tree is None:
        return
    events = read_segments([io.BytesIO(tree.blobs.get(str(facts["path"])))]).collect()
    if redacting:
        events = events.with_columns(pl.col("payload").map_elements(redact, return_dtype=pl.String))
    (staging / "regression").mkdir(exist_ok=True)
    events.write_ndjson(staging / "regression" / f"{digest}.jsonl")
    frozen[digest] = f"regression/{digest}.jsonl"


def _schema_versions(
    store: EventStore, days: Sequence[date], types: Sequence[str] | None
) -> dict[str, list[int]]:
    from storage.registry import REGISTRY

    return {t: sorted(REGISTRY.spec(t).models) for t in (types or REGISTRY.types())}


class _Writer:
    def __init__(self, fmt: str, folder: Path) -> None:
        self.fmt, self.folder = fmt, folder
        self._binary: Any = None
        self._csv: Any = None
        if fmt == "jsonl":
            self._binary = open(folder / "events.jsonl", "wb")  # noqa: SIM115 - closed in close()
        elif fmt == "csv":
            self._binary = open(folder / "events.csv", "w", newline="", encoding="utf-8")  # noqa: SIM115
            self._csv = csv.writer(self._binary)
            self._csv.writerow(EXPORT_COLUMNS)

    def write(self, day: date, frame: pl.DataFrame) -> None:
        if self.fmt == "parquet":
            target = self.folder / "events" / f"date={day.isoformat()}"
            target.mkdir(parents=True, exist_ok=True)
            frame.write_parquet(target / "part-0.parquet", compression="zstd")
            return
        rows = frame.with_columns(
            pl.col("occurred_at").dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ"), pl.col("brief_date").cast(pl.String)
        )
        if self.fmt == "jsonl":
            assert self._binary is not None
            for named in rows.iter_rows(named=True):
                named["payload"] = orjson.Fragment(named["payload"])
                self._binary.write(orjson.dumps(named) + b"\n")
        else:
            assert self._csv is not None
            for row in rows.iter_rows():
                values = list(row)
                values[8] = " ".join(values[8] or [])
                self._csv.writerow(values)

    def close(self) -> None:
        if self._binary is not None:
            self._binary.close()
