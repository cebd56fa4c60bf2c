"""What a shadow run adds to a daily run: the same days with and without ``[policy.shadow]``.

    python bench/shadow.py [--data ../shared/data] [--mix outlets|aiweb|both] [--candidate FILE]

Two mixes of real days: the five outlets of 2025-08-05..07 (``feeds/``) and the AI world's 14
feeds of 2026-03-17..19 (``aiweb/feeds/``, the guide's config). Each is run in two ways, each
into new stores, without a shadow and with one, side by side:

- **as scheduled**: each store's days in a process of its own, in date order, as a worker runs
  them: each run embeds its day's new texts (the model loads in the first) and the shadow reuses
  those vectors;
- **vectors in memory**: one process runs the days once (a warm-up, not measured), then both
  stores day by day (alternating which goes first), every text's vector already in memory: the
  runs cost their decisions alone, the worst case for the shadow's share.

The default candidate changes everything a shadow can decide: the unfitted ranking
(``editorial_model = "rules"``, every story core) and a looser clustering
(``near_duplicate_threshold = 0.5``), so the shadow reclusters, finds follow-ups and scores
every story again: its costliest path. Step times are the runs' own (``run.finished``'s
``step_seconds``), without Prefect's start-up. Target: a shadow adds at most 30 % to a run's
step time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import REAL_DAYS, REAL_SOURCES, aiweb_config, archive_config

LABS = ("openai_research", "anthropic_news")
AIWEB_DAYS = ["2026-03-17", "2026-03-18", "2026-03-19"]
CANDIDATE = '[policy]\neditorial_model = "rules"\nnear_duplicate_threshold = 0.5\n'
TARGET = 0.30


def configs(mix: str, data: Path, folder: Path, candidate: str) -> dict[str, Path]:
    """The mix's config three times (warm-up, without, with a shadow), each with a store of its own."""
    out = {}
    for name in ("warm-up", "without", "with"):
        extra = '\n[policy.shadow]\ncandidate = "candidate.toml"\n' if name == "with" else ""
        where = folder / mix / name
        if mix == "outlets":
            out[name] = archive_config(where, data / "feeds", REAL_SOURCES, on_topic=LABS, extra=extra)
        else:
            out[name] = aiweb_config(where, data / "aiweb", extra=extra)
        (where / "candidate.toml").write_text(candidate)
    return out


def finished(config: Path, run_id: str) -> dict:
    from tasks.settings import load_settings

    store = load_settings(str(config)).storage.event_store()
    [done] = [e for e in store.read(event_types=["run.finished"]) if e.run_id == run_id]
    return done.payload


def shadow_of(config: Path, run_id: str) -> dict:
    from tasks.settings import load_settings

    store = load_settings(str(config)).storage.event_store()
    [done] = [e for e in store.read(event_types=["shadow.finished"]) if e.run_id == run_id]
    return done.payload


def child(config: str, days: list[str]) -> None:
    """Run ``days`` in order on ``config`` in this process; print their run ids."""
    from flows.daily import daily_brief

    print(json.dumps([daily_brief(day, config, deliver=False).run_id for day in days]))


def scheduled(mix: str, days: list[str], chosen: dict[str, Path], env: dict[str, str]) -> list[dict]:
    runs = {}
    for name in ("without", "with"):
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(chosen[name]), *days],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise SystemExit(f"{mix} {name}: the runs failed:\n{done.stderr[-3000:]}")
        runs[name] = json.loads(done.stdout.strip().splitlines()[-1])
    return [
        row(mix, day, {n: finished(chosen[n], runs[n][k]) | {"run_id": runs[n][k]} for n in runs}, chosen)
        for k, day in enumerate(days)
    ]


def row(mix: str, day: str, timed: dict[str, dict], chosen: dict[str, Path]) -> dict:
    shadow = shadow_of(chosen["with"], timed["with"]["run_id"])
    return {
        "mix": mix,
        "day": day,
        "live_stories": timed["without"]["counts"]["stories"],
        "without": timed["without"]["step_seconds"],
        "with": timed["with"]["step_seconds"],
        **shadow,
    }


def in_memory(mix: str, days: list[str], chosen: dict[str, Path]) -> list[dict]:
    from flows.daily import daily_brief

    for day in days:
        daily_brief(day, str(chosen["warm-up"]), deliver=False)
    rows = []
    for k, day in enumerate(days):
        order = ("without", "with") if k % 2 == 0 else ("with", "without")
        timed = {}
        for name in order:
            result = daily_brief(day, str(chosen[name]), deliver=False)
            timed[name] = finished(chosen[name], result.run_id) | {"run_id": result.run_id}
        rows.append(row(mix, day, timed, chosen))
    return rows


def table(title: str, rows: list[dict]) -> None:
    print(f"## {title}\n")
    print(
        "| mix | day | stories (live / shadow) | decided otherwise (relevance / clustering / top) "
        "| steps without shadow | steps with shadow | of which shadow | shadow / the run's other steps "
        "| with / without |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    sums = {"without": 0.0, "other": 0.0, "shadow": 0.0}
    for r in rows:
        without = sum(r["without"].values())
        shadow = r["with"].get("shadow", 0.0)
        other = sum(r["with"].values()) - shadow
        sums["without"] += without
        sums["other"] += other
        sums["shadow"] += shadow
        d = r["differed"]
        print(
            f"| {r['mix']} | {r['day']} | {r['live_stories']} / {r['stories']} | {d['relevance']} / "
            f"{d['clustering']} / {d['top']} of {r['articles']} | {without:.2f} s | {other + shadow:.2f} s | "
            f"{shadow:.2f} s | {shadow / other:.1%} | {(other + shadow) / without - 1:+.1%} |"
        )
    share = sums["shadow"] / sums["other"]
    verdict = "within" if share <= TARGET else "OVER"
    print(
        f"\nAll days: the shadow took {sums['shadow']:.2f} s beside {sums['other']:.2f} s of the runs' other "
        f"steps (**{share:.1%}**, {verdict} the {TARGET:.0%} target); the same days without a shadow took "
        f"{sums['without']:.2f} s.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--mix", choices=("outlets", "aiweb", "both"), default="both")
    parser.add_argument(
        "--candidate", help="a candidate policy file (default: the rules ranking, looser clustering)"
    )
    parser.add_argument("--child", nargs="+", metavar=("CONFIG", "DAY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], args.child[1:])
    data = Path(args.data)
    if not (data / "feeds").is_dir():
        raise SystemExit(f"no real data under {data}; pass --data ../shared/data")
    candidate = Path(args.candidate).read_text() if args.candidate else CANDIDATE
    work = Path(tempfile.mkdtemp(prefix="bench-shadow-"))
    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": os.environ.get(
            "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120"
        ),
    }
    env.pop("BRIEF_EMBEDDINGS_SHARED", None)  # each process embeds its own texts
    os.environ.update({k: v for k, v in env.items() if k.startswith(("PREFECT_", "HF_"))})
    os.environ.pop("BRIEF_EMBEDDINGS_SHARED", None)
    mixes = {"outlets": REAL_DAYS, "aiweb": AIWEB_DAYS}
    wanted = list(mixes) if args.mix == "both" else [args.mix]
    t0 = time.perf_counter()
    first, again = [], []
    try:
        for mix in wanted:
            first += scheduled(mix, mixes[mix], configs(mix, data, work / "scheduled", candidate), env)
            again += in_memory(mix, mixes[mix], configs(mix, data, work / "in-memory", candidate))
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    took = time.perf_counter() - t0
    print(f"# a shadow run beside the daily run ({os.cpu_count()} cores, {took:.0f} s in all)\n")
    print("Candidate:\n\n```toml\n" + candidate.strip() + "\n```\n")
    table("As scheduled: each store's days in a process of its own, the day's texts embedded", first)
    table("Vectors in memory: the decisions alone (the worst case for the shadow's share)", again)


if __name__ == "__main__":
    main()
