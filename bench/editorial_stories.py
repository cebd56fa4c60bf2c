"""Relevance on labelled days it never saw, story by story: a screen in minutes, not the pipeline's figures.

    python bench/editorial_stories.py [--data ../shared/data] [--cache DIR] [--mix aiweb|tech ...]

The folds of ``bench/editorial.py`` (each block of neighbouring labelled days left out, fitted
with ``ops.learn.fit`` on every other labelled day of both mixes without any story that shares a
labelled item or story with the block, the threshold chosen inside the fold), but the held-out
stories are judged as the labelled examples give them (each day's stories as its own run
clustered them), by the fold's artefact (``tasks.editorial.judge``, its embedding heads read on
each article's vectors), with no brief written. Per block and pooled per mix:

- **precision**: share of the kept stories that are core or related;
- **important recall**: share of the core stories of importance >= 2 that are kept;
- **headline**: share of the importance-3 stories among the five core stories of their day that
  the fold's importance ranks first (the Hacker News and GitHub shares times the story's subject,
  as a run computes them; no promotion, paper or repository rule of ``tasks.write.arrange``).

It is what the fold's model decides, not what a reader sees: a brief cites a story that a
neighbouring day kept, caps sections, and places the headline with its own rules (``bench/editorial.py`` measures
those). It shares the examples cache of ``bench/editorial.py``; a change is screened here first
and then measured there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from editorial import examples, fit_to, pooled_cell  # bench/editorial.py

from tests.judgement import seen_labels, training_for
from tests.real_days import BLOCKS


def story_head(model, e) -> float:
    """The story's ``emb_head`` under ``model``: its strongest article's, English head or multilingual."""
    from tasks import editorial

    values = []
    for k in range(len(e.article_relevant)):
        language = e.language(k)
        if language in editorial.ENGLISH:
            values.append(editorial.head_value(model, e.vectors[k], model.embedding_model, language))
        else:
            vector = e.multilingual[k] if e.multilingual is not None else None
            values.append(editorial.multilingual_head_value(model, vector, model.multilingual_model))
    return max(values, default=0.0)


def title_of(labels, e) -> str:
    from ops import learn

    found = (learn.label_of(labels.on(e.day), link) for link in e.links)
    return next((lab.title for lab in found if lab and lab.title), e.story_id)


CROWD = ("hn_points", "hn_comments", "stars_today")  # scaled by the story's subject in a run
TOP = 5  # the top section's stories


def ranked_importance(model, e, judged) -> float:
    """The story's importance under ``model``, its inputs as recorded and its subject as judged."""
    from tasks import editorial

    subject = judged.core if judged.subject is None else judged.subject
    features = {**e.importance_inputs, "core": subject}
    features.update({k: features.get(k, 0.0) * subject for k in CROWD})
    return editorial.importance(model, features, 0.0)


def headlines(model, held, labels, judged_of) -> tuple[int, int, list[str]]:
    """Per day, the importance-3 stories among the ``TOP`` core stories the model ranks first."""
    hits = total = 0
    missed = []
    for day in sorted({e.day for e in held}):
        core = [e for e in held if e.day == day and judged_of[id(e)].outcome == "core"]
        core.sort(key=lambda e: -ranked_importance(model, e, judged_of[id(e)]))
        top = {id(e) for e in core[:TOP]}
        for e in (e for e in held if e.day == day and e.importance == 3):
            total += 1
            hits += id(e) in top
            if id(e) not in top:
                missed.append(f"{day} {title_of(labels, e)}")
    return hits, total, missed


def judge_block(model, held, labels) -> dict:
    """The fold's decisions on its held-out stories: counts and the titles it got wrong."""
    from tasks import editorial

    out: dict = {"kept": [0, 0], "important": [0, 0], "missed": [], "off_topic_in": []}
    judged_of = {}
    for e in held:
        judged = editorial.judge(model, editorial.with_head(e.evidence, story_head(model, e)))
        judged_of[id(e)] = judged
        kept = judged.outcome != "off-topic"
        on_topic = e.relevance != "none"
        out["kept"][1] += kept
        out["kept"][0] += kept and on_topic
        if kept and not on_topic:
            out["off_topic_in"].append(f"{e.day} {title_of(labels, e)} ({judged.relevance:.2f})")
        if e.relevance == "core" and (e.importance or 0) >= 2:
            out["important"][1] += 1
            out["important"][0] += kept
            if not kept:
                out["missed"].append(f"{e.day} {title_of(labels, e)} ({judged.relevance:.2f})")
    hits, total, out["missed_headlines"] = headlines(model, held, labels, judged_of)
    out["headline"] = [hits, total]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--cache", default=os.environ.get("EDITORIAL_CACHE", "/tmp/editorial-bench"))
    parser.add_argument("--mix", action="append", choices=sorted(BLOCKS), help="only this mix (repeatable)")
    args = parser.parse_args()
    data = Path(args.data).resolve()
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("BRIEF_EMBEDDINGS_SHARED", str(cache / "embeddings.sqlite"))
    from tasks import editorial

    t0 = time.perf_counter()
    everything = examples(data, cache)
    labels = seen_labels(data / "labels")
    lines = [
        "| mix | block | threshold | precision | important recall | headline |",
        "|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="editorial-stories-"))  # the folds' artefacts, this run's own
    for mix, blocks in BLOCKS.items():
        if args.mix and mix not in args.mix:
            continue
        kept, important, lead = [0, 0], [0, 0], [0, 0]
        for block in blocks:
            days = {date.fromisoformat(d) for d in block}
            train = training_for(everything, labels, [block])
            path = fit_to(train, work / f"{mix}-{block[0]}.json", f"without {block}")
            model = editorial.load_model(str(path))
            row = judge_block(model, [e for e in everything if e.day in days], labels)
            for total, part in ((kept, row["kept"]), (important, row["important"]), (lead, row["headline"])):
                total[0] += part[0]
                total[1] += part[1]
            a, b = row["kept"]
            c, d = row["important"]
            g, h = row["headline"]
            lines.append(f"| {mix} | {block[0]} | {model.threshold:.2f} | {a}/{b} | {c}/{d} | {g}/{h} |")
            notes += [f"- {mix}, missed: {t}" for t in row["missed"]]
            notes += [f"- {mix}, off-topic kept: {t}" for t in row["off_topic_in"]]
            notes += [f"- {mix}, headline not in the top {TOP}: {t}" for t in row["missed_headlines"]]
        lines.append(
            f"| {mix} | **pooled** | | {pooled_cell((kept[0], kept[1]))} | "
            f"{pooled_cell((important[0], important[1]))} | {pooled_cell((lead[0], lead[1]))} |"
        )
    shutil.rmtree(work)
    print("\n".join([*lines, "", *notes, "", f"Measured in {time.perf_counter() - t0:.0f}s."]))


if __name__ == "__main__":
    main()
