"""Editorial judgement on labelled days it never saw: is it AI news, does the right story lead?

    python bench/editorial.py [--data ../shared/data] [--cache DIR] [--before MODEL.json]
                              [--mix aiweb|tech ...] [--stories rules|pairs] [--out docs/benchmarks/editorial.md]
    python bench/editorial.py --write-model tasks/models/ai.json

The 13 labelled days of two source mixes (``tests/real_days.py``: ``BLOCKS``), each block of
neighbouring days left out in turn (``tests/judgement.py``): a model is fitted on every other
labelled day of both mixes, without any story that shares a labelled item or a labelled story
with a held-out day, its on-topic threshold chosen over the training blocks only; the held-out
days are then published by the real pipeline (collect, dedup, score, analyze, write, fact-check,
gate, publish), after the days before them as a daily run would have, their stories decided by
the default story decision (``--stories``: the rules, or the pair model refitted without the
block as ``bench/dedup_quality.py`` fits a fold),
and each brief as published is scored against its day's own labels:

- **precision**: share of the brief's items that are core or related;
- **top core**: share of the top section's items that are core;
- **recall**: share of the day's core items of importance >= 2 cited that day or earlier;
- **headline lead**: share of the day's importance-3 items cited in a top section that day or earlier.

Beside it, on the same days: the model shipped in ``tasks/models`` (fitted on every labelled
day, so not held out on the days it saw), ``--before``: another artefact (today's shipped model
before a change), and the same protocol with the first eleven features only (before where the
topic sits and the source kind were read). Pooled per mix with counts and a Wilson 95 % interval.
``--write-model`` fits on all 13 days and writes the artefact with its card.

**Days nobody here has seen.** Every labelled day of ``labels/`` that is not one of those 13 (nor a
story-only day), an ``aiweb-<day>.json`` with its feeds in ``aiweb/feeds`` or a ``tech-<day>.json``
with its feeds in ``month/feeds`` (or in another ``<folder>/feeds`` beside them: each day, its
warm-up days too, is read from the folder that holds its snapshots), is judged after the held-out
blocks, in blocks of neighbouring days, by the policy as shipped: the editorial model and the pair
model in ``tasks/models`` (fitted on every labelled day here), each day published by the real
pipeline after the two days before it (a warm-up day without snapshots is named), scored the same
way, in a table of its own, on the items the shipped models did not learn: an item labelled on a
day here, or in one story with such an item, is left out of the scores (a day beside a labelled day
here shares a third to a half of its items; a day further off, a few), and each day says how many.
``--unseen-only`` judges those days alone (nothing is fitted: a few minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import time
from collections.abc import Iterable
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

from tests.judgement import (
    METRICS,
    beside_seen_notes,
    brief_block,
    collect_base,
    examples_of,
    feed_set_of,
    feed_sets,
    fit_story_model_without,
    learnt_links,
    learnt_on,
    missing_feeds,
    pooled,
    score_block,
    seen_labels,
    story_days,
    training_for,
    unseen_feed_set,
    wilson,
)
from tests.real_days import BLOCKS, unseen_blocks

NAMES = {"precision": "precision", "top_core": "top core", "recall": "recall", "headline": "headline lead"}


def examples(data: Path, cache: Path):
    """Every labelled day's stories with their evidence, computed once per version of the evidence code."""

    code = b"".join(
        (REPO / p).read_bytes() for p in ("tasks/editorial.py", "ops/learn.py", "tasks/steps/score.py")
    )
    # and the labels it reads: an edited labels file is read again, not taken from the cache
    labelled = b"".join(f.name.encode() + f.read_bytes() for f in sorted((data / "labels").glob("*.json")))
    key = hashlib.blake2b(code + labelled, digest_size=6).hexdigest()
    stored = cache / f"examples-{key}.pkl"
    if stored.is_file():
        return pickle.loads(stored.read_bytes())
    labels = seen_labels(data / "labels")
    found = []
    for feeds in feed_sets(data):
        found += examples_of(collect_base(cache / f"base-{feeds.name}", feeds), feeds, labels)
    stored.write_bytes(pickle.dumps(found))
    return found


def fit_to(train, out: Path, note: str, features=None, held_out_figures: bool = False) -> Path:
    from ops import learn
    from tasks.settings import parse_settings

    fitted = learn.fit(
        train, out.stem, "AI", "all-MiniLM-L6-v2", note, features=features, held_out_figures=held_out_figures
    )
    settings = parse_settings({"storage": {"root": str(out.parent)}})
    return learn.write(fitted, out, settings, settings)


def labelled_story_days(data: Path, stories: str | None):
    """The labelled days of story identity with their vectors (``tests.judgement.story_days``), when
    the story decision (``stories``, else the default) is a pair model; None under the rules."""
    from tasks.settings import PolicySettings

    if (stories or PolicySettings().story_model) == "rules":
        return None
    return story_days(data)


def fold_story_model(days, block: tuple[str, ...], out: Path) -> str | None:
    """The pair model fitted without ``block`` (as ``bench/dedup_quality.py`` fits a fold), written
    to ``out``: the held-out days are grouped into stories by a model that never saw them either."""
    return fit_story_model_without(days, [block], out) if days is not None else None


def cell(pair: tuple[int, int]) -> str:
    a, b = pair
    return f"{a / b:.2f} ({a}/{b})" if b else "n/a"


def pooled_cell(pair: tuple[int, int]) -> str:
    a, b = pair
    if not b:
        return "n/a"
    low, high = wilson(a, b)
    return f"**{a / b:.2f}** ({a}/{b}; {low:.2f}-{high:.2f})"


def held_out(args, data: Path, cache: Path, t0: float):
    """Each block of each mix left out in turn: its rows per variant, and each fold's threshold."""
    from tasks import editorial

    everything = examples(data, cache)
    labels = seen_labels(data / "labels")
    print(f"{len(everything)} labelled stories ({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
    sets = feed_sets(data)
    work = cache / "folds"
    work.mkdir(parents=True, exist_ok=True)
    story_days = labelled_story_days(data, args.stories)
    variants = {
        "block left out": None,
        "block left out, first 11 features": list(editorial.FIRST_RELEVANCE_FEATURES),
    }
    fixed = {"shipped": "builtin:ai", **({"before": str(Path(args.before).resolve())} if args.before else {})}
    results: dict[str, dict[tuple[str, ...], dict[str, dict]]] = {}
    thresholds: dict[tuple[str, tuple[str, ...]], float] = {}
    for mix, blocks in BLOCKS.items():
        if args.mix and mix not in args.mix:
            continue
        results[mix] = {}
        for block in blocks:
            feeds = feed_set_of(sets, block)
            base = collect_base(cache / f"base-{feeds.name}", feeds)
            train = training_for(everything, labels, [block])
            stories = (
                fold_story_model(story_days, block, work / f"{mix}-{block[0]}.pairs.json") or args.stories
            )
            rows: dict[str, dict] = {}
            for name, features in variants.items():
                model = fit_to(
                    train, work / f"{mix}-{block[0]}-{len(features or [])}.json", f"without {block}", features
                )
                thresholds[(name, block)] = editorial.load_model(str(model)).threshold
                briefs = brief_block(base, work / "store", feeds, block, str(model), stories)
                rows[name] = score_block(data, feeds, block, briefs)
            for name, ref in fixed.items():
                rows[name] = score_block(
                    data, feeds, block, brief_block(base, work / "store", feeds, block, ref)
                )
            results[mix][block] = rows
            print(
                f"{mix} {block[0]}: {len(train)} training stories ({time.perf_counter() - t0:.0f}s)",
                file=sys.stderr,
            )
    return results, thresholds


UNSEEN_VARIANT = "as shipped"


def unseen(args, data: Path, cache: Path, t0: float) -> tuple[dict, list[str]]:
    """The labelled days nobody here has seen (``tests.real_days.unseen_blocks``), each block
    published under the policy as shipped and scored; with a line for each day left out and why."""
    results: dict[str, dict[tuple[str, ...], dict[str, dict]]] = {}
    notes: list[str] = beside_seen_notes(data / "labels")
    learnt = learnt_links(data)  # what the shipped models learnt: read once for every mix
    for mix, blocks in unseen_blocks(data / "labels").items():
        if mix not in BLOCKS:
            notes.append(f"- {', '.join(d for b in blocks for d in b)}: a `stories-*.json` with no `aiweb-` "
                         "or `tech-` file (relevance is scored on those): judged by `bench/dedup_quality.py`, "
                         "not here")  # fmt: skip
            continue
        if args.mix and mix not in args.mix:
            continue
        key = hashlib.blake2b(repr(blocks).encode(), digest_size=4).hexdigest()
        feeds = unseen_feed_set(data, mix, blocks, cache / f"feeds-unseen-{mix}-{key}")
        kept = []
        for block in blocks:
            lacking = [
                d for d in feeds.briefed(tuple(map(date.fromisoformat, block))) if missing_feeds(feeds, d)
            ]
            notes += [f"- {d}: no snapshots of its feeds in {data}/*/feeds; not judged"
                      for d in lacking if d.isoformat() in block]  # fmt: skip
            if not any(d.isoformat() in block for d in lacking):
                kept.append(block)
                notes += [
                    f"- {block[0]}: its warm-up day {d} has no snapshots; briefed without it" for d in lacking
                ]
        if not kept:
            continue
        key = hashlib.blake2b(repr(kept).encode() + snapshots_of(feeds, kept), digest_size=4).hexdigest()
        base = collect_base(cache / f"base-unseen-{mix}-{key}", feeds, kept)
        results[mix] = {}
        for block in kept:
            briefs = brief_block(base, cache / "unseen-store", feeds, block, "builtin:ai")
            left_out = {
                d: learnt_on(data / "labels" / feeds.label_file(d), learnt)
                for d in map(date.fromisoformat, block)
            }
            rows = score_block(data, feeds, block, briefs, left_out)
            results[mix][block] = {UNSEEN_VARIANT: rows}
            notes += [
                f"- {day}: judged on {n - k} of its {n} labelled items ({k} left out: the shipped models "
                "learnt them on a labelled day here, or they are one story with such an item)"
                for day, row in rows.items()
                for k, n in [row["left_out"]]
                if k
            ]
            print(f"{mix} {block[0]} (unseen) ({time.perf_counter() - t0:.0f}s)", file=sys.stderr)
    return results, notes


def snapshots_of(feeds, blocks: Iterable[tuple[str, ...]]) -> bytes:
    """The names, sizes and times of the snapshot files ``feeds`` reads for ``blocks`` (each block's
    days and its warm-up days): a collected store is used again only while they are as they were."""
    days = sorted({d for b in blocks for d in feeds.briefed(tuple(map(date.fromisoformat, b)))})
    found = []
    for day in days:
        for path in feeds.snapshots(day):
            if path.is_file():
                stat = path.resolve().stat()
                found.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return "\n".join(sorted(found)).encode()


def block_name(block: tuple[str, ...]) -> str:
    return f"{block[0]}{'..' + block[-1][5:] if len(block) > 1 else ''}"


def mix_table(per_block: dict, thresholds: dict, headline_variant: str) -> list[str]:
    """One mix's table: a row per block and variant, then pooled, then each day's misses."""
    lines = [
        "| block | variant | threshold | precision | top core | recall | headline lead | items |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for block, rows in per_block.items():
        for name, per_day in rows.items():
            total = pooled(per_day.values())
            items = sum(r["items"] for r in per_day.values())
            t = thresholds.get((name, block))
            lines.append(
                f"| {block_name(block)} | {name} | {f'{t:.2f}' if t is not None else ''} | "
                + " | ".join(cell(total[k]) for k in METRICS)
                + f" | {items} |"
            )
    for name in next(iter(per_block.values())):
        total = pooled(r for rows in per_block.values() for r in rows[name].values())
        lines.append(
            f"| **pooled** | {name} | | " + " | ".join(pooled_cell(total[k]) for k in METRICS) + " | |"
        )
    lines.append("")
    for rows in per_block.values():
        for day, row in rows[headline_variant].items():
            for what, key in (
                ("off-topic in the brief", "off_topic_in"),
                ("important core not cited", "missed"),
                ("headlines not in the top section", "missed_headlines"),
            ):
                if row[key]:
                    lines.append(f"- {day}, {headline_variant}, {what}: {'; '.join(row[key])}")
    lines.append("")
    return lines


INTRO = (
    "Each block of neighbouring labelled days left out in turn: fitted on the other labelled days of both "
    "mixes without any story that shares a labelled item or story with the block, the on-topic threshold "
    "chosen over the training blocks, the block's days published by the real pipeline after the two days "
    "before them (grouped into stories by the default story decision; a pair model is refitted without the "
    "block) and scored "
    "against each day's own labels file. Cells: share (hits/total); pooled: share "
    "(hits/total; Wilson 95 % interval). 'shipped' is the model in `tasks/models` (fitted on every "
    "labelled day: on the days it saw, not a held-out figure); 'before', when given, another artefact; "
    "'first 11 features' the same protocol with the features of the models before where the topic "
    "sits and the source kind were read."
)
UNSEEN_INTRO = (
    "Labelled days that are none of the 13 above nor a story-only day: no model, threshold or rule here "
    "was fitted or tuned on them. Each block of neighbouring days is published by the real pipeline after "
    "the two days before it, under the policy as shipped (the editorial model and the pair model of "
    "`tasks/models`, fitted on every labelled day above, at their shipped thresholds), and scored as above."
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--cache", default=os.environ.get("EDITORIAL_CACHE", "/tmp/editorial-bench"))
    parser.add_argument(
        "--before", default=None, help="another model artefact to score beside the shipped one"
    )
    parser.add_argument("--mix", action="append", choices=sorted(BLOCKS), help="only this mix (repeatable)")
    parser.add_argument(
        "--stories",
        choices=("rules", "pairs"),
        default=None,
        help="the held-out days' story decision: the rules, or the pair model refitted without the block "
        "(default: as the default policy decides)",
    )
    parser.add_argument("--out", default=None, help="write the tables here as well (markdown)")
    parser.add_argument("--write-model", default=None, help="fit on all 13 days and write the artefact here")
    parser.add_argument(
        "--unseen-only", action="store_true", help="judge only the labelled days nobody here has seen"
    )
    args = parser.parse_args()
    data = Path(args.data).resolve()
    if not (data / "labels").is_dir():
        raise SystemExit(f"error: no labels folder under {data}; pass --data PATH to the shared data folder")
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("BRIEF_EMBEDDINGS_SHARED", str(cache / "embeddings.sqlite"))
    t0 = time.perf_counter()
    if args.write_model:
        write_model(data, cache, Path(args.write_model).resolve())
        return
    lines = ["# Editorial judgement on days it never saw (bench/editorial.py)", ""]
    if not args.unseen_only:
        results, thresholds = held_out(args, data, cache, t0)
        lines += [INTRO, ""]
        for mix, per_block in results.items():
            lines += [f"## {mix}", "", *mix_table(per_block, thresholds, "block left out")]
    fresh, notes = unseen(args, data, cache, t0)
    lines += ["## Days nobody here has seen", "", UNSEEN_INTRO, ""]
    if not fresh:
        lines += ["No such day in `labels/`.", ""]
    for mix, per_block in fresh.items():
        lines += [f"### {mix}", "", *mix_table(per_block, {}, UNSEEN_VARIANT)]
    lines += [*notes, "", f"Measured in {time.perf_counter() - t0:.0f}s on 2 shared cores."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


def write_model(data: Path, cache: Path, out: Path) -> None:
    """Fit on every labelled story of the 13 days and write the artefact; print its card."""
    from ops import learn
    from tasks import editorial

    everything = examples(data, cache)
    days = sorted({e.day for e in everything})
    fit_to(everything, out, "fitted on every labelled story of " + ", ".join(d.isoformat() for d in days),
           held_out_figures=True)  # fmt: skip
    print(learn.card_text(editorial.load_model(str(out))))


if __name__ == "__main__":
    main()
