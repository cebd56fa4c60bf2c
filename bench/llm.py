"""What the optional language model costs the pipeline, with the scripted server of the tests.

    python bench/llm.py [--data ../shared/data]

For each real day (2025-08-05..07, five sources) one child process runs: the day offline (no
``[llm]``) on one store, the day with the model (all four tasks) on another, and that day
again (a rerun: every answer read from the log). The model's own time is the sum of the
recorded calls' latencies; the pipeline's overhead is what the model run's steps took beyond
the offline run's and beyond the model's own time. A warm-up day runs first, so the
embedding model's loading is in no row. Target: overhead <= 1 s per day; a rerun makes no call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import sources_toml

SOURCES = ["arstechnica", "techcrunch", "wired", "openai_news", "anthropic_news"]
DAYS = ["2025-08-05", "2025-08-06", "2025-08-07"]


def config(folder: Path, feeds: Path, llm_url: str | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "brief.toml"
    text = '[storage]\nroot = "store"\n' + sources_toml(
        feeds, SOURCES, on_topic=[s for s in SOURCES if s.endswith("_news")]
    )
    if llm_url:
        text += (
            f'[llm]\nbase_url = "{llm_url}/v1"\nmodel = "scripted"\n'
            'tasks = ["relevance", "importance", "category", "summary"]\n'
            "max_calls_per_run = 1000\nprice_in_per_1k = 0.00015\nprice_out_per_1k = 0.0006\n"
        )
    path.write_text(text)
    return path


def run(config_path: Path, day: str) -> dict:
    import polars as pl

    from flows.daily import daily_brief
    from storage.projections import materialize
    from tasks.settings import load_settings

    result = daily_brief(day, str(config_path))
    store = load_settings(str(config_path)).storage.event_store()
    the_day = date.fromisoformat(day)
    runs = materialize(store, "runs", days=[the_day]).filter(pl.col("run_id") == result.run_id)
    steps = json.loads(runs["step_seconds"][0])
    calls = [
        e.payload for e in store.read([the_day], event_types=["llm.called"]) if e.run_id == result.run_id
    ]
    return {
        "pipeline": sum(steps.values()),
        "calls": len(calls),
        "tokens": sum(c["tokens_in"] + c["tokens_out"] for c in calls),
        "cost": sum(c["cost"] for c in calls),
        "model_s": sum(c["latency_ms"] for c in calls) / 1000,
        "changed": result.changed,
    }


def child(work: str, feeds: str, llm_url: str) -> None:
    work_dir, feeds_dir = Path(work), Path(feeds)
    run(config(work_dir / "warm-up", feeds_dir, llm_url), "2025-07-28")
    rows = []
    for day in DAYS:
        offline = run(config(work_dir / f"offline-{day}", feeds_dir, None), day)
        online_config = config(work_dir / f"model-{day}", feeds_dir, llm_url)
        online = run(online_config, day)
        again = run(online_config, day)
        rows.append({"day": day, "offline": offline, "model": online, "rerun": again})
    print(json.dumps(rows))


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--child", nargs=3)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)
    feeds = Path(args.data) / "feeds"
    if not feeds.is_dir():
        raise SystemExit(f"no feeds at {feeds}; pass --data pointing at the shared data folder")
    from flows.serve import start_local_server

    work = Path(tempfile.mkdtemp(prefix="bench-llm-"))
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "0"], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    port = server.stdout.readline().split()[1]
    prefect = start_local_server(work / "prefect-server")
    env = {
        **os.environ,
        "PREFECT_API_URL": prefect.api_url,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    try:
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(work), str(feeds), f"http://127.0.0.1:{port}"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"the runs failed:\n{done.stderr[-3000:]}")
        rows = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        server.terminate()
        prefect.stop()
    print(f"# the language model's cost to the pipeline (scripted server, {os.cpu_count()} cores)\n")
    print(
        "Three real days, five sources; all four tasks; prices 0.00015 / 0.0006 per 1k tokens in / out; "
        f"{time.perf_counter() - t0:.0f} s in all.\n"
    )
    print(
        "| day | offline pipeline | with the model | model's own time | overhead | calls | tokens | cost "
        "| rerun pipeline | rerun calls | rerun same brief |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        off, on, again = r["offline"], r["model"], r["rerun"]
        overhead = on["pipeline"] - off["pipeline"] - on["model_s"]
        print(
            f"| {r['day']} | {off['pipeline']:.2f} s | {on['pipeline']:.2f} s | {on['model_s']:.2f} s | "
            f"**{overhead:.2f} s** | {on['calls']} | {on['tokens']:,} | {on['cost']:.4f} | "
            f"{again['pipeline']:.2f} s | {again['calls']} | {'yes' if not again['changed'] else 'no'} |"
        )
    print("\nTarget: overhead <= 1 s per day beyond the model's own time; a rerun makes no call.")


if __name__ == "__main__":
    main()
