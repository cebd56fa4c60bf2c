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
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pickle
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")

from tests.judgement import (
    METRICS,
    brief_block,
    collect_base,
    examples_of,
    feed_set_of,
    feed_sets,
    fit_story_model_without,
    pooled,
    score_block,
    story_days,
    training_for,
    wilson,
)
from tests.real_days import BLOCKS

NAMES = {"precision": "precision", "top_core": "top core", "recall": "recall", "headline": "headline lead"}


def examples(data: Path, cache: Path):
    """Every labelled day's stories with their evidence, computed once per version of the evidence code."""
    from ops import learn

    code = b"".join(
        (REPO / p).read_bytes() for p in ("tasks/editorial.py", "ops/learn.py", "tasks/steps/score.py")
    )
    key = hashlib.blake2b(code, digest_size=6).hexdigest()
    stored = cache / f"examples-{key}.pkl"
    if stored.is_file():
        return pickle.loads(stored.read_bytes())
    labels = learn.read_labels(data / "labels")
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
    args = parser.parse_args()
    data = Path(args.data).resolve()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("BRIEF_EMBEDDINGS_SHARED", str(cache / "embeddings.sqlite"))
    from ops import learn
    from tasks import editorial

    t0 = time.perf_counter()
    everything = examples(data, cache)
    labels = learn.read_labels(data / "labels")
    days = sorted({e.day for e in everything})
    print(
        f"{len(everything)} labelled stories of {len(days)} days ({time.perf_counter() - t0:.0f}s)",
        file=sys.stderr,
    )
    if args.write_model:
        out = fit_to(
            everything,
            Path(args.write_model).resolve(),
            "fitted on every labelled story of " + ", ".join(d.isoformat() for d in days),
            held_out_figures=True,
        )
        print(learn.card_text(editorial.load_model(str(out))))
        return

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

    lines = [
        "# Editorial judgement on days it never saw (bench/editorial.py)",
        "",
        "Each block of neighbouring labelled days left out in turn: fitted on the other labelled days of both "
        "mixes without any story that shares a labelled item or story with the block, the on-topic threshold "
        "chosen over the training blocks, the block's days published by the real pipeline after the two days "
        "before them (grouped into stories by the default story decision; a pair model is refitted without the "
        "block) and scored "
        "against each day's own labels file. Cells: share (hits/total); pooled: share "
        "(hits/total; Wilson 95 % interval). 'shipped' is the model in `tasks/models` (fitted on every "
        "labelled day: on the days it saw, not a held-out figure); 'before', when given, another artefact; "
        "'first 11 features' the same protocol with the features of the models before where the topic "
        "sits and the source kind were read.",
        "",
    ]
    for mix, per_block in results.items():
        lines += [
            f"## {mix}",
            "",
            "| block | variant | threshold | precision | top core | recall | headline lead | items |",
        ]
        lines.append("|---|---|---|---|---|---|---|---|")
        for block, rows in per_block.items():
            for name, per_day in rows.items():
                total = pooled(per_day.values())
                items = sum(r["items"] for r in per_day.values())
                t = thresholds.get((name, block))
                lines.append(
                    f"| {block[0]}{'..' + block[-1][5:] if len(block) > 1 else ''} | {name} | "
                    f"{f'{t:.2f}' if t is not None else ''} | "
                    + " | ".join(cell(total[k]) for k in METRICS)
                    + f" | {items} |"
                )
        names = list(next(iter(per_block.values())))
        for name in names:
            total = pooled(r for rows in per_block.values() for r in rows[name].values())
            lines.append(
                f"| **pooled** | {name} | | " + " | ".join(pooled_cell(total[k]) for k in METRICS) + " | |"
            )
        lines.append("")
        for rows in per_block.values():
            for day, row in rows["block left out"].items():
                for what, key in (
                    ("off-topic in the brief", "off_topic_in"),
                    ("important core not cited", "missed"),
                    ("headlines not in the top section", "missed_headlines"),
                ):
                    if row[key]:
                        lines.append(f"- {day}, block left out, {what}: {'; '.join(row[key])}")
        lines.append("")
    lines.append(f"Measured in {time.perf_counter() - t0:.0f}s on 2 shared cores.")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
