"""The editor's acts timed and compared, working tree vs a git ref.

    python bench/acts.py [--ref main] [--data ../shared/data] [--rounds 2]

Publishes the sample's day and the real day 2025-08-06 (five sources, 2025-08-05 before it) once,
with the working tree's code; then, on a fresh copy of each, makes five acts in a row through
``ops.acts`` (correct a title, mark an item, retract it, undo the retraction, correct a summary)
with the working tree's code and with the ref's (checked out with ``git worktree add --detach``),
each in its own process with its tree first on ``sys.path``, the two side by side for ``--rounds``
rounds. Prints each act's CPU time (``time.process_time``: every thread of the process) and wall
time per tree, with the load average when each process started, and whether the brief files after
each act and the event logs the acts left are the same (the logs compared as
``bench/same_briefs.py`` compares them). Exits 1 on any difference.
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
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]  # a child process imports its tree's code (PYTHONPATH), not this

DAYS = {"sample": "2025-08-06", "real": "2025-08-06"}
SOURCES = ["arstechnica", "techcrunch", "wired", "openai_research", "anthropic_news"]
FORMATS = ("json", "md", "html")


def build(work: Path, data: Path) -> None:
    """The two days published with this tree's code (a child process: Prefect runs the flows)."""
    from flows.daily import daily_brief
    from tests.real_days import archive_config

    sample = work / "sample"
    shutil.copytree(REPO / "samples" / "feeds", sample / "feeds")
    config = (REPO / "samples" / "brief.toml").read_text().replace("../var/sample-store", "store")
    (sample / "brief.toml").write_text(config)
    daily_brief(DAYS["sample"], str(sample / "brief.toml"), deliver=False)
    real = archive_config(work / "real", data / "feeds", SOURCES)
    for day in ("2025-08-05", DAYS["real"]):
        daily_brief(day, str(real), deliver=False)


def act(built: Path, out: Path, day: date) -> None:
    """Five acts on a copy of ``built`` with the code first on ``sys.path``; their times as JSON, and
    the brief files after each and the event log copied into ``out``."""
    from flows.commands.options import open_resources
    from ops import acts

    shutil.copytree(built, out / "work")
    settings, resources = open_resources(str(out / "work" / "brief.toml"))
    resources.models.run.encode(["the model loads before the first act is timed"])
    briefs = out / "work" / "store" / "briefs"
    items = json.loads((briefs / f"{day}.json").read_text())["items"]
    first, last = items[0]["story_id"], items[-1]["story_id"]
    who = acts.Act(day, "bench")
    done = [
        ("correct", lambda: acts.correct(settings, resources, who, first, {"title": "A corrected title"})),
        ("mark", lambda: acts.mark(settings, resources, who, {last: "related"})),
        ("retract", lambda: acts.retract(settings, resources, who, last, "withdrawn")),
        ("restore", lambda: acts.restore(settings, resources, who, last, "back")),
        ("correct", lambda: acts.correct(settings, resources, who, first, {"summary": "A new summary."})),
    ]
    rows = []
    for k, (name, run) in enumerate(done):
        cpu, wall = time.process_time(), time.perf_counter()
        outcome = run()
        rows.append((name, time.process_time() - cpu, time.perf_counter() - wall, outcome.version))
        for ext in FORMATS:
            shutil.copyfile(briefs / f"{day}.{ext}", out / f"{k}.{ext}")
    with (out / "events.jsonl").open("w") as lines:
        for e in resources.store.read():
            fields = ("event_id", "event_type", "schema_version", "run_id", "subject_id", "produced_by")
            row = {f: getattr(e, f) for f in fields} | {"brief_date": str(e.brief_date)}
            row |= {"source_event_ids": list(e.source_event_ids), "policy_version": e.policy_version}
            lines.write(json.dumps(row | {"payload": dict(e.payload)}, sort_keys=True, default=str) + "\n")
    print(json.dumps(rows))


def child(args: list[str], tree: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, __file__, *args],
        cwd=tree,
        env=env | {"PYTHONPATH": str(tree)},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} with {tree} failed:\n{done.stderr[-3000:]}")
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", default="main")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--act", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        build(Path(args.build[0]), Path(args.build[1]))
        return
    if args.act:
        act(Path(args.act[0]), Path(args.act[1]), date.fromisoformat(args.act[2]))
        return
    sys.path.insert(0, str(REPO))
    from bench.same_briefs import canonical_log

    work = Path(tempfile.mkdtemp(prefix="bench-acts-"))
    checkout = work / "ref"
    env = {**os.environ, "PREFECT_HOME": str(work / "prefect"), "PREFECT_LOGGING_LEVEL": "WARNING"}
    env |= {
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "GX_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
    }
    env |= {"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "300", "OMP_NUM_THREADS": "1"}
    env.pop("PREFECT_API_URL", None)
    same = True
    try:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(checkout), args.ref],
            check=True,
        )
        child(["--build", str(work / "built"), args.data], REPO, env)
        print(
            f"| day | round | act | {args.ref} CPU s | tree CPU s | {args.ref} wall s | tree wall s | load (ref, tree) |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for name, day in DAYS.items():
            for r in range(1, args.rounds + 1):
                runs, loads = {}, {}
                for side, tree in (("ref", checkout), ("tree", REPO)):
                    out = work / f"{name}-{side}-{r}"
                    loads[side] = f"{os.getloadavg()[0]:.1f}"
                    runs[side] = json.loads(
                        child(["--act", str(work / "built" / name), str(out), day], tree, env)
                    )
                for (what, rc, rw, _), (_, tc, tw, _) in zip(runs["ref"], runs["tree"], strict=True):
                    print(
                        f"| {name} | {r} | {what} | {rc:.3f} | {tc:.3f} | {rw:.3f} | {tw:.3f} | {loads['ref']}, {loads['tree']} |"
                    )
                ref, ours = work / f"{name}-ref-{r}", work / f"{name}-tree-{r}"
                files = sorted(p.name for p in ref.iterdir() if p.suffix[1:] in FORMATS)
                differ = [f for f in files if (ref / f).read_bytes() != (ours / f).read_bytes()]
                logs = [
                    canonical_log((d / "events.jsonl").read_bytes(), str(d / "work")) for d in (ref, ours)
                ]
                same &= not differ and logs[0] == logs[1]
                print(
                    f"|  |  | {name} round {r}: {len(files) - len(differ)} of {len(files)} brief files identical"
                    f"{' (' + ', '.join(differ) + ' differ)' if differ else ''}; event logs "
                    f"{'identical' if logs[0] == logs[1] else 'DIFFERENT'} |  |  |  |  |  |"
                )
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(checkout)],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
