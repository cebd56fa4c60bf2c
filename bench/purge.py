"""How long does taking one article out of a 60-day store take? (target: <= 10 s)

    python bench/purge.py [--data ../shared/data]

The store: the shared month (``month/``: four real feeds, 2025-07-01..30) backfilled through the
daily pipeline (briefs, raw feed bodies, embedding cache, run logs), plus one copy of its 30 days
shifted 35 days back (every id re-keyed, every date moved, the raw bodies and brief files copied
with them; ``bench/history.py:synthesize_year``): 60 days of log. The article purged is the lead of
the last day's brief; its copy in the shifted month (same title and link, another id) is found and
taken out with it. Then every file under the root is read (Parquet, zstd, gzip decompressed) and
searched for the title and the link.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

MONTH = ("2025-07-01", "2025-07-30")
SHIFT = 35


def build(work: Path, feeds: Path) -> Path:
    """The month backfilled, then a 60-day store: the month and its shifted copy."""
    from history import spawn, synthesize_year, write_config

    from flows.serve import start_local_server

    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    server = start_local_server(work / "prefect-server")
    env["PREFECT_API_URL"] = server.api_url
    try:
        month = write_config(work / "month", feeds)
        print(f"backfilling {MONTH[0]} .. {MONTH[1]} ...", file=sys.stderr, flush=True)
        spawn(["--child-backfill", str(month), *MONTH], env)
    finally:
        server.stop()
    store = work / "sixty" / "store"
    (work / "sixty").mkdir(parents=True)
    shutil.copy(month, work / "sixty" / "brief.toml")
    last = date.fromisoformat(MONTH[1]) + timedelta(days=1)
    synthesize_year(work / "month" / "store", store, 1, last)
    for folder in sorted((work / "month" / "store" / "raw").glob("date=*")):  # the bodies, shifted too
        moved = date.fromisoformat(folder.name[5:]) - timedelta(days=SHIFT)
        shutil.copytree(folder, store / "raw" / f"date={moved.isoformat()}")
    briefs = work / "month" / "store" / "briefs"
    for path in sorted(briefs.glob("20*")):
        day = date.fromisoformat(path.name[:10])
        moved = (day - timedelta(days=SHIFT)).isoformat()
        target = store / "briefs" / (moved + path.name[10:])
        (shutil.copytree if path.is_dir() else shutil.copy)(path, target)
    return work / "sixty" / "brief.toml"


def holding(root: Path, needles: list[str]) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    wanted = [n.encode() for n in needles]
    found = []
    for path in root.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        blobs = [data]
        if path.name.endswith(".parquet"):
            blobs.append(
                json.dumps(pq.read_table(path).to_pylist(), ensure_ascii=False, default=str).encode()
            )
        elif path.name.endswith(".zst"):
            with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
                blobs.append(stream.read())
        elif path.name.endswith(".gz"):
            blobs.append(gzip.decompress(data))
        if any(w in b for b in blobs for w in wanted):
            found.append(str(path.relative_to(root)))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    args = parser.parse_args()
    feeds = Path(args.data) / "month" / "feeds"
    if not feeds.is_dir():
        raise SystemExit(f"no month of feeds at {feeds}; pass --data pointing at the shared data folder")
    work = Path(tempfile.mkdtemp(prefix="bench-purge-"))
    try:
        config = build(work, feeds)
        from ops.purge import purge
        from storage.store import ParquetEventStore
        from tasks import steps
        from tasks.settings import load_settings

        settings = load_settings(config)
        root = Path(settings.storage.root)
        store = ParquetEventStore(str(root))
        days = store.days()
        events = store.query(lambda: store.scan()).height
        files = sum(1 for p in root.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
        bodies = sum(1 for _ in (root / "raw").rglob("*.zst"))
        lead = json.loads((root / "briefs" / f"{MONTH[1]}.json").read_text())["items"][0]
        article_id = lead["citations"][0]["article_id"]
        found = store.query(lambda: store.scan(event_types=["article.collected"]))
        import polars as pl

        payload = json.loads(found.filter(pl.col("subject_id") == article_id)["payload"][-1])
        needles = [payload["title"], payload["url"]]
        before = holding(root, needles)
        print("purging the last day's lead ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        result = purge(
            settings,
            steps.bootstrap(settings, store),
            article=article_id,
            source=None,
            reason="bench",
            by="bench",
        )
        seconds = time.perf_counter() - started
        after = holding(root, needles)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"# purging one article from a 60-day store ({os.cpu_count()} cores)\n")
    print(
        f"The shared month ({MONTH[0]} .. {MONTH[1]}, four feeds) backfilled, and a copy of it {SHIFT} days "
        "back: the last day's lead taken out with `ops.purge.purge` (what `brief purge` calls).\n"
    )
    print("| store | days | events | files | raw bodies | MB |")
    print("|---|---|---|---|---|---|")
    print(f"| month + shifted copy | {len(days)} | {events:,} | {files:,} | {bodies} | {size:.0f} |\n")
    print(
        "| purge | articles (copies) | days rewritten | events removed | raw bodies rewritten | "
        "cached vectors | briefs re-rendered | files holding title or link before / after |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rerendered = ", ".join(f"{d} (v{', v'.join(map(str, v))} -> v{n})" for d, v, n in result.briefs)
    print(
        f"| **{seconds:.1f} s** | {len(result.articles)} | {len(result.days)} | {result.dropped} | "
        f"{result.bodies} | {result.vectors} | {rerendered or '-'} | {len(before)} / {len(after)} |"
    )
    ok = seconds <= 10 and not after and before
    print(
        f"\ntarget <= 10 s: {'met' if seconds <= 10 else 'MISSED'}; title and link left under the root: {len(after)}"
    )
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
