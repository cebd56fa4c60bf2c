"""Export throughput and peak memory: 1 day vs 10 days of a 1,000,000-event log.

    python bench/export.py [--events 1000000] [--days 10]

Each export runs in its own process (its own peak RSS). Peak memory must not grow with the
number of days exported: the export streams one day at a time.
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
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def build(root: str, total: int, days: int) -> None:
    from eventstore import BATCH, make_batch

    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    for start in range(0, total, BATCH):
        store.append(make_batch(start, BATCH, days, total))
    for day in store.days():
        store.compact(day)


def child(root: str, fmt: str, days: int, out: str) -> None:
    from eventstore import DAY0

    from storage.export import export_events
    from storage.store import ParquetEventStore

    store = ParquetEventStore(root)
    t = time.perf_counter()
    result = export_events(store, DAY0, DAY0 + timedelta(days=days - 1), fmt, Path(out), command="bench")
    seconds = time.perf_counter() - t
    size = sum(f.stat().st_size for f in Path(out).rglob("*") if f.is_file())
    print(
        json.dumps(
            {
                "events": result.events,
                "seconds": seconds,
                "bytes": size,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=10)
    parser.add_argument("--child", nargs=4, metavar=("ROOT", "FORMAT", "DAYS", "OUT"))
    args = parser.parse_args()
    if args.child:
        root, fmt, days, out = args.child
        child(root, fmt, int(days), out)
        return
    work = Path(tempfile.mkdtemp(prefix="bench-export-"))
    try:
        print(
            f"# building a log of {args.events:,} events over {args.days} days …", file=sys.stderr, flush=True
        )
        build(str(work / "store"), args.events, args.days)
        rows = []
        for fmt in ("jsonl", "parquet"):
            for days in (1, args.days):
                out = work / f"out-{fmt}-{days}"
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(work / "store"), fmt, str(days), str(out)],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode:
                    raise SystemExit(done.stderr[-3000:])
                rows.append((fmt, days, json.loads(done.stdout.strip().splitlines()[-1])))
                shutil.rmtree(out, ignore_errors=True)
        print(f"# export of a {args.events:,}-event log ({args.days} days); {os.cpu_count()} cores\n")
        print("| format | days | events | time | events/s | output MB | peak RSS MB |")
        print("|---|---|---|---|---|---|---|")
        for fmt, days, r in rows:
            print(
                f"| {fmt} | {days} | {r['events']:,} | {r['seconds']:.1f} s | {r['events'] / r['seconds']:,.0f} | "
                f"{r['bytes'] / 2**20:.0f} | {r['peak_rss_mb']:.0f} |"
            )
        for fmt in ("jsonl", "parquet"):
            one, many = (r["peak_rss_mb"] for f, d, r in rows if f == fmt)
            print(f"\n{fmt}: peak memory {args.days} days / 1 day = {many / one:.2f}", end="")
        print()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
