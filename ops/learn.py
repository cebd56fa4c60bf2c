"""Fit a candidate editorial model from hand labels and people's answers (``brief learn``).

Examples are the stories of stored days, replayed (nothing is written) so that their
evidence is exactly what a run computes. A story's label is its articles' hand label
(core / related / none, importance 0–3: ``relevance-*.json`` files for any day, and
``<name>-YYYY-MM-DD.json`` files for that day's stories, such as ``aiweb-2026-03-18.json``)
or, winning over it, what a person marked in review (off-topic, related, core, lead). A
digest's story (``…/daily/26342#2``) takes the digest's relevance; the digest's importance is
that of the stories it bundles, not the part's, so such a story is left out of the importance fit
unless another labelled article shares it.

What is fitted, with scikit-learn, on those examples:

1. embedding heads, logistic regressions "on topic or not" over each English article's
   sentence embedding (title + summary): one over the run's embedding, and one over the
   multilingual embedding (``tasks.embed_multilingual``), put on the first one's scale, which
   reads the articles in other languages; their out-of-fold value is the ``emb_head`` feature
   of the next;
2. "on topic" and "core": logistic regressions over the story's evidence;
3. importance: ridge regression of the label (0–3, every story whose own importance is
   known) over the importance features, with the core probability as the relevance feature.

The card holds the data it was fitted on and leave-one-day-out figures; a daily run never
fits anything, it applies the artefact this writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import InputError
from tasks import editorial, steps
from tasks.embed_multilingual import MULTILINGUAL_MODEL
from tasks.nouns import counted
from tasks.settings import Settings

RANK = {"none": 0, "related": 1, "core": 2}


class RelevanceLabel(BaseModel):
    """One hand-labelled item of a labels file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1, description="the item's link as the feed wrote it")
    relevance: Literal["core", "related", "none"]
    importance: int = Field(ge=0, le=3)
    source: str | None = None
    title: str | None = None
    published: str | None = None
    snapshots: list[str] = Field(default_factory=list)
    why: str | None = None
    story: str | None = Field(default=None, description="items of one event share it (one day's file)")
    digest: bool = Field(default=False, description="an entry that bundles several stories")
    covers: list[str] = Field(default_factory=list, description="a digest's: the stories it names")
    uncertain: str | None = None


@dataclass
class Labels:
    """Hand labels: those of files that span days (``relevance-*.json``) and those of one day's
    file (``<name>-YYYY-MM-DD.json``), which label that day's stories (an item on two days'
    files may be labelled differently on each: each day is judged by its own)."""

    spanning: dict[str, RelevanceLabel] = field(default_factory=dict)
    by_day: dict[date, dict[str, RelevanceLabel]] = field(default_factory=dict)

    def on(self, day: date) -> dict[str, RelevanceLabel]:
        """Link -> label for the stories of ``day``."""
        return {**self.spanning, **self.by_day.get(day, {})}

    def keep(self, wanted) -> Labels:
        """Only the labels ``wanted(day, label)`` accepts (``day`` is None for a spanning file's)."""
        return Labels(
            {k: v for k, v in self.spanning.items() if wanted(None, v)},
            {d: {k: v for k, v in day.items() if wanted(d, v)} for d, day in self.by_day.items()},
        )

    def __bool__(self) -> bool:
        return bool(self.spanning) or any(self.by_day.values())

    def __len__(self) -> int:
        return len(self.spanning) + sum(len(day) for day in self.by_day.values())


_DAY_FILE = re.compile(r"(?P<name>.+)-(?P<day>\d{4}-\d{2}-\d{2})\.json")


def label_of(labels: dict[str, RelevanceLabel], url: str) -> RelevanceLabel | None:
    """The label of an article's link; a digest's story (``…#2``) is labelled by its digest."""
    found = labels.get(url)
    if found is None and "#" in url:
        found = labels.get(url.split("#", 1)[0])
    return found


def read_labels(folder: Path) -> Labels:
    """The hand labels in ``folder``: every ``relevance-*.json`` (for any day) and every
    ``<name>-YYYY-MM-DD.json`` but the story labels ``stories-*`` (for that day). A bad file is
    one clear error."""
    if not folder.is_dir():
        raise InputError(f"--labels {str(folder)!r} is not a folder")
    labels = Labels()
    for path in sorted(folder.glob("*.json")):
        named = _DAY_FILE.fullmatch(path.name)
        if named and named["name"] != "stories":
            try:
                day = date.fromisoformat(named["day"])
            except ValueError:
                continue
            into = labels.by_day.setdefault(day, {})
        elif path.name.startswith("relevance-"):
            into = labels.spanning
        else:
            continue
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
            into[label.id] = label
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
    importance: int | None  # None: not known for the story itself (a digest's part)
    by: str  # "label" or "human"
    languages: list[str] = field(default_factory=list)  # per article ("en" when not given)
    multilingual: np.ndarray | None = None  # one row per article, the multilingual embedding
    judgements: list[str] = field(default_factory=list)  # what labelled it: mark:<article>, label:<digest>
    links: list[str] = field(default_factory=list)  # per article, its link (what held-out days are told by)

    def language(self, k: int) -> str:
        return self.languages[k] if k < len(self.languages) else "en"


# the story decision the labelled days are replayed under to learn from: fixed, so that a change of
# the policy's story model leaves the editorial model it learns the same (docs/benchmarks/editorial.md)
TRAINING_STORIES = "rules"

MARK_LABEL = {"off-topic": ("none", 0), "related": ("related", 1), "core": ("core", 2), "lead": ("core", 3)}


WEIGHT = {"label": 1.0, "human": 5.0}  # a person's answer weighs five labelled stories


def collect_examples(
    settings: Settings,
    days: Sequence[date],
    labels: Labels,
    progress=None,
    *,
    resources: steps.Resources,
) -> list[Example]:
    """Replay each day (dry run) and pair its stories' evidence with labels and people's marks
    (``resources``: the caller's; its models when ``settings`` name the same ones).

    The days are grouped into stories by the rules (``TRAINING_STORIES``), whatever story model the
    policy names: what the editorial model learns must not move when the story decision does, and
    the rules join only reports that say the same thing, so each example is one event's evidence.
    Only the articles of a labelled or marked story are read by the editorial reader: the others
    are no example, and its vectors of them would be computed for nothing."""
    examples: list[Example] = []
    settings = settings.model_copy(
        update={"policy": settings.policy.model_copy(update={"story_model": TRAINING_STORIES})}
    )
    resources = resources.for_settings(settings)
    for day in days:
        ctx = steps.open_run(resources, settings, day, f"learn-{day.isoformat()}", recorder=steps.Dry())
        decided = steps.run_stages(ctx, steps.between("dedup", "score"))
        outcome, scores, on_day = decided.deduped(), decided.scores, labels.on(day)
        judged = [(s, j) for s in outcome.stories if (j := _judged(outcome, s, on_day)) is not None]
        order = sorted({a for s, _ in judged for a in s.members})
        texts = [outcome.items[a].text for a in order]
        vectors = ctx.embedder.encode(texts) if order else np.zeros((0, 1))
        multilingual = (
            ctx.editorial_reader.encode(texts) if order and ctx.editorial_reader is not None else None
        )
        row_of = {a: k for k, a in enumerate(order)}
        for story, (relevance, importance, by, per_article, keys) in judged:
            scored = scores[story.story_id]
            members = story.members
            evidence = {k: v for k, v in (scored.evidence or {}).items() if k in editorial.RELEVANCE_FEATURES}
            inputs = {k: v for k, v in (scored.evidence or {}).items() if k in editorial.IMPORTANCE_FEATURES}
            rows = [row_of[a] for a in members]
            examples.append(
                Example(
                    day,
                    scored.story_id,
                    evidence,
                    inputs,
                    vectors[rows],
                    per_article,
                    relevance,
                    importance,
                    by,
                    [outcome.items[a].language for a in members],
                    multilingual[rows] if multilingual is not None else None,
                    keys,
                    [outcome.items[a].url for a in members],
                )
            )
        if progress:
            progress(day, len(examples))
    return examples


def _judged(outcome, story, on_day: dict[str, RelevanceLabel]):
    """A story's (relevance, importance, by, per-article relevance, judgement keys): what a person
    marked it, else its articles' labels; None when neither judged it (it is no example)."""
    members = story.members
    marked = next((outcome.corrected_relevance[a] for a in members if a in outcome.corrected_relevance), None)
    if marked is not None:
        relevance, importance = MARK_LABEL[marked]
        per_article = [int(relevance != "none")] * len(members)
        return (
            relevance,
            importance,
            "human",
            per_article,
            [f"mark:{a}" for a in members if a in outcome.corrected_relevance],
        )
    label = {a: label_of(on_day, outcome.items[a].url) for a in members}
    found = [lab for lab in label.values() if lab is not None]
    if not found:
        return None
    best = max(found, key=lambda lab: (RANK[lab.relevance], lab.importance))
    own = [lab.importance for lab in found if not lab.digest]  # a digest's is its stories'
    per_article = [
        int(lab.relevance != "none") if lab is not None else int(best.relevance != "none")
        for lab in label.values()
    ]
    return (
        best.relevance,
        max(own) if own else None,
        "label",
        per_article,
        sorted({label_key(lab.id) for lab in found}),
    )


@dataclass
class Fitted:
    model: editorial.EditorialModel
    figures: dict = field(default_factory=dict)


def _matrix(rows: Iterable[dict[str, float]], names: Sequence[str]) -> np.ndarray:
    return np.array([[r.get(n, 0.0) for n in names] for r in rows], dtype=float)


def _head(vectors: np.ndarray, targets: np.ndarray, weights: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    if len(targets) == 0 or len(set(targets.tolist())) < 2:
        return None
    return LogisticRegression(C=0.5, max_iter=5000, class_weight="balanced").fit(
        vectors, targets, sample_weight=weights
    )


@dataclass
class Heads:
    """The embedding heads fitted on some stories' articles: the English one (a scikit-learn
    model over the run's embedding) and the multilingual one as (coef, intercept), on the
    English head's scale."""

    english: Any = None  # a fitted LogisticRegression
    multilingual: tuple[np.ndarray, float] | None = None

    def article_values(self, e: Example) -> list[float]:
        """Each article's ``emb_head``: the English head for English text, else the multilingual."""
        out = []
        for k in range(len(e.article_relevant)):
            if e.language(k) in editorial.ENGLISH:
                head = self.english
                out.append(
                    float(head.decision_function(e.vectors[k : k + 1])[0]) if head is not None else 0.0
                )
            elif self.multilingual is not None and e.multilingual is not None:
                coef, intercept = self.multilingual
                out.append(float(e.multilingual[k] @ coef + intercept))
            else:
                out.append(0.0)
        return out

    def value(self, e: Example) -> float:
        """The story's ``emb_head``: its strongest article's, as a run takes it."""
        return max(self.article_values(e), default=0.0)


def _fit_heads(train: Sequence[Example]) -> Heads:
    """Both heads on the English articles, the multilingual one then rescaled so that its values
    there have the English head's mean and spread (``emb_head`` then means the same whichever head
    read an article). The multilingual embedding puts a text and its translation close together,
    so what its head learns from English it applies to Chinese; the labelled articles in other
    languages are left out of its fit: they are few and all of an AI digest, and would teach it
    the language for the topic."""
    rows = [
        (e, k) for e in train for k in range(len(e.article_relevant)) if e.language(k) in editorial.ENGLISH
    ]
    targets = np.array([e.article_relevant[k] for e, k in rows])
    weights = np.array([WEIGHT[e.by] for e, _ in rows])
    english = _head(
        np.vstack([e.vectors[k] for e, k in rows]) if rows else np.zeros((0, 1)), targets, weights
    )
    rows = [(e, k) for e, k in rows if e.multilingual is not None and e.multilingual.shape[0]]
    if not rows:
        return Heads(english)
    vectors = np.vstack([e.multilingual[k] for e, k in rows])  # type: ignore[index]
    raw = _head(
        vectors, np.array([e.article_relevant[k] for e, k in rows]), np.array([WEIGHT[e.by] for e, _ in rows])
    )
    if raw is None:
        return Heads(english)
    coef, intercept = raw.coef_[0].astype(np.float64), float(raw.intercept_[0])
    if english is not None and len(rows) > 1:
        theirs = vectors @ coef + intercept
        ours = english.decision_function(np.vstack([e.vectors[k] for e, k in rows]))
        scale = float(ours.std() / theirs.std()) if theirs.std() > 0 else 1.0
        shift = float(ours.mean() - scale * theirs.mean())
        coef, intercept = coef * scale, intercept * scale + shift
    return Heads(english, (coef, intercept))


def day_blocks(days: Iterable[date], apart: int = 2) -> list[tuple[date, ...]]:
    """The days in blocks of neighbours: a day at most ``apart`` days after the previous one joins
    its block. A day's labels and stories reach back two days (a feed keeps its items for days), so
    neighbouring days share most of their stories and are left out together, never one by one."""
    blocks: list[list[date]] = []
    for day in sorted(set(days)):
        if blocks and (day - blocks[-1][-1]).days <= apart:
            blocks[-1].append(day)
        else:
            blocks.append([day])
    return [tuple(b) for b in blocks]


def _folds(train: Sequence[Example]) -> list[list[int]]:
    """The examples' indices per block of neighbouring days (``day_blocks``)."""
    return [[k for k, e in enumerate(train) if e.day in block] for block in day_blocks(e.day for e in train)]


def _head_values(train: Sequence[Example], refit_head: bool) -> list[float]:
    """The ``emb_head`` feature of each example: out-of-fold (by block of days) when the heads are
    refitted, else the value the current heads gave when the story was scored."""
    if not refit_head:
        return [e.evidence.get("emb_head", 0.0) for e in train]
    folds = _folds(train)
    if len(folds) < 2:
        folds = [[]]
    out = [0.0] * len(train)
    for fold in folds:
        held = set(fold)
        heads = _fit_heads([train[k] for k in range(len(train)) if k not in held])
        for k in fold or range(len(train)):
            out[k] = heads.value(train[k])
    return out


def _fit_parts(
    train: Sequence[Example], refit_head: bool, names: Sequence[str] = editorial.RELEVANCE_FEATURES
):
    """The fits on ``train``: embedding heads (or None), on-topic, core and subject LRs (the subject:
    core over the features but ``SOURCE_FORM_FEATURES``, what the ranker reads), ranker, head values."""
    from sklearn.linear_model import LogisticRegression, Ridge

    weights = np.array([WEIGHT[e.by] for e in train])
    heads = _fit_heads(train) if refit_head else None
    values = _head_values(train, refit_head)
    x = _matrix([editorial.with_head(e.evidence, values[k]) for k, e in enumerate(train)], names)
    y_rel = np.array([e.relevance != "none" for e in train], dtype=int)
    y_core = np.array([e.relevance == "core" for e in train], dtype=int)
    rel = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
        x, y_rel, sample_weight=weights
    )
    core = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
        x, y_core, sample_weight=weights
    )
    about = subject_names(names)
    xs = x[:, [list(names).index(n) for n in about]]
    subject = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced").fit(
        xs, y_core, sample_weight=weights
    )
    p_core = subject.predict_proba(xs)[:, 1]
    # every story, off-topic ones at importance 0 too: that is where a promotion's penalty is learnt;
    # a story whose own importance is unknown (only a digest names it) is left out
    ranked = [k for k, e in enumerate(train) if e.importance is not None]
    inames = list(editorial.IMPORTANCE_FEATURES)
    xi = _matrix([{**train[k].importance_inputs, "core": float(p_core[k])} for k in ranked], inames)
    yi = np.array([(train[k].importance or 0) / 3 for k in ranked])
    ranker = Ridge(alpha=1.0).fit(xi, yi, sample_weight=weights[ranked])
    return heads, rel, core, subject, ranker, values


def subject_names(names: Sequence[str]) -> list[str]:
    """The relevance features that say what a story is about: ``names`` but the source's form."""
    return [n for n in names if n not in editorial.SOURCE_FORM_FEATURES]


def _declared(e: Example) -> bool:
    """A declared on-topic source's post or a lab's own page: kept whatever the weights say."""
    return bool(e.evidence.get("on_topic_source") or e.evidence.get("lab_site"))


THRESHOLDS = tuple(round(0.2 + k / 100, 2) for k in range(61))  # 0.20 .. 0.80


def choose_threshold(train: Sequence[Example], values: Sequence[float], names: Sequence[str]) -> float:
    """The on-topic threshold with the best F1 of the brief's two shares over ``train``'s blocks of
    days: precision (kept stories that are on the topic) and the recall of the core stories of
    importance 2 or 3; each block's stories decided by weights fitted on the other blocks (their
    ``emb_head`` out of fold too: ``values``). 0.5 with fewer than two blocks; of equal
    thresholds, the one nearest 0.5."""
    from sklearn.linear_model import LogisticRegression

    folds = _folds(train)
    if len(folds) < 2:
        return 0.5
    x = _matrix([editorial.with_head(e.evidence, values[k]) for k, e in enumerate(train)], names)
    y = np.array([e.relevance != "none" for e in train], dtype=int)
    weights = np.array([WEIGHT[e.by] for e in train])
    p = np.full(len(train), np.nan)
    for fold in folds:
        rest = np.array([k for k in range(len(train)) if k not in set(fold)])
        if len(set(y[rest].tolist())) < 2:
            continue
        lr = LogisticRegression(C=1.0, max_iter=5000, class_weight="balanced")
        lr.fit(x[rest], y[rest], sample_weight=weights[rest])
        p[fold] = lr.predict_proba(x[fold])[:, 1]
    judged = ~np.isnan(p)
    declared = np.array([_declared(e) for e in train])
    # what a reader misses: the core stories that matter (importance 2 or 3), not every related one
    important = np.array([e.relevance == "core" and (e.importance or 0) >= 2 for e in train]) & judged
    best = (-1.0, 0.0, 0.5)
    for t in THRESHOLDS:
        kept = ((p >= t) | declared) & judged
        precision = np.sum(kept & (y == 1)) / max(int(np.sum(kept)), 1)
        recall = np.sum(kept & important) / max(int(np.sum(important)), 1)
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        best = max(best, (round(float(f1), 6), -abs(t - 0.5), t))
    return best[2]


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


def _require_both_sides(train: Sequence[Example]) -> None:
    """Refuse to fit on stories all on (or all off) the topic, or all core (or none)."""
    if len({e.relevance != "none" for e in train}) < 2 or len({e.relevance == "core" for e in train}) < 2:
        raise InputError(
            "need labelled examples both on and off the topic, and core and not core, to fit; "
            "label more stories (--labels) or mark some in 'brief review'"
        )


def _embedding_heads(
    heads: Heads | None, base: editorial.EditorialModel | None
) -> tuple[editorial.EmbeddingHead | None, editorial.EmbeddingHead | None]:
    """The English and multilingual embedding heads the model keeps: the ones just fitted (``heads``),
    else the base model's."""
    if heads is None:
        assert base is not None
        return base.embedding_head, base.multilingual_head
    english = heads.english
    embedding_head = (
        editorial.EmbeddingHead(
            coef=[round(float(c), 6) for c in english.coef_[0]],
            intercept=float(english.intercept_[0]),
        )
        if english is not None
        else None
    )
    multilingual_head = (
        editorial.EmbeddingHead(
            coef=[round(float(c), 6) for c in heads.multilingual[0]],
            intercept=float(heads.multilingual[1]),
        )
        if heads.multilingual is not None
        else None
    )
    return embedding_head, multilingual_head


def _training_rows(train: Sequence[Example], values: Sequence[float]) -> list[editorial.TrainingRow]:
    """The stories fitted on, as the artefact keeps them: evidence (with the embedding head's value)
    and labels, no text."""
    return [
        editorial.TrainingRow(
            day=e.day.isoformat(),
            story_id=e.story_id,
            evidence={k: round(v, 4) for k, v in editorial.with_head(e.evidence, values[k]).items()},
            importance_inputs={k: round(v, 4) for k, v in e.importance_inputs.items()},
            relevance=e.relevance,  # type: ignore[arg-type]
            importance=e.importance,
            by=e.by,  # type: ignore[arg-type]
        )
        for k, e in enumerate(train)
    ]


def _card(
    train: Sequence[Example], base: editorial.EditorialModel | None, figures: dict, note: str
) -> dict[str, Any]:
    """The model's card: when and on what it was fitted (days, stories, the judgements it saw), its
    held-out figures, the library and the note."""
    days = sorted({e.day for e in train})
    judgements = sorted(
        {j for e in train for j in e.judgements}
        | set(base.card.get("fitted_on", {}).get("judgements", []) if base else [])
    )
    return {
        "fitted_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "fitted_on": {
            "days": [d.isoformat() for d in days],
            "stories": len(train),
            "from_labels": sum(e.by == "label" for e in train),
            "from_people": sum(e.by == "human" for e in train),
            "on_topic": sum(e.relevance != "none" for e in train),
            "core": sum(e.relevance == "core" for e in train),
            "base_model": base.name if base else None,
            "label_days": sorted({e.day.isoformat() for e in train if e.by == "label"}),
            "people_days": sorted({e.day.isoformat() for e in train if e.by == "human"}),
            # what it saw: 'brief evaluate' scores it only on other marks and labels
            "judgements": judgements,
            "judgements_digest": judgements_digest(judgements),
        },
        "leave_one_block_out": figures,
        "library": _library(),
        "note": note,
    }


def fit(
    examples: Sequence[Example],
    name: str,
    topic: str,
    embedding_model: str,
    note: str = "",
    base: editorial.EditorialModel | None = None,
    multilingual_model: str = MULTILINGUAL_MODEL,
    features: Sequence[str] | None = None,
    held_out_figures: bool = True,
) -> Fitted:
    """Fit a model; the card reports leave-one-block-out figures (``held_out_figures``: a fit
    that is itself one fold of such a measure, as the benchmark's and the CI guard's are, leaves
    them out: they refit every part once per block of days).

    Without ``base``, everything is fitted on ``examples`` (which carry their embeddings). With a
    ``base`` model, its embedding head is kept and its own training stories join the new ones:
    a few answers then move the weights without throwing away what the base model learnt.
    ``features``: the relevance features to weigh (default: the base model's, else all). The
    on-topic threshold is chosen over the training stories' blocks of days (``choose_threshold``).
    """
    refit_head = base is None
    train = [*(base_examples(base) if base else []), *examples]
    _require_both_sides(train)
    kept = base.relevance.features if base and base.relevance else editorial.RELEVANCE_FEATURES
    names = list(features or kept)
    heads, rel, core, subject, ranker, values = _fit_parts(train, refit_head, names)
    threshold = choose_threshold(train, values, names)
    embedding_head, multilingual_head = _embedding_heads(heads, base)
    model = editorial.EditorialModel(
        name=name,
        kind="fitted",
        topic=topic,
        embedding_model=embedding_model,
        relevance=_linear(names, rel.coef_[0], rel.intercept_[0]),
        core=_linear(names, core.coef_[0], core.intercept_[0]),
        subject=_linear(subject_names(names), subject.coef_[0], subject.intercept_[0]),
        embedding_head=embedding_head,
        multilingual_model=(
            (base.multilingual_model if base else multilingual_model) if multilingual_head else None
        ),
        multilingual_head=multilingual_head,
        importance=_linear(editorial.IMPORTANCE_FEATURES, ranker.coef_, ranker.intercept_),
        threshold=threshold,
        training=_training_rows(train, values),
    )
    figures = (
        cross_validate(train, refit_head, names)
        if held_out_figures
        else {"note": "not computed: this fit is itself one fold of a held-out measure"}
    )
    return Fitted(model.model_copy(update={"card": _card(train, base, figures, note)}), figures)


def label_key(link: str) -> str:
    """A hand label's judgement key: a digest of the link it names, so that a model's record of what
    it was fitted on holds no publisher's link (a purge need not reach into stored models)."""
    import hashlib

    return "label:" + hashlib.blake2b(link.encode(), digest_size=10).hexdigest()


def judgements_digest(keys: Sequence[str]) -> str:
    """A digest of the marks and labels a model was fitted on (sorted keys), to compare two artefacts."""
    import hashlib

    return hashlib.blake2b("\n".join(sorted(keys)).encode(), digest_size=16).hexdigest()


def seen_by(model: editorial.EditorialModel) -> tuple[set[str], set[tuple[str, str]]]:
    """What a model was fitted on: its judgement keys (``mark:<article>``, ``label:<digest of the
    link>``) and its training stories (day, story id), which every fitted artefact keeps."""
    keys = set(model.card.get("fitted_on", {}).get("judgements", []))
    return keys, {(row.day, row.story_id) for row in model.training}


def _library() -> str:
    import sklearn

    return f"scikit-learn {sklearn.__version__}"


def cross_validate(
    examples: Sequence[Example], refit_head: bool, names: Sequence[str] = editorial.RELEVANCE_FEATURES
) -> dict:
    """Leave one block of neighbouring days out (``day_blocks``): fit on the other blocks, the
    threshold chosen there too, decide the held-out block's stories, pool the counts."""
    blocks = day_blocks(e.day for e in examples)
    if len(blocks) < 2:
        return {"note": "one block of days only: no held-out figures"}
    tp = fp = fn = tn = core_tp = core_fp = 0
    important_kept = important = 0
    thresholds = []
    for block in blocks:
        train = [e for e in examples if e.day not in block]
        test = [e for e in examples if e.day in block]
        if len({e.relevance != "none" for e in train}) < 2 or len({e.relevance == "core" for e in train}) < 2:
            continue
        heads, rel, core, _, _, values = _fit_parts(train, refit_head, names)
        threshold = choose_threshold(train, values, names)
        thresholds.append(threshold)
        for e in test:
            x = editorial.with_head(
                e.evidence, heads.value(e) if heads is not None else e.evidence.get("emb_head", 0.0)
            )
            row = _matrix([x], names)
            declared = _declared(e)
            kept = rel.predict_proba(row)[0, 1] >= threshold or declared
            is_core = kept and (core.predict_proba(row)[0, 1] >= 0.5 or declared)
            truth = e.relevance != "none"
            tp += kept and truth
            fp += kept and not truth
            fn += (not kept) and truth
            tn += (not kept) and not truth
            core_tp += is_core and e.relevance == "core"
            core_fp += is_core and e.relevance != "core"
            if e.relevance == "core" and (e.importance or 0) >= 2:
                important += 1
                important_kept += kept
    return {
        "blocks": len(blocks),
        "stories": tp + fp + fn + tn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "core_precision": round(core_tp / (core_tp + core_fp), 4) if core_tp + core_fp else None,
        "recall_important": round(important_kept / important, 4) if important else None,
        "thresholds": f"{min(thresholds):.2f}-{max(thresholds):.2f}" if thresholds else None,
    }


def held_out_figures(card: dict) -> dict:
    """A card's held-out figures (cards written before blocks say ``leave_one_day_out``)."""
    return card.get("leave_one_block_out") or card.get("leave_one_day_out") or {}


def write(fitted: Fitted, out: Path, in_force: Settings, config: Settings) -> Path:
    """The artefact (JSON with its card) and, for a ``.toml`` ``out``, a candidate policy that is
    ``in_force``'s policy whole with this model (and its ``[llm]`` when it is not the config's)."""
    from ops.candidate import candidate_toml
    from storage.atomic import write_text

    model_path = out.with_suffix(".model.json") if out.suffix == ".toml" else out
    model_path.parent.mkdir(parents=True, exist_ok=True)
    write_text(model_path, fitted.model.model_dump_json(indent=2) + "\n")
    write_text(model_path.with_suffix(".card.md"), card_markdown(fitted.model))
    if out.suffix == ".toml":
        llm = in_force.llm if in_force.llm != config.llm else None
        write_text(out, candidate_toml(in_force.policy, model_path.name, out.name, llm))
    return model_path


def card_markdown(model: editorial.EditorialModel) -> str:
    """The model card as a page a person reads beside the artefact."""
    card = model.card
    on = card.get("fitted_on", {})
    cv = held_out_figures(card)
    lines = [
        f"# Editorial model `{model.name}`",
        "",
        f"Topic **{model.topic}**; kind `{model.kind}`; embedding `{model.embedding_model}`"
        + (f", multilingual `{model.multilingual_model}`" if model.multilingual_model else "")
        + f"; fitted {card.get('fitted_at', '?')} with {card.get('library', '?')}.",
        "",
        "## Fitted on",
        "",
        f"- days: {', '.join(on.get('days', []))}",
        f"- stories: {on.get('stories', 0)} ({on.get('from_labels', 0)} from hand labels, "
        f"{on.get('from_people', 0)} from people's answers); {on.get('on_topic', 0)} on topic, "
        f"{on.get('core', 0)} core",
        f"- refines: {on.get('base_model') or 'nothing (fitted afresh)'}",
        f"- judgements seen: {len(on.get('judgements', []))} marks and labels "
        f"(digest {on.get('judgements_digest', '-')}); 'brief evaluate' scores it on others only",
        f"- note: {card.get('note', '')}",
        "",
        "## Leave one block of days out" if "leave_one_block_out" in card else "## Leave one day out",
        "",
        "| figure | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in cv.items()],
        "",
        "## Weights",
        "",
    ]
    if model.kind == "fitted":
        lines.append(f"- on-topic threshold: {model.threshold:.2f} (chosen over the training blocks)")
    for part in ("relevance", "core", "subject", "importance"):
        linear = getattr(model, part)
        if linear is not None:
            lines.append(
                f"- {part}: "
                + ", ".join(f"{f} {c:+.3f}" for f, c in zip(linear.features, linear.coef, strict=True))
                + f"; intercept {linear.intercept:+.3f}"
            )
    return "\n".join(lines) + "\n"


def fitted_on_lines(on: dict) -> list[str]:
    """Where a model's stories came from: the hand labels (and whose they were when it refines the
    model in force, which brings its own along), and people's answers, each with its days."""

    def days(key: str) -> str:
        named = on.get(key)
        if not named:
            return ""
        return f" of {named[0]}" if len(named) == 1 else f" of {len(named)} days, {named[0]} .. {named[-1]}"

    labels, people, base = on.get("from_labels", 0), on.get("from_people", 0), on.get("base_model")
    lines = []
    if labels:
        whose = (
            f": the labels the model in force, {base!r}, was fitted on, kept so that a few answers move its "
            "weights without losing what it learnt"
            if base
            else ""
        )
        lines.append(f"{labels} from hand labels{days('label_days')}{whose}")
    lines.append(f"{people} from people's answers and marks{days('people_days')}")
    return lines


def card_text(model: editorial.EditorialModel) -> str:
    card = model.card
    on = card.get("fitted_on", {})
    cv = held_out_figures(card)
    rows = [
        f"model {model.name} ({model.kind}) for the topic {model.topic!r}, embedding {model.embedding_model}"
        + (f", multilingual {model.multilingual_model}" if model.multilingual_model else ""),
        f"fitted on {counted(on.get('stories', 0), 'story', 'stories')} "
        f"of {counted(len(on.get('days', [])), 'day')} "
        f"({on.get('on_topic', 0)} on topic, {on.get('core', 0)} core) with {card.get('library', '')}:",
        *[f"  {line}" for line in fitted_on_lines(on)],
        f"judgements seen: {len(on.get('judgements', []))} (digest {on.get('judgements_digest', '-')})",
    ]
    if "precision" in cv:
        rows.append(
            "leave one block of days out: "
            + ", ".join(f"{k} {v}" for k, v in cv.items() if k not in ("stories", "blocks"))
            + f" over {cv.get('stories')} stories"
        )
    elif cv:
        rows.append(f"held out: {cv.get('note')}")
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
