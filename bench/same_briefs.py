"""The same briefs before and after a change: the JSON briefs of the real days, byte for byte.

    python bench/same_briefs.py [--ref main] [--data ../shared/data]

Builds the JSON briefs of 2025-08-05..07 (five real sources, a fresh store each) twice in one
run: with the working tree's code and with the code of a git ref, checked out with
``git worktree add --detach`` into a temporary folder. Each build is its own process whose
``PYTHONPATH`` points at its tree. Prints one row per day (bytes and sha256 of each, identical
or not) and exits 1 on any difference.

A field listed in ``NORMALISED`` may differ when the policy itself changed (``policy_version``
is a digest of the policy, so a change to what the digest covers changes it); the script
reports such a field on its own line and compares everything else byte for byte with only
that field blanked.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import archive_config

DAYS = ["2025-08-05", "2025-08-06", "2025-08-07"]
SOURCES = ["arstechnica", "techcrunch", "wired", "openai_research", "anthropic_news"]
NORMALISED = ("policy_version",)


def child(config: str, out: str) -> None:
    """Build the days with the code on ``PYTHONPATH``; copy each JSON brief into ``out``."""
    from flows.daily import daily_brief

    for day in DAYS:
        result = daily_brief(day, config, deliver=False)
        shutil.copyfile(result["files"]["json"], Path(out) / f"{day}.json")


def build(tree: Path, data: Path, work: Path) -> dict[str, bytes]:
    """The JSON briefs of ``DAYS`` as the code in ``tree`` writes them, in a new store."""
    work.mkdir(parents=True)
    config = archive_config(work, data / "feeds", SOURCES, root=str(work / "store"))
    out = work / "briefs"
    out.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "GX_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",  # a busy machine starts it slowly
    }
    env.pop("PREFECT_API_URL", None)
    # the tree's own copy of this script: it puts its own tree first on the import path
    script = tree / "bench" / "same_briefs.py"
    done = subprocess.run(
        [sys.executable, str(script), "--child", str(config), str(out)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the build in {tree} failed:\n{done.stderr[-3000:]}")
    return {day: (out / f"{day}.json").read_bytes() for day in DAYS}


def normalise(raw: bytes) -> tuple[bytes, dict[str, object]]:
    """The brief with the ``NORMALISED`` fields blanked, and their values."""
    doc = json.loads(raw)
    found = {k: doc[k] for k in NORMALISED if k in doc}
    for k in found:
        doc[k] = None
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode(), found


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def compare(ours: dict[str, bytes], theirs: dict[str, bytes], ref: str) -> bool:
    print(f"# JSON briefs of {DAYS[0]}..{DAYS[-1]}: working tree vs {ref} ({', '.join(SOURCES)})\n")
    print("| day | tree bytes | tree sha256 | ref bytes | ref sha256 | identical |")
    print("|---|---|---|---|---|---|")
    same_all = True
    notes = []
    for day in DAYS:
        a, b = ours[day], theirs[day]
        if a == b:
            verdict = "yes"
        else:
            na, fa = normalise(a)
            nb, fb = normalise(b)
            changed = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
            if na == nb and changed:
                verdict = f"yes, except {', '.join(changed)}"
                notes.extend(f"{day}: {k} {fb.get(k)!r} -> {fa.get(k)!r}" for k in changed)
            else:
                verdict = "NO"
                same_all = False
        print(f"| {day} | {len(a)} | {sha(a)} | {len(b)} | {sha(b)} | {verdict} |")
    if notes:
        print(
            f"\nFields compared apart ({', '.join(NORMALISED)}: a digest of the policy, which "
            "changes when what the digest covers changes, e.g. since the topic vocabulary's digest "
            "joined it); everything else is byte for byte:"
        )
        for note in notes:
            print(f"- {note}")
    apart = sorted({note.split(": ", 1)[1].split(" ", 1)[0] for note in notes})
    if not same_all:
        print("\nDIFFERENT")
    else:
        print("\nidentical" + (f" (apart from {', '.join(apart)}, explained above)" if apart else ""))
    return same_all


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ref", default="main", help="the git ref to compare with (default: main)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--child", nargs=2, metavar=("CONFIG", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    data = Path(args.data)
    if not all((data / "feeds" / s / f"{d}.xml").is_file() for s in SOURCES for d in DAYS):
        raise SystemExit(
            f"no real feed snapshots under {data / 'feeds'} (pass --data PATH to ../shared/data)"
        )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a stopped run still removes its checkout
    work = Path(tempfile.mkdtemp(prefix="bench-same-briefs-"))
    checkout = work / "ref"
    try:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(checkout), args.ref],
            check=True,
        )
        ours = build(REPO, data, work / "tree-build")
        theirs = build(checkout, data, work / "ref-build")
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(checkout)],
            check=False,
            capture_output=True,
        )
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if compare(ours, theirs, args.ref) else 1)


if __name__ == "__main__":
    main()
