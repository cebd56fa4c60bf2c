"""Does a run's cost grow with history? The same day on a week of log and on a year of log.

    python bench/history.py [--data ../shared/data] [--repeat 3] [--copies 10]

Three parts, each child its own process (its own peak memory), all in one run:

1. **The shared month backfilled from scratch** (``month/``: four real feeds, 2025-07-01..31),
   then backfilled again. Checks that every day completes and that the second backfill appends
   no fact event and publishes no new version; prints days per minute.
2. **A week of history**: a new store backfilled with 2025-07-24..30 only.
3. **A year of history**: the backfilled month's 30 days before 07-31, plus ten synthetic
   copies of them shifted 35, 70, … 350 days back (every id re-keyed, every date in every
   payload moved, the embedding cache copied with them): real-shaped items, 330 days of log.

Then 2025-07-31 (not yet in either log) is run on a copy of each log, ``--repeat`` times,
alternating, and the pipeline's own time (the steps, without Prefect's start-up) and peak
memory are compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import archive_config

SOURCES = ("arstechnica", "techcrunch", "tweakers", "wired")
MONTH = ("2025-07-01", "2025-07-31")
TIMED_DAY = "2025-07-31"
FACTS = ("article.collected", "feed.fetched")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_backfill(config: str, start: str, end: str) -> None:
    from flows.backfill import backfill

    t0 = time.perf_counter()
    outcomes = backfill(start, end, config, 2)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - t0,
                "outcomes": [o.row() for o in outcomes],
                "peak_mb": peak_mb(),
            }
        )
    )


def child_run(config: str, day: str) -> None:
    t0 = time.perf_counter()
    from flows.daily import daily_brief

    result = daily_brief(day, config)
    import polars as pl

    from storage.projections import materialize
    from storage.store import ParquetEventStore
    from tasks.settings import load_settings

    store = ParquetEventStore(load_settings(config).storage.root)
    runs = materialize(store, "runs", days=[date.fromisoformat(day)])
    steps = json.loads(runs.filter(pl.col("run_id") == result.run_id)["step_seconds"][0])
    print(
        json.dumps(
            {
                "pipeline": sum(steps.values()),
                "steps": steps,
                "total": time.perf_counter() - t0,
                "items": result.items,
                "peak_mb": peak_mb(),
            }
        )
    )


def spawn(args: list[str], env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def write_config(folder: Path, feeds: Path) -> Path:
    return archive_config(folder, feeds, SOURCES)


def fact_count(root: Path) -> int:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(str(root))
    return store.query(lambda: store.scan(event_types=list(FACTS))).height


# -- a year of real-shaped history ---------------------------------------------------------

ID = re.compile(r"\b((?:art|st|ev|q|run)-)([0-9a-f]{8,})\b")
DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")


def _rekey(text: str, salt: str) -> str:
    def swap(m: re.Match) -> str:
        digest = hashlib.blake2b((salt + m.group(2)).encode(), digest_size=32).hexdigest()
        return m.group(1) + digest[: len(m.group(2))]

    return ID.sub(swap, text)


def _shift_days(text: str, by: timedelta) -> str:
    def move(m: re.Match) -> str:
        try:
            return (date(int(m.group(1)), int(m.group(2)), int(m.group(3))) - by).isoformat()
        except ValueError:
            return m.group(0)

    return DAY.sub(move, text)


def synthesize_year(month_root: Path, year_root: Path, copies: int, last: date) -> int:
    """The month's days before ``last``, and ``copies`` shifted copies of them 35 days apart."""
    import polars as pl
    import pyarrow.parquet as pq

    from storage.store import ARROW_SCHEMA, ParquetEventStore

    shutil.copytree(month_root, year_root)
    # the year holds nothing of ``last`` or later: no events, no cached vectors (the week has none either)
    for partition in [
        *(year_root / "events").glob("date=*"),
        *(year_root / "cache").glob("embeddings/*/date=*"),
    ]:
        if date.fromisoformat(partition.name[5:]) >= last:
            shutil.rmtree(partition)
    source = ParquetEventStore(str(month_root))
    target = ParquetEventStore(str(year_root))
    days = [d for d in source.days() if d < last]
    frame = source.query(lambda: source.scan(days))
    written = 0
    for k in range(1, copies + 1):
        by, salt = timedelta(days=35 * k), f"copy{k}:"
        rekey = lambda s, salt=salt: _rekey(s, salt)  # noqa: E731
        shifted = frame.with_columns(
            pl.col("event_id").map_elements(rekey, return_dtype=pl.String),
            pl.col("run_id").map_elements(rekey, return_dtype=pl.String) + f"-{k}",
            pl.col("subject_id").map_elements(rekey, return_dtype=pl.String),
            pl.col("source_event_ids").list.eval(pl.element().map_elements(rekey, return_dtype=pl.String)),
            pl.col("payload").map_elements(
                lambda s, by=by, salt=salt: _shift_days(_rekey(s, salt), by), return_dtype=pl.String
            ),
            pl.col("brief_date") - by,
            pl.col("occurred_at") - by,
        )
        for (day,), part in shifted.partition_by("brief_date", as_dict=True).items():
            target._write_parquet(
                day, part.sort("occurred_at", "seq").to_arrow().cast(ARROW_SCHEMA), compacted=True
            )
            written += part.height
    # the embedding cache grows with the log too: copy it with the days (old layout: as more parts)
    cache = year_root / "cache" / "embeddings"
    for part in list(cache.glob("model=*/**/part-*.parquet")):
        parent = part.parent
        for k in range(1, copies + 1):
            if parent.name.startswith("date="):
                moved = date.fromisoformat(parent.name[5:]) - timedelta(days=35 * k)
                folder = parent.parent / f"date={moved.isoformat()}"
            else:
                folder = parent
            folder.mkdir(parents=True, exist_ok=True)
            pq.write_table(pq.read_table(part), folder / f"part-copy{k}-{part.stem[5:]}.parquet")
    return written


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--child-backfill", nargs=3)
    parser.add_argument("--child-run", nargs=2)
    args = parser.parse_args()
    if args.child_backfill:
        return child_backfill(*args.child_backfill)
    if args.child_run:
        return child_run(*args.child_run)

    feeds = Path(args.data) / "month" / "feeds"
    if not feeds.is_dir():
        raise SystemExit(f"no month of feeds at {feeds}; pass --data pointing at the shared data folder")
    work = Path(tempfile.mkdtemp(prefix="bench-history-"))
    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    from flows.serve import start_local_server

    server = start_local_server(work / "prefect-server")  # one server for every child process
    env["PREFECT_API_URL"] = server.api_url
    try:
        # 1. the month, from scratch, twice
        month = write_config(work / "month", feeds)
        print(f"backfilling {MONTH[0]} .. {MONTH[1]} from scratch ...", file=sys.stderr, flush=True)
        first = spawn(["--child-backfill", str(month), *MONTH], env)
        facts = fact_count(work / "month" / "store")
        print("... and again", file=sys.stderr, flush=True)
        second = spawn(["--child-backfill", str(month), *MONTH], env)
        facts_again = fact_count(work / "month" / "store")
        days = len(first["outcomes"])
        completed = sum(o["status"] == "completed" for o in first["outcomes"])
        new_versions = sum(bool(o["changed"]) for o in second["outcomes"])
        failed = [f"{o['date']}: {o['error']}" for o in first["outcomes"] if o["status"] != "completed"]

        # 2-3. the same new day on a week of log and on a year of log
        print("building the week and the year of log ...", file=sys.stderr, flush=True)
        week = write_config(work / "week", feeds)
        spawn(["--child-backfill", str(week), "2025-07-24", "2025-07-30"], env)
        year = write_config(work / "year", feeds)
        synthetic = synthesize_year(
            work / "month" / "store", work / "year" / "store", args.copies, date(2025, 7, 31)
        )
        from storage.store import ParquetEventStore

        sizes = {}
        for name in ("week", "year"):
            store = ParquetEventStore(str(work / name / "store"))
            sizes[name] = (len(store.days()), store.query(lambda store=store: store.scan()).height)
        timings: dict[str, list[dict]] = {"week": [], "year": []}
        for round_ in range(args.repeat):
            for name, config in (
                (("week", week), ("year", year)) if round_ % 2 == 0 else (("year", year), ("week", week))
            ):
                trial = work / f"trial-{name}"
                shutil.rmtree(trial, ignore_errors=True)
                shutil.copytree(config.parent, trial, ignore=shutil.ignore_patterns("prefect"))
                print(
                    f"timing {TIMED_DAY} on the {name} of log ({round_ + 1}/{args.repeat}) ...",
                    file=sys.stderr,
                    flush=True,
                )
                timings[name].append(spawn(["--child-run", str(trial / "brief.toml"), TIMED_DAY], env))
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)

    print(f"# a run's cost and history ({os.cpu_count()} cores)\n")
    print(f"## the shared month backfilled ({MONTH[0]} .. {MONTH[1]}, {', '.join(SOURCES)})\n")
    print(
        "| backfill | days completed | wall time | days per minute | fact events | new versions | peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|")
    for label, run, count, versions in (
        ("from scratch", first, facts, "-"),
        ("again", second, facts_again, new_versions),
    ):
        print(
            f"| {label} | {sum(o['status'] == 'completed' for o in run['outcomes'])}/{days} | {run['seconds']:.0f} s | "
            f"{days / run['seconds'] * 60:.1f} | {count} | {versions} | {run['peak_mb']:.0f} |"
        )
    if failed:
        print("\nfailed days:\n" + "\n".join(f"- {f}" for f in failed))
    print(
        f"\n## {TIMED_DAY} on a week and on a year of log (median of {args.repeat}; "
        f"year = the month + {args.copies} shifted copies, {synthetic} synthetic events)\n"
    )
    steps = sorted(
        {s for runs in timings.values() for r in runs for s in r["steps"]},
        key=list(timings["week"][0]["steps"]).index,
    )
    print("| log | days | events | pipeline (steps) | " + " | ".join(steps) + " | peak RSS MB | items |")
    print("|---|---|---|---|" + "---|" * len(steps) + "---|---|")
    medians = {}
    for name, runs in timings.items():
        medians[name] = statistics.median(r["pipeline"] for r in runs)
        cells = " | ".join(f"{statistics.median(r['steps'].get(s, 0) for r in runs):.2f}" for s in steps)
        print(
            f"| {name} | {sizes[name][0]} | {sizes[name][1]:,} | **{medians[name]:.2f} s** | {cells} | "
            f"{max(r['peak_mb'] for r in runs):.0f} | {runs[0]['items']} |"
        )
    ratio = medians["year"] / medians["week"]
    print(f"\nyear / week: **{ratio:.2f}x** (target <= 1.2x)")
    ok = completed == days and facts_again == facts and new_versions == 0
    print(
        f"month: {'every day completed' if completed == days else f'{days - completed} day(s) failed'}; "
        f"second backfill: {facts_again - facts} new fact event(s), {new_versions} new version(s)"
    )
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
