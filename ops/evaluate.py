"""Replay stored facts through a candidate policy, beside the current one, and compare.

Nothing is published: each day is decided in a dry run (``steps.Dry``) from the
facts already in the log, and without people's answers (same-story links, relevance marks):
those are held out and the policy is scored against them, so the figures can move. Figures
per policy: story-clustering precision / recall / F1 against people's answers
(``story.merged`` / ``story.split``) and, given a labels folder,
against the hand-made story labels, and same-story pairs against the labelled stories of the days
the policy's pair model never learnt from (``story_pairs_unseen_*``: a day it was fitted on is
left out and counted apart); category accuracy against corrections; fact-check
pass rate; citation coverage (news articles cited by an item); questions raised.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import polars as pl

from ops import story_learning
from storage.brief import Brief
from storage.errors import InputError
from storage.store import ParquetEventStore
from tasks import analyze, dedup, steps
from tasks.nouns import counted
from tasks.pairs import load_pair_model
from tasks.settings import PolicySettings, Settings, read_candidate
from tasks.steps.llm import analyst as llm_analyst


def candidate_settings(path: str, settings: Settings, where: str | None = None) -> Settings:
    """The settings a candidate file describes: its ``[policy]``, and its ``[llm]`` when it has one;
    ``where`` names the file in an error as the user gave it (default: ``--policy 'FILE'``)."""
    return read_candidate(path, settings, where or f"--policy {path!r}")


def _prf(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    if tp + fp + fn == 0:
        return None, None, None
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return round(p, 4), round(r, 4), round(2 * p * r / (p + r), 4) if p + r else 0.0


@dataclass
class Tally:
    """What an evaluation counts over its days, before the figures are made of it."""

    editorial: dict[str, list[int]] = field(
        default_factory=lambda: {
            k: [0, 0] for k in ("precision", "top_core", "recall", "headline", "marks", "toward")
        }
    )
    left_out: int = 0
    human: list[int] = field(default_factory=lambda: [0, 0, 0])  # true, false positives, false negatives
    unseen_stories: list[int] = field(default_factory=lambda: [0, 0, 0])  # pairs of days the model never saw
    story_days: list[int] = field(default_factory=lambda: [0, 0])  # labelled days judged, left out as seen
    labels: list[int] = field(default_factory=lambda: [0, 0, 0])
    category_hits: int = 0
    category_total: int = 0
    items: int = 0
    passed: int = 0
    news: int = 0
    cited: int = 0
    questions: int = 0
    llm_calls: int = 0
    llm_reused: int = 0


def evaluate_policy(
    settings: Settings,
    resources: steps.Resources,
    policy: PolicySettings,
    days: Sequence[date],
    labels: Path | None = None,
    judged: dict[date, dict[str, Judged]] | None = None,
) -> dict[str, float | int | None]:
    """The policy's figures over ``days``; ``judged`` (when given) gets, per day, whether it agreed
    with each person's mark and hand label (``judge``). ``resources``: the caller's (its store, and
    its models when the trial names the same ones)."""
    trial = settings.model_copy(update={"policy": policy})
    store = resources.store
    relevance_labels = _relevance_labels(labels)
    story_labels = story_learning.read_story_labels(labels) if labels is not None else {}
    seen = seen_days(settings, policy)
    marks = _marks(store, max(days)) if days else {}
    tally = Tally()
    resources = resources.for_settings(trial)
    for day in days:
        # people's answers are what the policy is scored against, so the replay is not given them
        run = f"evaluate-{trial.policy_version()}"
        ctx = steps.open_run(resources, trial, day, run, recorder=steps.Dry(), held_out=True)
        decided = steps.run_stages(ctx, steps.between("dedup", "factcheck"))
        outcome, document, findings, scores = (
            decided.deduped(),
            decided.drafted(),
            decided.findings,
            decided.scores,
        )
        tally.left_out += steps.left_out(scores)
        _score_editorial(tally.editorial, document, outcome, scores, relevance_labels.on(day), marks)
        if judged is not None:
            judged[day] = judge(day, outcome, scores, relevance_labels.on(day), marks)
        tally.questions += steps.raise_questions(ctx, outcome, document, findings)["asked"]
        model = llm_analyst(ctx)
        if model is not None:  # a changed prompt or model asks again; the same one reads the log
            tally.llm_calls += model.stats.calls
            tally.llm_reused += model.stats.reused
        _count_links(tally, ctx, outcome)
        _count_labels(tally, labels, day, outcome)
        _count_unseen_stories(tally, story_labels.get(day), day.isoformat() in seen, day, outcome)
        _count_categories(tally, policy, outcome)
        failed = {f.story_id for f in findings}
        tally.items += len(document.items)
        tally.passed += sum(i.story_id not in failed for i in document.items)
        tally.news += outcome.news
        tally.cited += len({c.article_id for i in document.items for c in i.citations})
    return _figures(tally)


def seen_days(settings: Settings, policy: PolicySettings) -> frozenset[str]:
    """The days the policy's models learnt from, which judge none of its same-story pairs: its
    editorial model's (its training stories are those days' reports) and its pair model's, when that
    decides the stories under the settings' embedding models (under others the rules decide, and
    they learnt from no day)."""
    from tasks.editorial import load_model
    from tasks.pairs import fits

    days = frozenset(load_model(policy.editorial_model).card.get("fitted_on", {}).get("days", []))
    model = load_pair_model(policy.story_model)
    if model is None or not fits(model, settings.embedding.model, settings.embedding.multilingual or None):
        return days
    return days | story_learning.fitted_days(model)


def _count_links(tally: Tally, ctx: steps.RunContext, outcome: steps.DedupOutcome) -> None:
    """People's same-story links (held out of the replay) against the replay's stories."""
    story_of = {a: k for k, s in enumerate(outcome.stories) for a in s.members}
    must, cannot = steps.human_links(ctx, ctx.reach)
    for pair in must:
        a, b = sorted(pair)
        if a in story_of and b in story_of:
            tally.human[0] += story_of[a] == story_of[b]
            tally.human[2] += story_of[a] != story_of[b]
    for pair in cannot:
        a, b = sorted(pair)
        if a in story_of and b in story_of:
            tally.human[1] += story_of[a] == story_of[b]


def _count_labels(tally: Tally, labels: Path | None, day: date, outcome: steps.DedupOutcome) -> None:
    """The hand-made story labels of ``day`` (when the folder has them) against the replay's stories."""
    if labels is None or not (labels / f"stories-{day.isoformat()}.json").is_file():
        return
    truth_links = json.loads((labels / f"stories-{day.isoformat()}.json").read_text())
    by_link = {link: s["story"] for s in truth_links["stories"] for link in s["items"]}
    truth = {
        a: by_link[outcome.items[a].url]
        for s in outcome.stories
        for a in s.members
        if outcome.items[a].url in by_link
    }
    for k, v in enumerate(dedup.pairwise_scores([s.members for s in outcome.stories], truth)):
        tally.labels[k] += v


def _count_unseen_stories(
    tally: Tally, labels: dict | None, seen: bool, day: date, outcome: steps.DedupOutcome
) -> None:
    """Same-story pairs of a labelled day against its labels, when the pair model never learnt from it."""
    if not labels:
        return
    if seen:
        tally.story_days[1] += 1
        return
    judged = story_learning.judge_stored(day, [s.members for s in outcome.stories], outcome.items, labels)
    for k, v in enumerate((judged.pairs.tp, judged.pairs.fp, judged.pairs.fn)):
        tally.unseen_stories[k] += v
    tally.story_days[0] += 1


def _count_categories(tally: Tally, policy: PolicySettings, outcome: steps.DedupOutcome) -> None:
    """The policy's category of each story whose category a person corrected, against the correction."""
    rules = [analyze.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
    for story in outcome.stories:
        corrected = outcome.corrected_category.get(story.representative)
        if corrected:
            members = [outcome.items[a] for a in story.members]
            guess, _ = analyze.categorise(
                " ".join(f"{m.title} {m.title} {m.summary}" for m in members), rules
            )
            tally.category_hits += guess == corrected
            tally.category_total += 1


def _figures(tally: Tally) -> dict[str, float | int | None]:
    hp, hr, hf = _prf(*tally.human)
    lp, lr, lf = _prf(*tally.labels)
    sp, sr, sf = _prf(*tally.unseen_stories)
    editorial = tally.editorial
    return {
        "human_pairs": sum(tally.human),
        "human_precision": hp,
        "human_recall": hr,
        "human_f1": hf,
        "label_precision": lp,
        "label_recall": lr,
        "label_f1": lf,
        "story_pairs_unseen_precision": sp,
        "story_pairs_unseen_recall": sr,
        "story_pairs_unseen_f1": sf,
        "story_days_unseen": tally.story_days[0],
        "story_days_seen_left_out": tally.story_days[1],
        "category_accuracy": (
            round(tally.category_hits / tally.category_total, 4) if tally.category_total else None
        ),
        "category_corrections": tally.category_total,
        "factcheck_pass_rate": round(tally.passed / tally.items, 4) if tally.items else None,
        "citation_coverage": round(tally.cited / tally.news, 4) if tally.news else None,
        "questions_raised": tally.questions,
        "llm_calls": tally.llm_calls,
        "llm_answers_from_log": tally.llm_reused,
        "off_topic_left_out": tally.left_out,
        "relevance_marks": editorial["marks"][1],
        "relevance_agreement": _share(editorial["marks"]),
        "relevance_toward_marks": _share(editorial["toward"]),
        "brief_precision": _share(editorial["precision"]),
        "top_core": _share(editorial["top_core"]),
        "recall_core_important": _share(editorial["recall"]),
        "headline_lead": _share(editorial["headline"]),
        "items": tally.items,
        "news_articles": tally.news,
    }


@dataclass(frozen=True)
class Judged:
    """One judgement (a person's mark, else the best hand label) of one story, and the policy's call."""

    story: tuple[str, str]  # (day, story id)
    wanted: str  # off-topic / related / core
    agreed: bool


OUTCOME_OF_LABEL = {"none": "off-topic", "related": "related", "core": "core"}


def judge(day: date, outcome, scores, labels: dict, marks: dict[str, str]) -> dict[str, Judged]:
    """Judgement key (``mark:<article>`` or ``label:<digest of the link>``, as ``brief learn``
    records them) -> whether the policy's outcome for its story is what the person or the label says."""
    from ops.learn import RANK, label_key, label_of

    out: dict[str, Judged] = {}
    for story in outcome.stories:
        scored = scores[story.story_id]
        marked = next((a for a in story.members if a in marks), None)
        if marked is not None:
            wanted = "core" if marks[marked] == "lead" else marks[marked]
            key = f"mark:{marked}"
        else:
            found = [
                lab for a in story.members if (lab := label_of(labels, outcome.items[a].url)) is not None
            ]
            if not found:
                continue
            best = max(found, key=lambda lab: (RANK[lab.relevance], lab.importance))
            wanted, key = OUTCOME_OF_LABEL[best.relevance], label_key(best.id)
        out[key] = Judged((day.isoformat(), scored.story_id), wanted, scored.outcome == wanted)
    return out


MIN_UNSEEN = 20  # fewer unseen judgements than this: not enough evidence, whatever the figures
MIN_DAYS = 3  # the bootstrap resamples days: fewer cannot give an interval worth the name
BOOTSTRAP = 2000


def unseen(
    current: dict[date, dict[str, Judged]],
    candidate: dict[date, dict[str, Judged]],
    seen_keys: set[str],
    seen_stories: set[tuple[str, str]],
) -> tuple[dict[date, list[tuple[bool, bool]]], int]:
    """Per day, (current agreed, candidate agreed) for every judgement neither policy was fitted on;
    and how many were left out because one of them saw it."""
    out: dict[date, list[tuple[bool, bool]]] = {}
    left_out = 0
    for day, theirs in candidate.items():
        ours = current.get(day, {})
        for key, j in theirs.items():
            if key not in ours:
                continue
            if key in seen_keys or j.story in seen_stories or ours[key].story in seen_stories:
                left_out += 1
                continue
            out.setdefault(day, []).append((ours[key].agreed, j.agreed))
    return out, left_out


def verdict(per_day: dict[date, list[tuple[bool, bool]]], left_out: int, seed: int = 0) -> dict:
    """Adopt, don't, or not enough evidence, from unseen judgements: the difference in agreement
    (candidate - current) and its 95 % bootstrap interval over days (days resampled with replacement,
    each bringing all its judgements)."""
    days = sorted(per_day)
    n = sum(len(v) for v in per_day.values())
    base = {"metric": "agreement with unseen marks and labels", "unseen": n, "seen_left_out": left_out}
    base["days"] = len(days)
    if n == 0:
        line = (
            "not enough evidence: no unseen judgements "
            f"({counted(left_out, 'mark or label', 'marks and labels')} left out: "
            "the candidate or the current policy was fitted on them)"
        )
        return {**base, "decision": "not enough evidence", "line": line}
    cur = np.array([sum(a for a, _ in per_day[d]) for d in days], dtype=float)
    cand = np.array([sum(b for _, b in per_day[d]) for d in days], dtype=float)
    size = np.array([len(per_day[d]) for d in days], dtype=float)
    diff = float((cand.sum() - cur.sum()) / size.sum())
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(days), size=(BOOTSTRAP, len(days)))
    diffs = (cand[picks].sum(1) - cur[picks].sum(1)) / size[picks].sum(1)
    low, high = (float(x) for x in np.percentile(diffs, [2.5, 97.5]))
    shares = (
        f"{cand.sum() / n:.1%} of {n} unseen judgements against {cur.sum() / n:.1%} ({diff * 100:+.1f} points"
    )
    interval = f"95 % interval {low * 100:+.1f} to {high * 100:+.1f} over {counted(len(days), 'day')})"
    found = {**base, "difference": round(diff, 4), "interval": (round(low, 4), round(high, 4))}
    if n < MIN_UNSEEN or len(days) < MIN_DAYS:
        need = f"at least {MIN_UNSEEN} unseen judgements over {MIN_DAYS} days are needed"
        line = (
            f"not enough evidence: {counted(n, 'unseen judgement')} over {counted(len(days), 'day')}; {need}"
        )
        return {**found, "decision": "not enough evidence", "line": line}
    if diff <= 0:
        return {
            **found,
            "decision": "don't",
            "line": f"don't: the candidate agrees with {shares}, {interval}",
        }
    if low > 0:
        return {
            **found,
            "decision": "adopt",
            "line": f"adopt: the candidate agrees with {shares}, {interval}",
        }
    line = f"not enough evidence: the candidate agrees with {shares}, {interval}; it includes no change"
    return {**found, "decision": "not enough evidence", "line": line}


def _share(pair: list) -> float | None:
    return round(pair[0] / pair[1], 4) if pair[1] else None


def check_labels_folder(folder: Path) -> None:
    """An evaluation's ``--labels``: a folder with hand labels or story labels, else one clear error."""
    from ops.learn import read_labels

    if not folder.is_dir():
        raise InputError(f"--labels {str(folder)!r} is not a folder")
    if not read_labels(folder) and not any(folder.glob("stories-*.json")):
        raise InputError(
            f"--labels {str(folder)!r} holds no labels (relevance-*.json, <name>-YYYY-MM-DD.json or "
            "stories-YYYY-MM-DD.json); point it at the labels folder or leave it out"
        )


def _relevance_labels(folder: Path | None):
    from ops.learn import Labels, read_labels

    if folder is None or not folder.is_dir():
        return Labels()
    return read_labels(folder)


def _marks(store: ParquetEventStore, last: date) -> dict[str, str]:
    """People's relevance marks up to ``last``: article -> mark (one fold for the whole evaluation)."""
    from storage.projections import materialize

    return {
        r["article_id"]: r["relevance"]
        for r in materialize(store, "articles", days=[d for d in store.days() if d <= last])
        .filter(pl.col("relevance").is_not_null())
        .iter_rows(named=True)
    }


def _score_editorial(totals: dict, document: Brief, outcome, scores, labels: dict, marks: dict) -> None:
    """Relevance figures of one replayed day: against people's marks (held out) and hand labels.

    Marks: a marked story agrees when the policy's own outcome is the mark (``lead`` counts as
    core); ``relevance_toward_marks`` is the mean on-topic probability the policy gives the
    person's answer (1 - p for an off-topic mark), which moves before an outcome flips.
    Labels: brief precision (items core or related), top core, recall of the day's news that
    is core with importance >= 2, and importance-3 news in the top section.
    """
    for story in outcome.stories:
        mark = next((marks[a] for a in story.members if a in marks), None)
        if mark is not None:
            wanted = "core" if mark == "lead" else mark
            scored = scores[story.story_id]
            totals["marks"][0] += scored.outcome == wanted
            totals["marks"][1] += 1
            totals["toward"][0] += scored.relevance if wanted != "off-topic" else 1 - scored.relevance
            totals["toward"][1] += 1
    if not labels:
        return
    rank = {"none": 0, "related": 1, "core": 2}
    cited: set[str] = set()
    top: set[str] = set()
    for item in document.items:
        found = [labels[c.url] for c in item.citations if c.url in labels]
        cited.update(c.url for c in item.citations)
        if item.section == "top":
            top.update(c.url for c in item.citations)
        if found:
            best = max(found, key=lambda lab: rank[lab.relevance])
            totals["precision"][0] += best.relevance != "none"
            totals["precision"][1] += 1
            if item.section == "top":
                totals["top_core"][0] += best.relevance == "core"
                totals["top_core"][1] += 1
    news = [outcome.items[a].url for s in outcome.stories for a in s.members]
    for url in news:
        label = labels.get(url)
        if label is None:
            continue
        if label.relevance == "core" and label.importance >= 2:
            totals["recall"][0] += url in cited
            totals["recall"][1] += 1
        if label.importance == 3:
            totals["headline"][0] += url in top
            totals["headline"][1] += 1


def record(
    store: ParquetEventStore,
    settings: Settings,
    candidate: Settings,
    start: date,
    end: date,
    figures: dict,
    labels: Path | None,
    decided: dict | None = None,
) -> None:
    from storage.events import new_event, utcnow

    current = settings.policy_version()
    store.append(
        [
            new_event(
                "policy.evaluated",
                {
                    "current_policy": current,
                    "candidate_policy": candidate.policy_version(),
                    "start": start.isoformat(),
                    "end": end.isoformat(),
                    "figures": figures,
                    "labels": str(labels) if labels else None,
                    "verdict": decided,
                },
                brief_date=end,
                run_id=f"evaluate-{candidate.policy_version()}",
                subject_id=f"policy-{candidate.policy_version()}",
                produced_by="evaluate@1",
                occurred_at=utcnow(),
                policy_version=candidate.policy_version(),
            )
        ]
    )


def table(figures: dict[str, dict]) -> pl.DataFrame:
    names = list(figures)
    metrics = list(next(iter(figures.values())))
    return pl.DataFrame({"metric": metrics, **{n: [_fmt(figures[n][m]) for m in metrics] for n in names}})


NOT_MEASURED = "n/a"  # a figure the days gave nothing to compute it on (no labels, no cases)


def _fmt(value: float | int | None) -> str:
    if value is None:
        return NOT_MEASURED
    return f"{value:.3f}" if isinstance(value, float) else str(value)
