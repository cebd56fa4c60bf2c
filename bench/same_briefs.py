"""The same briefs before and after a change: the briefs of the real days and of the sample, byte for byte,
and the event logs those runs wrote.

    python bench/same_briefs.py [--ref main] [--data ../shared/data] [--keep DIR]

Builds the briefs (JSON, Markdown and HTML, and the text, email and feed entry rendered from the
JSON) of 2025-08-05..07 (five real sources, a fresh store each), of one day of the AI world's 14
feeds (2026-03-17), of one July 2025 day of the four tech feeds (2025-07-23) and of the sample's
day (``samples/``) twice in one run: with the working tree's code and with the code of a git ref,
checked out with ``git worktree add --detach`` into a temporary folder. Each build is its own
process that runs this script with that tree first on ``sys.path``, so the ref's briefs are the
ref's code's. Prints one row per brief and format (bytes and sha256 of each, identical or not),
one row per store for its event log, and exits 1 on any difference.

An event log is compared as what it says: each event's type, schema version, subject, producer,
policy version, payload and lineage. What differs between any two runs by design is read apart:
an event is named by what it says and by the names of the events it was derived from (derivations
hash their run id into their event id), runs by the order they started, times, durations and the
process are dropped, the build folder reads ``<work>``, and the events are compared sorted (fetches
end in any order).

The digest a ``run.inputs`` (or ``run.unchanged``) event records hashes the code too, so it is read apart: what the run
read is compared event by event.

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
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.real_days import aiweb_config, archive_config

DAYS = ["2025-08-05", "2025-08-06", "2025-08-07"]
SOURCES = ["arstechnica", "techcrunch", "wired", "openai_research", "anthropic_news"]
SAMPLE_DAY = "2025-08-06"  # the sample feeds' one day
FORMATS = ("json", "md", "html")  # the published files
MESSAGES = ("text", "email", "entry")  # rendered from the JSON brief: chat text, email body, feed entry
NORMALISED = ("policy_version",)
AIWEB_DAY = "2026-03-17"  # one day of the AI world's 14 feeds
JULY_DAY = "2025-07-23"  # one day of the four tech feeds of July 2025
JULY_SOURCES = ["arstechnica", "techcrunch", "tweakers", "wired"]
NAMES = [*DAYS, "aiweb", "july", "sample"]
STORES = ("real", "aiweb", "july", "sample")
TOKEN = re.compile(r"[0-9A-Za-z_.:-]+")  # ids inside text are whole tokens of these
VOLATILE = (
    "seconds",
    "duration",
    "elapsed",
    "_at",
    "_ms",
    "took",
    "process",
)  # times, durations, the process


def child(configs: str, out: str, tree: str) -> None:
    """Build every day of ``configs`` (JSON: [day, config, name, store]) with ``tree``'s code; copy
    each brief into ``out``, write the messages rendered from it, and each store's event log."""
    sys.path.insert(0, tree)
    from flows.daily import daily_brief
    from storage.store import ParquetEventStore
    from tasks.render import render, view
    from tasks.settings import load_settings

    stores: dict[str, str] = {}
    for day, where, name, store in json.loads(configs):
        result = daily_brief(day, where, deliver=False)
        # a RunResult; a dict before the run said its result as a dataclass (an older --ref)
        files = result["files"] if isinstance(result, dict) else result.files
        for ext in FORMATS:
            shutil.copyfile(files[ext], Path(out) / f"{name}.{ext}")
        settings = load_settings(where)
        labels = {c.name: c.label_en or c.name for c in settings.policy.categories}
        context = view(brief_of(Path(files["json"]).read_text()), labels)
        for kind in MESSAGES:
            (Path(out) / f"{name}.{kind}").write_text(render(kind, context))
        stores[store] = settings.storage.root
    for store, root in stores.items():
        with (Path(out) / f"{store}.events.jsonl").open("w") as lines:
            for event in ParquetEventStore(root).read():
                lines.write(
                    json.dumps(
                        {
                            "brief_date": str(event.brief_date),
                            "event_id": event.event_id,
                            "event_type": event.event_type,
                            "schema_version": event.schema_version,
                            "run_id": event.run_id,
                            "subject_id": event.subject_id,
                            "source_event_ids": list(event.source_event_ids),
                            "produced_by": event.produced_by,
                            "policy_version": event.policy_version,
                            "payload": dict(event.payload),
                        },
                        sort_keys=True,
                        default=str,
                    )
                    + "\n"
                )


def brief_of(text: str) -> object:
    """A published JSON brief as the tree's ``view`` takes it: its model where the tree has one (read
    with the tree's own code, first on ``sys.path``), else its dict."""
    try:
        from storage.brief import read_brief
    except ImportError:  # a ref from before the brief was a model
        return json.loads(text)
    return read_brief(text)


def canonical_log(raw: bytes, work: str) -> bytes:
    """An event log as what it says, in an order that does not depend on which fetch ended first:
    each event named by what it says (type, subject, payload, and the names of the events it was
    derived from), run ids by the order the runs started, no times, the build folder as ``<work>``;
    the events sorted."""
    events = [json.loads(line) for line in raw.decode().replace(work, "<work>").splitlines()]
    for event in events:
        # ``run.inputs`` hashes the code with what the run read (``tasks/steps/unchanged.py``): any
        # change to the code changes it; what the run read is compared event by event
        if event["event_type"] in ("run.inputs", "run.unchanged") and isinstance(event.get("payload"), dict):
            event["payload"]["digest"] = "<the run's inputs and code>"
    runs: dict[str, str] = {}
    for event in events:
        runs.setdefault(event["run_id"], f"<run {len(runs)}>")
    ids = {e["event_id"] for e in events}

    def clean(value: object, names: dict[str, str]) -> object:
        if isinstance(value, dict):
            return {
                k: clean(v, names)
                for k, v in value.items()
                if not any(k.endswith(t) or t == k for t in VOLATILE)
            }
        if isinstance(value, list):
            return [clean(v, names) for v in value]
        if isinstance(value, str):
            return TOKEN.sub(lambda m: names.get(m.group(), runs.get(m.group(), m.group())), value)
        return value

    # an id inside a payload counts as "<ref>" in a name (names are made before all ids have one)
    refs = dict.fromkeys(ids, "<ref>")
    names: dict[str, str] = {}
    pending = list(events)
    while pending:
        later = []
        for event in pending:
            sources = event["source_event_ids"]
            if any(s in ids and s not in names for s in sources):
                later.append(event)
                continue
            said = {k: v for k, v in event.items() if k not in ("event_id", "run_id", "source_event_ids")}
            said["sources"] = sorted(names.get(s, s) for s in sources)
            text = json.dumps(clean(said, refs), sort_keys=True, ensure_ascii=False)
            names[event["event_id"]] = (
                f"<{event['event_type']} {hashlib.sha256(text.encode()).hexdigest()[:12]}>"
            )
        if len(later) == len(pending):  # a cycle cannot happen in a log; name the rest as they are
            names.update({e["event_id"]: e["event_id"] for e in later})
            break
        pending = later
    lines = []
    for event in events:
        shown = {k: v for k, v in event.items() if k not in ("event_id", "run_id")}
        shown["event"] = event["event_id"]
        lines.append(json.dumps(clean(shown, names), sort_keys=True, ensure_ascii=False))
    return ("\n".join(sorted(lines)) + "\n").encode()


def build(tree: Path, data: Path, work: Path) -> dict[str, bytes]:
    """The briefs of every day and of the sample as the code in ``tree`` writes them, in new stores,
    and each store's event log."""
    work.mkdir(parents=True)
    real = archive_config(work / "real", data / "feeds", SOURCES, root=str(work / "real" / "store"))
    aiweb = aiweb_config(work / "aiweb", data / "aiweb", root=str(work / "aiweb" / "store"))
    july = archive_config(
        work / "july", data / "month" / "feeds", JULY_SOURCES, root=str(work / "july" / "store")
    )
    shutil.copytree(REPO / "samples", work / "samples")  # its store goes to work/var
    runs = [(day, str(real), day, "real") for day in DAYS] + [
        (AIWEB_DAY, str(aiweb), "aiweb", "aiweb"),
        (JULY_DAY, str(july), "july", "july"),
        (SAMPLE_DAY, str(work / "samples" / "brief.toml"), "sample", "sample"),
    ]
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
        [sys.executable, __file__, "--child", json.dumps(runs), str(out), str(tree)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"the build in {tree} failed:\n{done.stderr[-3000:]}")
    briefs = {f"{n}.{ext}": (out / f"{n}.{ext}").read_bytes() for n in NAMES for ext in FORMATS + MESSAGES}
    logs = {f"{s}.events": canonical_log((out / f"{s}.events.jsonl").read_bytes(), str(work)) for s in STORES}
    return briefs | logs


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


def first_difference(name: str, ours: bytes, theirs: bytes) -> str:
    """Where two event logs first part: the event of each, shortened."""
    a, b = ours.decode().splitlines(), theirs.decode().splitlines()
    for n, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"\n{name}: event {n} differs\n  tree: {x[:600]}\n  ref:  {y[:600]}"
    return f"\n{name}: {len(a)} events in the tree, {len(b)} in the ref"


def item_changes(name: str, ours: bytes, theirs: bytes) -> list[str]:
    """What a reader sees changed between two JSON briefs: the items that came in, went out or
    changed section, by title (with the item's importance and relevance in each)."""
    try:
        a, b = json.loads(ours), json.loads(theirs)
    except ValueError:
        return []

    def items(doc: dict) -> dict[str, dict]:
        return {i["title"]: i for i in doc.get("items", [])}

    tree, ref = items(a), items(b)

    def said(i: dict) -> str:
        return f"{i['section']}, {i.get('relevance', '?')}, importance {i.get('importance', 0):.2f}"

    out = [f"- {name}: in    {t[:90]} ({said(i)})" for t, i in tree.items() if t not in ref]
    out += [f"- {name}: out   {t[:90]} (was {said(i)})" for t, i in ref.items() if t not in tree]
    out += [
        f"- {name}: moved {t[:90]} ({ref[t]['section']} -> {i['section']})"
        for t, i in tree.items()
        if t in ref and ref[t]["section"] != i["section"]
    ]
    return out


def sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:16]


def compare(ours: dict[str, bytes], theirs: dict[str, bytes], ref: str) -> bool:
    print(
        f"# Briefs of {DAYS[0]}..{DAYS[-1]} ({', '.join(SOURCES)}), of the AI world's {AIWEB_DAY}, "
        f"of the tech feeds' {JULY_DAY} and of the sample's {SAMPLE_DAY}, and their event logs: "
        f"working tree vs {ref}\n"
    )
    print("| brief | tree bytes | tree sha256 | ref bytes | ref sha256 | identical |")
    print("|---|---|---|---|---|---|")
    same_all = True
    notes: list[str] = []
    notes_apart: list[str] = []
    changed_items: list[str] = []
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
                if name.endswith(".events"):
                    notes_apart.append(first_difference(name, a, b))
                if name.endswith(".json"):
                    changed_items.extend(item_changes(name, a, b))
        print(f"| {name} | {len(a)} | {sha(a)} | {len(b)} | {sha(b)} | {verdict} |")
    if notes:
        print(
            f"\nFields compared apart ({', '.join(NORMALISED)}: a digest of the policy, which "
            "changes when what the digest covers changes, e.g. since the topic vocabulary's digest "
            "joined it); everything else is byte for byte:"
        )
        for note in notes:
            print(f"- {note}")
    if changed_items:
        print("\nItems of the JSON briefs that differ (in / out / moved to another section):")
        for line in changed_items:
            print(line)
    for difference in notes_apart:
        print(difference)
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
    parser.add_argument(
        "--keep", default=None, help="write both sides' briefs and event logs here (tree/, ref/) to read"
    )
    parser.add_argument("--child", nargs=3, metavar=("RUNS", "OUT", "TREE"), help=argparse.SUPPRESS)
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
    if args.keep:
        for side, files in (("tree", ours), (args.ref.replace("/", "-"), theirs)):
            folder = Path(args.keep) / side
            folder.mkdir(parents=True, exist_ok=True)
            for name, raw in files.items():
                (folder / name).write_bytes(raw)
    sys.exit(0 if compare(ours, theirs, args.ref) else 1)


if __name__ == "__main__":
    main()
