"""``brief run`` of the sample: wall time against its steps and its imports, with the Prefect server
kept between commands and with a temporary server per run (as before), side by side in one run.

    python bench/kept_server.py [--runs 3] [--day sample|aiweb] [--data ../shared/data]

``--day aiweb``: a real day of the AI world's 14 feeds (2026-03-18, ``aiweb/``) instead of the
sample; target (issue 34) for its runs after the first: wall <= 6 s.

Each run is ``python -m flows.cli run`` in a fresh process, as a person types it, on one store and one
``PREFECT_HOME`` of its own with no ``PREFECT_API_URL``: the first run of the kept kind starts the
server (its time is shown apart), the next ones reuse it. ``BRIEF_PREFECT_KEEP=0`` gives the temporary
server of before. Steps: the run's ``step_seconds`` (the runs projection); imports: what ``brief run``
imports before its flow starts, timed in a fresh process. Target (issue 34): a kept-server run's wall
<= steps + imports + 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DAYS = {"sample": "2025-08-06", "aiweb": "2026-03-18"}
AIWEB_TARGET_S = 6.0  # a 14-source day's run with the server kept
IMPORTS = (
    "import time; t = time.perf_counter(); import flows.cli, ops.runs, flows.keptserver; "
    "from flows.daily import daily_brief; from flows.runlog import run_log; "
    "print(time.perf_counter() - t)"
)


def brief_run(config: Path, env: dict[str, str], day: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(config), "--date", day],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"brief run failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    return wall


def last_steps(config: Path) -> float:
    """The seconds of the last completed run's steps."""
    from storage.projections import materialize
    from tasks.settings import load_settings

    runs = materialize(load_settings(str(config)).storage.event_store(), "runs")
    done = runs.filter(runs["status"] == "completed").sort("started_at")
    return sum(json.loads(done["step_seconds"][-1]).values())


def imports(env: dict[str, str]) -> float:
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each kind after the first")
    parser.add_argument("--day", choices=sorted(DAYS), default="sample")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from flows.keptserver import stop_kept

    day = DAYS[args.day]
    work = Path(tempfile.mkdtemp(prefix="bench-kept-"))
    if args.day == "aiweb":
        from tests.real_days import aiweb_config

        if not (args.data / "aiweb" / "feeds").is_dir():
            raise SystemExit(f"no AI-world feeds under {args.data / 'aiweb'} (give --data)")
        config = aiweb_config(work / "aiweb", args.data / "aiweb")
    else:
        shutil.copytree(REPO / "samples", work / "samples")
        config = work / "samples" / "brief.toml"
        config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    base = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env = {
        **base,
        "PREFECT_HOME": str(work / "prefect"),
        "PYTHONPATH": str(REPO),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    }
    temporary = {**env, "BRIEF_PREFECT_KEEP": "0"}
    rows: list[tuple[str, float, float, float]] = []
    try:
        first = brief_run(config, env, day)  # starts the kept server (and the store's first brief)
        rows.append(("kept: first (starts the server)", first, last_steps(config), imports(env)))
        for k in range(args.runs):  # interleaved, so that both kinds see the same machine
            rows.append(
                (
                    f"kept: again, fresh process ({k + 1})",
                    brief_run(config, env, day),
                    last_steps(config),
                    imports(env),
                )
            )
            wall = brief_run(config, temporary, day)
            rows.append((f"temporary server ({k + 1})", wall, last_steps(config), imports(env)))
    finally:
        stop_kept(work / "prefect")
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"# brief run of {'the sample' if args.day == 'sample' else 'the 14 AI-world feeds'} ({day}), "
        f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(
        "| run | wall | steps | imports | rest (wall - steps - imports) | target wall <= steps + imports + 1 s "
        + ("| target wall <= 6 s |" if args.day == "aiweb" else "|")
    )
    print("|---|---|---|---|---|---|" + ("---|" if args.day == "aiweb" else ""))
    for label, wall, steps, imported in rows:
        target = steps + imported + 1
        kept_again = label.startswith("kept: again")
        verdict = "" if not kept_again else ("met" if wall <= target else "missed")
        flat = "" if not kept_again else ("met" if wall <= AIWEB_TARGET_S else "missed")
        print(
            f"| {label} | {wall:.1f} s | {steps:.2f} s | {imported:.1f} s | {wall - steps - imported:.1f} s "
            f"| {target:.1f} s {verdict} |" + (f" {flat} |" if args.day == "aiweb" else "")
        )


if __name__ == "__main__":
    main()
