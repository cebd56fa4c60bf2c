"""End-to-end wall time of the daily run on two real days, cold and warm.

    python bench/daily_run.py [--data ../shared/data] [--day 2025-08-06] [--aiweb-day 2026-03-18]
                              [--story-model rules --story-model builtin:stories] [--warm-runs N]

The days: ``--day``, the real outlets' feeds of that date (``feeds/``, five sources on
2025-08-06), and ``--aiweb-day``, the AI world's 14 feeds in two languages (``aiweb/feeds/``,
the guide's config of ``docs/sources.md``: labs, a Chinese digest, HN, GitHub, papers).

Cold: a new store (no events, no cached embeddings, model loaded from disk). Warm: the
same date again on that store (facts already there, embeddings cached). Each run is its
own process (its own peak memory); Prefect's start-up (the temporary server a process
without one starts) is measured apart from the pipeline's steps.

``--story-model`` (repeatable) names the policy's ``story_model``; with several, each has its own
store and their runs are interleaved (every model's cold run, then every model's warm runs in
turn), so they share the machine's load; ``--warm-runs`` repeats the warm run.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import LAB_SOURCES as LABS
from tests.real_days import aiweb_config, archive_config


def child(config: str, day: str) -> None:
    t0 = time.perf_counter()
    from flows.daily import daily_brief

    import_s = time.perf_counter() - t0
    result = daily_brief(day, config)
    total = time.perf_counter() - t0
    from storage.projections import materialize
    from storage.store import ParquetEventStore
    from tasks.settings import load_settings

    store = ParquetEventStore(load_settings(config).storage.root)
    runs = materialize(store, "runs").filter(lambda_run_id(result.run_id))
    steps = json.loads(runs["step_seconds"][0])
    print(
        json.dumps(
            {
                "total": total,
                "import": import_s,
                "steps": steps,
                "flow": result.seconds,
                "items": result.items,
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


def run_child(config: Path, day: str, label: str, env: dict[str, str]) -> dict:
    """One daily run in its own process: its timings as the child prints them."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(config), day],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{day} {label} run failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def lambda_run_id(run_id: str):
    import polars as pl

    return pl.col("run_id") == run_id


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--day", default="2025-08-06")
    parser.add_argument("--aiweb-day", default="2026-03-18")
    parser.add_argument("--child", nargs=2, metavar=("CONFIG", "DAY"))
    parser.add_argument(
        "--story-model",
        action="append",
        default=None,
        help="the policy's story_model ('rules': the threshold and rules); repeatable, side by side",
    )
    parser.add_argument("--warm-runs", type=int, default=1, help="warm runs of each day and model")
    parser.add_argument("--aiweb-only", action="store_true", help="run only the AI world's day")
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    feeds = Path(args.data) / "feeds"
    sources = sorted(
        p.parent.name for p in feeds.glob(f"*/{args.day}.xml") if not p.parent.name.startswith("_")
    )
    if not sources:
        raise SystemExit(f"no feed snapshots for {args.day} under {feeds}")
    aiweb = Path(args.data) / "aiweb"
    aiweb_sources = sorted(p.parent.name for p in (aiweb / "feeds").glob(f"*/{args.aiweb_day}.xml"))
    if not aiweb_sources:
        raise SystemExit(f"no AI-world feed snapshots for {args.aiweb_day} under {aiweb / 'feeds'}")
    work = Path(tempfile.mkdtemp(prefix="bench-daily-"))
    models: list[str | None] = args.story_model or [None]
    configs: dict[tuple[str, str | None], Path] = {}
    for i, model in enumerate(models):
        extra = f'[policy]\nstory_model = "{model}"\n' if model else ""
        configs[(args.day, model)] = archive_config(
            work / f"outlets-{i}", feeds, sources, on_topic=LABS, extra=extra
        )
        configs[(args.aiweb_day, model)] = aiweb_config(work / f"aiweb-{i}", aiweb, extra=extra)
    days = [(args.day, sources), (args.aiweb_day, aiweb_sources)][1 if args.aiweb_only else 0 :]
    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        # each run starts a temporary server; on a busy machine it may take longer than the default 20 s
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": os.environ.get(
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120"
        ),
    }
    rows = []
    labels = ["cold"] + ["warm"] * args.warm_runs
    try:
        for day, _ in days:
            for label in labels:
                for model in models:
                    rows.append((day, label, model, run_child(configs[(day, model)], day, label, env)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"# the daily run of two real days, cold and warm ({os.cpu_count()} cores)\n")
    for day, names in days:
        print(f"- {day}: {len(names)} real sources ({', '.join(names)})")
    order = ["collect", "dedup", "score", "analyze", "factcheck", "questions", "gate", "publish"]
    steps = sorted(
        {n for *_, r in rows for n in r["steps"]},
        key=lambda n: order.index(n) if n in order else len(order),
    )
    print(
        "\n| day | run | story_model | pipeline (steps) | dedup + score | "
        + " | ".join(steps)
        + " | Prefect start-up and overhead | imports | items | peak RSS MB | target |"
    )
    print("|---|---|---|---|---|" + "---|" * len(steps) + "---|---|---|---|---|")
    for day, label, model, r in rows:
        pipeline = sum(r["steps"].values())
        overhead = r["total"] - r["import"] - pipeline
        target = "<= 30 s" if label == "cold" else ("<= 8 s" if day == args.aiweb_day else "<= 10 s")
        cells = " | ".join(f"{r['steps'].get(n, 0):.2f}" for n in steps)
        print(
            f"| {day} | {label} | {model or 'default'} | **{pipeline:.2f} s** | "
            f"{r['steps'].get('dedup', 0) + r['steps'].get('score', 0):.2f} s | {cells} | "
            f"{overhead:.1f} s | {r['import']:.1f} s | "
            f"{r['items']} | {r['peak_rss_mb']:.0f} | {target} |"
        )


if __name__ == "__main__":
    main()
