"""Event store benchmark: append, fold, incremental fold, one-day scan; side by side with baselines.

    python bench/eventstore.py [--events 1000000] [--days 10]

Each measurement runs in its own child process so its peak memory (max RSS) is its own.
Baselines in the same run: the ``eventsourcing`` library's SQLite recorder (append), and
DuckDB running the same ``articles`` fold as SQL over the same Parquet files.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BATCH = 1_000
ROUNDS = 5  # incremental folds measured one after another; the table shows their median and max
T0 = datetime(2025, 8, 1, tzinfo=UTC)
DAY0 = date(2025, 8, 1)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_batch(start: int, n: int, days: int, total: int):
    """Realistic mix: 90% article.collected, 8% corrections, 2% run events, spread over days."""
    import storage  # noqa: F401
    from storage.events import new_event

    per_day = total // days
    events = []
    for i in range(start, start + n):
        day = DAY0 + timedelta(days=min(i // per_day, days - 1))
        at = T0 + timedelta(microseconds=i * 50)
        kind = i % 50
        article = i // 2 if kind else i  # most articles are collected twice (re-collected, new text)
        if kind in (1, 2, 3, 4):
            events.append(
                new_event(
                    "article.corrected",
                    {
                        "article_id": f"a{i // 7}",
                        "field": "title",
                        "value": f"Corrected title {i}",
                        "reason": "bench",
                    },
                    brief_date=day,
                    run_id="review",
                    subject_id=f"a{i // 7}",
                    produced_by="bench",
                    occurred_at=at,
                )
            )
        elif kind == 0:
            events.append(
                new_event(
                    "run.started",
                    {"flow": "daily-brief", "parameters": {"i": i}},
                    brief_date=day,
                    run_id=f"run-{i}",
                    subject_id=f"run-{i}",
                    produced_by="bench",
                    occurred_at=at,
                )
            )
        else:
            url = f"https://news.example.com/2025/08/{article}/a-story-about-models"
            events.append(
                new_event(
                    "article.collected",
                    {
                        "article_id": f"a{article}",
                        "source": f"source-{article % 12}",
                        "url": url,
                        "canonical_url": url,
                        "title": f"Model {article} launches with {i % 97} billion parameters",
                        "summary": "A company announced a model today; analysts say it matters. " * 2,
                        "published_at": (at - timedelta(hours=3)).isoformat(),
                        "language": "en",
                        "content_hash": f"h{i}",
                    },
                    brief_date=day,
                    run_id=f"run-{i // 1000}",
                    subject_id=f"a{article}",
                    produced_by="bench",
                    occurred_at=at,
                )
            )
    return events


# -- steps (each run in a child process) -----------------------------------------------


def step_append(root: str, total: int, days: int) -> dict:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    spent = made = 0.0
    for start in range(0, total, BATCH):
        t = time.perf_counter()
        batch = make_batch(start, BATCH, days, total)  # validation, ids and stored lines happen here
        made += time.perf_counter() - t
        t = time.perf_counter()
        store.append(batch)
        spent += time.perf_counter() - t
    return {"seconds": spent, "rate": total / spent, "make_seconds": made}


def step_compact(root: str) -> dict:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    before = sum(len(store.files(d)) for d in store.days())
    t = time.perf_counter()
    results = store.compact_pending()
    spent = time.perf_counter() - t
    return {"seconds": spent, "files_before": before, "days": len(results)}


def step_eventsourcing(root: str, total: int) -> dict:
    import uuid

    from eventsourcing.persistence import StoredEvent
    from eventsourcing.sqlite import SQLiteApplicationRecorder, SQLiteDatastore

    datastore = SQLiteDatastore(db_name=os.path.join(root, "es.sqlite"))
    recorder = SQLiteApplicationRecorder(datastore)
    recorder.create_table()
    state = json.dumps(
        {
            "title": "Model launches with 42 billion parameters",
            "summary": "A company announced a model today; analysts say it matters. " * 2,
        }
    ).encode()
    spent = 0.0
    for _ in range(0, total, 100):
        aggregate = uuid.uuid4()
        batch = [StoredEvent(aggregate, v, "bench.events:ArticleCollected", state) for v in range(100)]
        t = time.perf_counter()
        recorder.insert_events(batch)
        spent += time.perf_counter() - t
    return {"seconds": spent, "rate": total / spent}


def step_fold(root: str) -> dict:
    from storage.projections import materialize
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    t = time.perf_counter()
    frame = materialize(store, "articles")
    return {"seconds": time.perf_counter() - t, "rows": frame.height, "threads": pl_threads()}


def pl_threads() -> int:
    import polars as pl

    return pl.thread_pool_size()


# The same work as the Polars ``articles`` projection: latest value of every field in event order,
# corrections (latest per article and field) applied to the same fields, correction-only fields
# (category, relevance) as columns, tags kept; the result fetched as a frame (Arrow), not tuples.
_FIELDS = ("title", "summary", "source", "url", "canonical_url", "published_at", "language", "content_hash")
_CORRECTED = ("title", "summary", "published_at", "language", "source")
_ONLY_CORRECTED = ("category", "relevance")
DUCKDB_ARTICLES = f"""
WITH ev AS (
  SELECT * FROM read_parquet($files)
  QUALIFY row_number() OVER (PARTITION BY event_id ORDER BY occurred_at, seq, event_id, run_id) = 1
),
col AS (
  SELECT subject_id AS article_id, occurred_at, seq, event_id, brief_date,
         {", ".join(f"json_extract_string(payload, '$.{f}') AS {f}" for f in _FIELDS)},
         json_extract(payload, '$.tags') AS tags
  FROM ev WHERE event_type = 'article.collected'
),
base AS (
  SELECT article_id,
         {", ".join(f"arg_max({f}, (occurred_at, seq, event_id)) AS {f}" for f in (*_FIELDS, "tags"))},
         max((occurred_at, seq, event_id)) AS ord,
         min(brief_date) AS first_brief_date, min(occurred_at) AS first_collected_at,
         count(*) AS collected_events
  FROM col GROUP BY article_id
),
cor AS (
  SELECT json_extract_string(payload, '$.article_id') AS article_id,
         json_extract_string(payload, '$.field') AS field,
         arg_max(json_extract_string(payload, '$.value'), (occurred_at, seq, event_id)) AS value,
         max((occurred_at, seq, event_id)) AS ord,
         count(*) AS n
  FROM ev WHERE event_type = 'article.corrected' GROUP BY 1, 2
)
SELECT b.article_id,
       {", ".join(f"CASE WHEN c_{f}.ord > b.ord THEN c_{f}.value ELSE b.{f} END AS {f}" for f in _CORRECTED)},
       b.url, b.canonical_url, b.content_hash, b.tags,
       {", ".join(f"c_{f}.value AS {f}" for f in _ONLY_CORRECTED)},
       b.first_brief_date, b.first_collected_at, b.collected_events
FROM base b
{" ".join(f"LEFT JOIN cor c_{f} ON c_{f}.article_id = b.article_id AND c_{f}.field = '{f}'" for f in (*_CORRECTED, *_ONLY_CORRECTED))}
ORDER BY b.article_id
"""


def step_duckdb(root: str) -> dict:
    import duckdb

    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    files = [f for d in store.days() for f in store.files(d)]
    con = duckdb.connect()
    con.execute("SET threads = 2")
    import polars as pl

    t = time.perf_counter()
    listed = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
    table = con.sql(DUCKDB_ARTICLES.replace("$files", listed)).to_arrow_table()  # DuckDB's direct Arrow path
    frame = pl.from_arrow(table)  # Arrow into a Polars frame, as the fold returns one
    return {"seconds": time.perf_counter() - t, "rows": frame.height, "threads": 2}


def step_incremental(root: str, total: int, days: int) -> dict:
    from storage.projections import materialize
    from storage.snapshots import refresh, take_snapshot
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    t = time.perf_counter()
    snapshot = take_snapshot(store, "articles")
    snap_s = time.perf_counter() - t
    base_rss = rss_mb()
    rounds = []
    for k in range(ROUNDS):  # each round: 1,000 new events (new articles and re-collections), one refresh
        store.append(make_batch(total + k * 1_000, 1_000, days, total + ROUNDS * 1_000))
        t = time.perf_counter()
        snapshot = refresh(store, snapshot)
        rounds.append(time.perf_counter() - t)
    t = time.perf_counter()
    view = snapshot.view()
    view_s = time.perf_counter() - t
    same = view.equals(materialize(store, "articles"))
    return {
        "seconds": sorted(rounds)[len(rounds) // 2],
        "max_seconds": max(rounds),
        "rounds_ms": [round(r * 1000, 1) for r in rounds],
        "view_seconds": view_s,
        "snapshot_seconds": snap_s,
        "equal": same,
        "rss_before": base_rss,
    }


def step_one_day(root: str) -> dict:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    day = store.days()[len(store.days()) // 2]
    t = time.perf_counter()
    frame = store.query(lambda: store.scan([day]))
    return {"seconds": time.perf_counter() - t, "rows": frame.height}


STEPS = {
    "append": lambda a: step_append(a.root, a.events, a.days),
    "eventsourcing": lambda a: step_eventsourcing(a.root, a.es_events),
    "fold": lambda a: step_fold(a.root),
    "duckdb": lambda a: step_duckdb(a.root),
    "incremental": lambda a: step_incremental(a.root, a.events, a.days),
    "one_day": lambda a: step_one_day(a.root),
    "compact": lambda a: step_compact(a.root),
}


def child(args: argparse.Namespace) -> None:
    result = STEPS[args.step](args)
    result["peak_rss_mb"] = rss_mb()
    print(json.dumps(result))


def run_step(step: str, root: str, args: argparse.Namespace) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--step",
        step,
        "--root",
        root,
        "--events",
        str(args.events),
        "--days",
        str(args.days),
        "--es-events",
        str(args.es_events),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"step {step} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--es-events", type=int, default=100_000)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--step", choices=sorted(STEPS))
    parser.add_argument("--root")
    args = parser.parse_args()
    if args.step:
        child(args)
        return
    work = tempfile.mkdtemp(prefix="bench-eventstore-")
    try:
        print(
            f"# {args.events:,} events over {args.days} days, batches of {BATCH}; {os.cpu_count()} cores",
            flush=True,
        )
        results = {}
        order = ("append", "eventsourcing", "one_day_segments", "compact", "fold", "duckdb", "one_day")
        for step in (*order, "incremental"):
            print(f"  running {step} …", file=sys.stderr, flush=True)
            results[step] = run_step(step.removesuffix("_segments"), work, args)
        a, es, os_, c, f, d, o, i = (results[k] for k in (*order, "incremental"))
        rows = [
            (
                "append (zstd segments, batches of 1,000)",
                f"{a['rate']:,.0f} events/s",
                f"{a['seconds']:.1f} s",
                a["peak_rss_mb"],
                f"{a['rate'] / es['rate']:.1f}x eventsourcing",
                ">= 10x",
            ),
            (
                "append (eventsourcing SQLite, batches of 100)",
                f"{es['rate']:,.0f} events/s",
                f"{es['seconds']:.1f} s",
                es["peak_rss_mb"],
                "baseline",
                "",
            ),
            (
                "  making those events (not in the rate)",
                f"{args.events / a['make_seconds']:,.0f} events/s",
                f"{a['make_seconds']:.1f} s",
                a["peak_rss_mb"],
                "validate, hash, serialise",
                "",
            ),
            (
                "compact: segments -> zstd Parquet",
                f"{c['files_before']:,} files -> {c['days']}",
                f"{c['seconds']:.1f} s",
                c["peak_rss_mb"],
                f"{args.events / c['seconds']:,.0f} events/s",
                "",
            ),
            (
                f"fold 'articles' (Polars, {f['threads']} threads)",
                f"{f['rows']:,} rows",
                f"{f['seconds'] * 1000:.0f} ms",
                f["peak_rss_mb"],
                f"{d['seconds'] / f['seconds']:.2f}x DuckDB speed",
                "<= DuckDB time",
            ),
            (
                f"fold 'articles' (DuckDB SQL to a frame, {d['threads']} threads)",
                f"{d['rows']:,} rows",
                f"{d['seconds'] * 1000:.0f} ms",
                d["peak_rss_mb"],
                "baseline",
                "",
            ),
            (
                f"incremental fold: snapshot + 1,000 new (median of {ROUNDS})",
                "equal to full fold" if i["equal"] else "DIFFERS",
                f"{i['seconds'] * 1000:.1f} ms",
                i["peak_rss_mb"],
                f"max {i['max_seconds'] * 1000:.0f} ms; view {i['view_seconds'] * 1000:.0f} ms; "
                f"snapshot {i['snapshot_seconds']:.1f} s",
                "<= 20 ms (storage/snapshots.py; no pipeline path uses it yet)",
            ),
            (
                "one day out of the log",
                f"{o['rows']:,} events",
                f"{o['seconds'] * 1000:.1f} ms",
                o["peak_rss_mb"],
                f"{os_['seconds'] * 1000:.0f} ms before compaction",
                "<= 100 ms",
            ),
        ]
        header = ("measurement", "result", "time", "peak RSS MB", "comparison", "target")
        widths = [max(len(str(r[k])) if k != 3 else 11 for r in [*rows, header]) for k in range(6)]
        print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
        print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
        for r in rows:
            cells = [str(r[0]), str(r[1]), str(r[2]), f"{r[3]:.0f}", str(r[4]), str(r[5])]
            print("| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
