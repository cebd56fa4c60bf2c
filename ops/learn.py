"""Fit a candidate editorial model from hand labels and people's answers (``brief learn``).

Examples are the stories of stored days, replayed (nothing is written) so that their
evidence is exactly what a run computes. A story's label is its articles' hand label
(``relevance-*.json``: core / related / none, importance 0–3) or, winning over it, what a
person marked in review (off-topic, related, core, lead).

What is fitted, with scikit-learn, on those examples:

1. an embedding head: logistic regression over the sentence embedding of each article
   (title + summary), "on topic or not"; its out-of-fold value is one feature of the next;
2. "on topic" and "core": logistic regressions over the story's evidence;
3. importance: ridge regression of the label (0–3, every story) over the importance
   features, with the core probability as the relevance feature.

The card holds the data it was fitted on and leave-one-day-out figures; a daily run never
fits anything, it applies the artefact this writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import InputError
from tasks import editorial, steps
from tasks.settings import Settings

RANK = {"none": 0, "related": 1, "core": 2}


class RelevanceLabel(BaseModel):
    """One hand-labelled item of a ``relevance-*.json`` file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, description="the item's link as the feed wrote it")
    relevance: Literal["core", "related", "none"]
    importance: int = Field(ge=0, le=3)
    source: str | None = None
    title: str | None = None
    published: str | None = None
    snapshots: list[str] = Field(default_factory=list)
    why: str | None = None


def read_labels(folder: Path) -> dict[str, RelevanceLabel]:
    """Every ``relevance-*.json`` in ``folder``: link -> label. A bad file is one clear error."""
    if not folder.is_dir():
        raise InputError(f"--labels {str(folder)!r} is not a folder")
    labels: dict[str, RelevanceLabel] = {}
    files = sorted(folder.glob("relevance-*.json"))
    for path in files:
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"{path}: not JSON ({exc}); a labels file is a JSON list of items") from None
        if not isinstance(rows, list):
            raise InputError(f"{path}: a labels file is a JSON list of items, not {type(rows).__name__}")
        for n, row in enumerate(rows):
            try:
                label = RelevanceLabel.model_validate(row)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "item"
                raise InputError(
                    f"{path}: item {n}: {where}: {first['msg']} "
                    "(fields: id, relevance core|related|none, importance 0-3)"
                ) from None
            labels[label.id] = label
    return labels


@dataclass
class Example:
    day: date
    story_id: str
    evidence: dict[str, float]
    importance_inputs: dict[str, float]
    vectors: np.ndarray  # one row per article
    article_relevant: list[int]  # per article, for the embedding head
    relevance: str  # core / related / none
    importance: int
    by: str  # "label" or "human"


MARK_LABEL = {"off-topic": ("none", 0), "related": ("related", 1), "core": ("core", 2), "lead": ("core", 3)}


WEIGHT = {"label": 1.0, "human": 5.0}  # a person's answer weighs five labelled stories


def collect_examples(
    settings: Settings,
    days: Sequence[date],
    labels: dict[str, RelevanceLabel],
    progress=None,
) -> list[Example]:
    """Replay each day (dry run) and pair its stories' evidence with labels and people's marks."""
    examples: list[Example] = []
    for day in days:
        ctx = steps.make_context(settings, day, f"learn-{day.isoformat()}")
        ctx.dry_run = True
        outcome = steps.dedup_day(ctx)
        scores = steps.score_stories(ctx, outcome)
        order = sorted({a for s in outcome.stories for a in s.members})
        vectors = ctx.embedder.encode([outcome.items[a].text for a in order]) if order else np.zeros((0, 1))
        row_of = {a: k for k, a in enumerate(order)}
        for story in outcome.stories:
            scored = scores[story.story_id]
            members = story.members
            marked = next(
                (outcome.corrected_relevance[a] for a in members if a in outcome.corrected_relevance), None
            )
            found = [labels[outcome.items[a].url] for a in members if outcome.items[a].url in labels]
            if marked is not None:
                relevance, importance = MARK_LABEL[marked]
                by = "human"
                per_article = [int(relevance != "none")] * len(members)
            elif found:
                best = max(found, key=lambda lab: (RANK[lab.relevance], lab.importance))
                relevance, importance, by = best.relevance, best.importance, "label"
                per_article = [
                    int(labels[outcome.items[a].url].relevance != "none")
                    if outcome.items[a].url in labels
                    else int(relevance != "none")
                    for a in members
                ]
            else:
                continue
            evidence = {k: v for k, v in (scored.evidence or {}).items() if k in editorial.RELEVANCE_FEATURES}
            inputs = {k: v for k, v in (scored.evidence or {}).items() if k in editorial.IMPORTANCE_FEATURES}
            examples.append(
                Example(
                    day,
                    scored.story_id,
                    evidence,
                    inputs,
                    vectors[[row_of[a] for a in members]],
                    per_article,
                    relevance,
                    importance,
                    by,
                )
            )
        if progress:
            progress(day, len(examples))
    return examples


@dataclass
class Fitted:
    model: editorial.EditorialModel
    figures: dict = field(default_factory=dict)


def _matrix(rows: Iterable[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float)


def _head(vectors: np.ndarray, targets: np.ndarray, weights: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    if len(set(targets.tolist())) < 2:
        return None
    return LogisticRegression(C=0.5, max_iter=5000, class_weight="balanced").fit(
        vectors, targets, sample_weight=weights
    )


def _head_values(train: Sequence[Example], refit_head: bool) -> list[float]:
    """The ``emb_head`` feature of each example: out-of-fold (by day) when the head is refitted,
    else the value the current head gave when the story was scored."""
    if not refit_head:
        return [e.evidence.get("emb_head", 0.0) for e in train]
    days = sorted({e.day for e in train})
    folds = [[k for k, e in enumerate(train) if e.day == d] for d in days] if len(days) > 1 else [[]]
    out = [0.0] * len(train)
    for fold in folds:
        held = set(fold)
        rest = [k for k in range(len(train)) if k not in held]
        head = _head(
            np.vstack([train[k].vectors for k in rest]),
            np.array([t for k in rest for t in train[k].article_relevant]),
            np.array([WEIGHT[train[k].by] for k in rest for _ in train[k].article_relevant]),
        )
        for k in fold or range(len(train)):
            out[k] = float(head.decision_function(train[k].vectors).max()) if head is not None else 0.0
    return out


def _fit_parts(train: Sequence[Example], refit_head: bool):
    """The fits on ``train``: embedding head (or None), on-topic and core LRs, ranker, head values."""
    from sklearn.linear_model import LogisticRegression, Ridge

    weights = np.array([WEIGHT[e.by] for e in train])
    head = None
    if refit_head:
        head = _head(
            np.vstack([e.vectors for e in train]),
            np.array([t for e in train for t in e.article_relevant]),
            np.array([WEIGHT[e.by] for e in train for _ in e.article_relevant]),
        )
    values = _head_values(train, refit_head)
    names = list(editorial.RELEVANCE_FEATURES)
    x = _matrix([{**e.evidence, "emb_head": values[k]} for k, e in enumerate(train)], names)
    y_rel = np.array([e.relevance != "none" for e in train], dtype=int)
    y_core = np.array([e.relevance == "core" for e in train], dtype=int)
    rel = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
        x, y_rel, sample_weight=weights
    )
    core = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
        x, y_core, sample_weight=weights
    )
    p_core = core.predict_proba(x)[:, 1]
    # every story, off-topic ones at importance 0 too: that is where a promotion's penalty is learnt
    inames = list(editorial.IMPORTANCE_FEATURES)
    xi = _matrix([{**e.importance_inputs, "core": float(p_core[k])} for k, e in enumerate(train)], inames)
    yi = np.array([e.importance / 3 for e in train])
    ranker = Ridge(alpha=1.0).fit(xi, yi, sample_weight=weights)
    return head, rel, core, ranker, values


def _linear(names: Sequence[str], coef, intercept) -> editorial.Linear:
    return editorial.Linear(
        features=list(names), coef=[round(float(c), 5) for c in coef], intercept=float(intercept)
    )


def base_examples(model: editorial.EditorialModel) -> list[Example]:
    """The stories a model was fitted on, as its artefact keeps them (evidence and labels, no text)."""
    return [
        Example(
            date.fromisoformat(row.day),
            row.story_id,
            dict(row.evidence),
            dict(row.importance_inputs),
            np.zeros((0, 0)),
            [],
            row.relevance,
            row.importance,
            row.by,
        )
        for row in model.training
    ]


def fit(
    examples: Sequence[Example],
    name: str,
    topic: str,
    embedding_model: str,
    note: str = "",
    base: editorial.EditorialModel | None = None,
) -> Fitted:
    """Fit a model; the card reports leave-one-day-out figures.

    Without ``base``, everything is fitted on ``examples`` (which carry their embeddings). With a
    ``base`` model, its embedding head is kept and its own training stories join the new ones:
    a few answers then move the weights without throwing away what the base model learnt.
    """
    refit_head = base is None
    train = [*(base_examples(base) if base else []), *examples]
    if len({e.relevance != "none" for e in train}) < 2 or len({e.relevance == "core" for e in train}) < 2:
        raise InputError(
            "need labelled examples both on and off the topic, and core and not core, to fit; "
            "label more stories (--labels) or mark some in 'brief review'"
        )
    head, rel, core, ranker, values = _fit_parts(train, refit_head)
    if refit_head:
        embedding_head = (
            editorial.EmbeddingHead(
                coef=[round(float(c), 6) for c in head.coef_[0]], intercept=float(head.intercept_[0])
            )
            if head is not None
            else None
        )
    else:
        assert base is not None
        embedding_head = base.embedding_head
    names, inames = editorial.RELEVANCE_FEATURES, editorial.IMPORTANCE_FEATURES
    training = [
        editorial.TrainingRow(
            day=e.day.isoformat(),
            story_id=e.story_id,
            evidence={**{k: round(v, 4) for k, v in e.evidence.items()}, "emb_head": round(values[k], 4)},
            importance_inputs={k: round(v, 4) for k, v in e.importance_inputs.items()},
            relevance=e.relevance,  # type: ignore[arg-type]
            importance=e.importance,
            by=e.by,  # type: ignore[arg-type]
        )
        for k, e in enumerate(train)
    ]
    model = editorial.EditorialModel(
        name=name,
        kind="fitted",
        topic=topic,
        embedding_model=embedding_model,
        relevance=_linear(names, rel.coef_[0], rel.intercept_[0]),
        core=_linear(names, core.coef_[0], core.intercept_[0]),
        embedding_head=embedding_head,
        importance=_linear(inames, ranker.coef_, ranker.intercept_),
        training=training,
    )
    figures = cross_validate(train, refit_head)
    days = sorted({e.day for e in train})
    card = {
        "fitted_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "fitted_on": {
            "days": [d.isoformat() for d in days],
            "stories": len(train),
            "from_labels": sum(e.by == "label" for e in train),
            "from_people": sum(e.by == "human" for e in train),
            "on_topic": sum(e.relevance != "none" for e in train),
            "core": sum(e.relevance == "core" for e in train),
            "base_model": base.name if base else None,
        },
        "leave_one_day_out": figures,
        "library": _library(),
        "note": note,
    }
    return Fitted(model.model_copy(update={"card": card}), figures)


def _library() -> str:
    import sklearn

    return f"scikit-learn {sklearn.__version__}"


def cross_validate(examples: Sequence[Example], refit_head: bool) -> dict:
    """Leave one day out: fit on the other days, decide the held-out day's stories, pool the counts."""
    days = sorted({e.day for e in examples})
    if len(days) < 2:
        return {"note": "one day only: no held-out figures"}
    tp = fp = fn = tn = core_tp = core_fp = 0
    important_kept = important = 0
    names = list(editorial.RELEVANCE_FEATURES)
    for day in days:
        train = [e for e in examples if e.day != day]
        test = [e for e in examples if e.day == day]
        if len({e.relevance != "none" for e in train}) < 2 or len({e.relevance == "core" for e in train}) < 2:
            continue
        head, rel, core, *_ = _fit_parts(train, refit_head)
        for e in test:
            x = dict(e.evidence)
            if refit_head:
                x["emb_head"] = float(head.decision_function(e.vectors).max()) if head is not None else 0.0
            row = _matrix([x], names)
            declared = bool(e.evidence.get("on_topic_source"))
            kept = rel.predict_proba(row)[0, 1] >= 0.5 or declared
            is_core = kept and (core.predict_proba(row)[0, 1] >= 0.5 or declared)
            truth = e.relevance != "none"
            tp += kept and truth
            fp += kept and not truth
            fn += (not kept) and truth
            tn += (not kept) and not truth
            core_tp += is_core and e.relevance == "core"
            core_fp += is_core and e.relevance != "core"
            if e.relevance == "core" and e.importance >= 2:
                important += 1
                important_kept += kept
    return {
        "stories": tp + fp + fn + tn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "core_precision": round(core_tp / (core_tp + core_fp), 4) if core_tp + core_fp else None,
        "recall_important": round(important_kept / important, 4) if important else None,
    }


def write(fitted: Fitted, out: Path, base_policy) -> Path:
    """The artefact (JSON with its card) and a candidate policy TOML that names it."""
    model_path = out.with_suffix(".model.json") if out.suffix == ".toml" else out
    model_path.parent.mkdir(parents=True, exist_ok=True)
    from storage.atomic import write_text

    write_text(model_path, fitted.model.model_dump_json(indent=2) + "\n")
    write_text(model_path.with_suffix(".card.md"), card_markdown(fitted.model))
    if out.suffix == ".toml":
        write_text(out, policy_toml(base_policy, model_path.name))
    return model_path


def policy_toml(base_policy, model_ref: str) -> str:
    """The candidate policy: the current one with the new model (adopt it by copying the line)."""
    lines = [
        "# A candidate policy written by 'brief learn'. Compare it: brief evaluate --policy THIS_FILE …",
        "# Adopt it: copy the editorial_model line (with the model file) into your config's [policy].",
        "[policy]",
        f"editorial_model = {json.dumps(model_ref)}",
    ]
    defaults = type(base_policy)()
    for key in (
        "lookback_hours",
        "near_duplicate_threshold",
        "same_source_threshold",
        "top_stories",
        "quick_links",
    ):
        value = getattr(base_policy, key)
        if value != getattr(defaults, key):
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def card_markdown(model: editorial.EditorialModel) -> str:
    """The model card as a page a person reads beside the artefact."""
    card = model.card
    on = card.get("fitted_on", {})
    cv = card.get("leave_one_day_out", {})
    lines = [
        f"# Editorial model `{model.name}`",
        "",
        f"Topic **{model.topic}**; kind `{model.kind}`; embedding `{model.embedding_model}`; "
        f"fitted {card.get('fitted_at', '?')} with {card.get('library', '?')}.",
        "",
        "## Fitted on",
        "",
        f"- days: {', '.join(on.get('days', []))}",
        f"- stories: {on.get('stories', 0)} ({on.get('from_labels', 0)} from hand labels, "
        f"{on.get('from_people', 0)} from people's answers); {on.get('on_topic', 0)} on topic, "
        f"{on.get('core', 0)} core",
        f"- refines: {on.get('base_model') or 'nothing (fitted afresh)'}",
        f"- note: {card.get('note', '')}",
        "",
        "## Leave one day out",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in cv.items()],
        "",
        "## Weights",
        "",
    ]
    for part in ("relevance", "core", "importance"):
        linear = getattr(model, part)
        if linear is not None:
            lines.append(
                f"- {part}: "
                + ", ".join(f"{f} {c:+.3f}" for f, c in zip(linear.features, linear.coef, strict=True))
                + f"; intercept {linear.intercept:+.3f}"
            )
    return "\n".join(lines) + "\n"


def card_text(model: editorial.EditorialModel) -> str:
    card = model.card
    on = card.get("fitted_on", {})
    cv = card.get("leave_one_day_out", {})
    rows = [
        f"model {model.name} ({model.kind}) for the topic {model.topic!r}, embedding {model.embedding_model}",
        f"fitted on {on.get('stories', 0)} stories of {len(on.get('days', []))} day(s) "
        f"({on.get('from_labels', 0)} from labels, {on.get('from_people', 0)} from people's answers; "
        f"{on.get('on_topic', 0)} on topic, {on.get('core', 0)} core) with {card.get('library', '')}",
    ]
    if "precision" in cv:
        rows.append(
            "leave one day out: "
            + ", ".join(f"{k} {v}" for k, v in cv.items() if k != "stories")
            + f" over {cv.get('stories')} stories"
        )
    elif cv:
        rows.append(f"leave one day out: {cv.get('note')}")
    if model.relevance:
        rows.append(
            "on-topic weights: "
            + ", ".join(
                f"{f} {c:+.2f}" for f, c in zip(model.relevance.features, model.relevance.coef, strict=True)
            )
        )
    if model.importance:
        rows.append(
            "importance weights: "
            + ", ".join(
                f"{f} {c:+.2f}" for f, c in zip(model.importance.features, model.importance.coef, strict=True)
            )
        )
    return "\n".join(rows)
