"""The same briefs before and after a change: the briefs of the real days and of the sample, byte for byte.

    python bench/same_briefs.py [--ref main] [--data ../shared/data]

Builds the briefs (JSON, Markdown and HTML, and the text, email and feed entry rendered from the
JSON) of 2025-08-05..07 (five real sources, a fresh store each) and of the sample's day
(``samples/``) twice in one run: with the working tree's code and with the code of a git ref,
checked out with ``git worktree add --detach`` into a temporary folder. Each build is its own
process that runs its tree's copy of this script (which puts that tree first on ``sys.path``), so
the ref's briefs are the ref's code's. Prints one row per brief and format (bytes and
sha256 of each, identical or not) and exits 1 on any difference.

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
SAMPLE_DAY = "2025-08-06"  # the sample feeds' one day
FORMATS = ("json", "md", "html")  # the published files
MESSAGES = ("text", "email", "entry")  # rendered from the JSON brief: chat text, email body, feed entry
NORMALISED = ("policy_version",)
NAMES = [*DAYS, "sample"]


def child(config: str, sample: str, out: str) -> None:
    """Build the days, then the sample's, with the code on ``PYTHONPATH``; copy each brief into
    ``out``, and write the messages rendered from it."""
    from flows.daily import daily_brief
    from tasks.render import render, view
    from tasks.settings import load_settings

    runs = [(day, config, day) for day in DAYS] + [(SAMPLE_DAY, sample, "sample")]
    for day, where, name in runs:
        result = daily_brief(day, where, deliver=False)
        for ext in FORMATS:
            shutil.copyfile(result["files"][ext], Path(out) / f"{name}.{ext}")
        labels = {c.name: c.label_en or c.name for c in load_settings(where).policy.categories}
        context = view(json.loads(Path(result["files"]["json"]).read_text()), labels)
        for kind in MESSAGES:
            (Path(out) / f"{name}.{kind}").write_text(render(kind, context))


def build(tree: Path, data: Path, work: Path) -> dict[str, bytes]:
    """The briefs of ``DAYS`` and of the sample as the code in ``tree`` writes them, in new stores."""
    work.mkdir(parents=True)
    config = archive_config(work, data / "feeds", SOURCES, root=str(work / "store"))
    shutil.copytree(REPO / "samples", work / "samples")  # its store goes to work/var
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
    done = subprocess.run(
        [
            sys.executable,
            str(tree / "bench" / "same_briefs.py"),  # the tree's own copy: it puts its tree first on the path
            "--child",
            str(config),
            str(work / "samples" / "brief.toml"),
            str(out),
        ],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the build in {tree} failed:\n{done.stderr[-3000:]}")
    return {f"{n}.{ext}": (out / f"{n}.{ext}").read_bytes() for n in NAMES for ext in FORMATS + MESSAGES}


def normalise(raw: bytes) -> tuple[bytes, dict[str, object]]:
    """The JSON brief with the ``NORMALISED`` fields blanked, and their values (another format as it is)."""
    try:
        doc = json.loads(raw)
    except ValueError:
        return raw, {}
    found = {k: doc[k] for k in NORMALISED if k in doc}
    for k in found:
        doc[k] = None
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode(), found


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def compare(ours: dict[str, bytes], theirs: dict[str, bytes], ref: str) -> bool:
    print(
        f"# Briefs of {DAYS[0]}..{DAYS[-1]} ({', '.join(SOURCES)}) and of the sample's {SAMPLE_DAY}: "
        f"working tree vs {ref}\n"
    )
    print("| brief | tree bytes | tree sha256 | ref bytes | ref sha256 | identical |")
    print("|---|---|---|---|---|---|")
    same_all = True
    notes = []
    for name in ours:
        a, b = ours[name], theirs[name]
        if a == b:
            verdict = "yes"
        else:
            na, fa = normalise(a)
            nb, fb = normalise(b)
            changed = sorted(k for k in set(fa) | set(fb) if fa.get(k) != fb.get(k))
            if na == nb and changed:
                verdict = f"yes, except {', '.join(changed)}"
                notes.extend(f"{name}: {k} {fb.get(k)!r} -> {fa.get(k)!r}" for k in changed)
            else:
                verdict = "NO"
                same_all = False
        print(f"| {name} | {len(a)} | {sha(a)} | {len(b)} | {sha(b)} | {verdict} |")
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
    parser.add_argument("--child", nargs=3, metavar=("CONFIG", "SAMPLE", "OUT"), help=argparse.SUPPRESS)
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
