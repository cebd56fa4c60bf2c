"""The editor's judgement: is a story on the brief's topic, and how much does it matter?

Both are policy. The evidence is computed here by plain functions of a story's articles
(titles, summaries, the feed's own categories, URL sections, the source) and of the
sentence embedding the run already has; the weights that combine it are *fitted*
(``brief learn``, scikit-learn) and shipped as a small JSON artefact with a card
(``tasks/models/<name>.json``). A daily run only applies a model; it never fits one.

Model kinds (all go through the same pipeline, which is what makes them comparable):

- ``fitted``: logistic regressions for "on topic" and "core", a linear head over the
  embedding (and one over a multilingual embedding for the articles the run's embedder
  cannot read), and a linear importance ranking; the shipped default;
- ``rules``: every story is core and importance is the unfitted keyword formula of earlier
  versions (kept as the baseline the benchmark compares against);
- ``keywords``: on topic when a title or a feed category names a topic keyword or entity;
- ``embedding``: on topic when the cosine to the topic description reaches a threshold.
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import ConfigError
from tasks.analyze import versioned

MODELS_DIR = Path(__file__).resolve().parent / "models"

RELEVANCE_FEATURES = (
    "kw_title",
    "entity_title",
    "kw_summary",
    "entity_summary",
    "tags",
    "section",
    "on_topic_source",
    "lab_site",
    "not_news",
    "emb_topic",
    "emb_head",
    # where the topic sits: in the lede, in how much of the text, or there is only a title
    "kw_lede",
    "topic_sentences",
    "title_only",
    # what one entry of the source is (a news or a lab article is neither)
    "kind_community",
    "kind_papers",
    "kind_digest",
    # the embedding head's word when a title is all there is to read (a Hacker News entry): a
    # title says less than an article, so the fit may weigh the head apart there
    "head_title_only",
)
# what reported a story and in what form (a discussion, a title alone, a paper, a digest's line),
# not what it is about: they keep a story out of the brief, they do not say how much it matters
SOURCE_FORM_FEATURES = ("title_only", "kind_community", "kind_papers", "kind_digest", "head_title_only")
# the features of the models fitted before where the topic sits and the source kind were read
FIRST_RELEVANCE_FEATURES = RELEVANCE_FEATURES[:11]
IMPORTANCE_FEATURES = (
    "core",
    "outlets",
    "languages",
    "first_party",
    "leading",
    "lab_launch",
    "product",
    "novel",
    "recency",
    "not_news",
    "amount",
    "hn_points",
    "hn_comments",
    "stars_today",
)
Outcome = Literal["core", "related", "off-topic"]


# -- the artefact ------------------------------------------------------------------------


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Linear(_Strict):
    features: list[str]
    coef: list[float]
    intercept: float

    def value(self, x: Mapping[str, float]) -> float:
        return float(sum(c * x.get(f, 0.0) for f, c in zip(self.features, self.coef, strict=True)))

    def check(self, known: Sequence[str], where: str) -> None:
        unknown = [f for f in self.features if f not in known]
        if unknown or len(self.features) != len(self.coef):
            raise ValueError(f"{where}: unknown features {unknown} or coef length {len(self.coef)}")


class EmbeddingHead(_Strict):
    coef: list[float]
    intercept: float


class TrainingRow(_Strict):
    """One story a model was fitted on: its evidence and its label (numbers only, no feed text)."""

    day: str
    story_id: str
    evidence: dict[str, float]
    importance_inputs: dict[str, float]
    relevance: Literal["core", "related", "none"]
    importance: int | None = Field(ge=0, le=3)  # None: not known for the story itself (a digest's part)
    by: Literal["label", "human"]


class EditorialModel(_Strict):
    name: str
    kind: Literal["fitted", "rules", "keywords", "embedding"]
    topic: str = "AI"
    embedding_model: str = "all-MiniLM-L6-v2"
    relevance: Linear | None = None
    core: Linear | None = None
    embedding_head: EmbeddingHead | None = None
    # reads the articles the embedding model cannot (not English); its logit is put on the
    # English head's scale when fitted, so ``emb_head`` means the same in every language
    multilingual_model: str | None = None
    multilingual_head: EmbeddingHead | None = None
    importance: Linear | None = None
    # the core weights over what a story is about only (no ``SOURCE_FORM_FEATURES``): the
    # relevance importance reads; without it (models fitted before it), importance reads ``core``
    subject: Linear | None = None
    # the on-topic probability a fitted model keeps a story from (chosen when fitted); the cosine
    # to the topic for the ``embedding`` kind
    threshold: float = Field(default=0.5, ge=-1, le=1)
    card: dict = Field(default_factory=dict)
    training: list[TrainingRow] = Field(default_factory=list)

    def model_post_init(self, _context: object) -> None:
        if self.kind == "fitted":
            for part in ("relevance", "core", "importance"):
                if getattr(self, part) is None:
                    raise ValueError(f"a fitted model needs '{part}' weights")
            assert self.relevance and self.core and self.importance
            self.relevance.check(RELEVANCE_FEATURES, "relevance")
            self.core.check(RELEVANCE_FEATURES, "core")
            self.importance.check(IMPORTANCE_FEATURES, "importance")
            if self.subject is not None:
                self.subject.check(
                    [f for f in RELEVANCE_FEATURES if f not in SOURCE_FORM_FEATURES], "subject"
                )


RULES = EditorialModel(name="rules", kind="rules")


def model_file(ref: str) -> Path | None:
    """The file a policy's ``editorial_model`` names (None for ``rules``); ``builtin:<name>@<file>``
    is the shipped model as a policy adopted it, read from the store's copy (``ops.policy``)."""
    if ref == "rules":
        return None
    if ref.startswith("builtin:"):
        name, _, kept = ref.removeprefix("builtin:").partition("@")
        return Path(kept) if kept else MODELS_DIR / f"{name}.json"
    return Path(ref).expanduser()


@functools.lru_cache(maxsize=32)
def _load(path: str, mtime_ns: int) -> EditorialModel:
    try:
        return EditorialModel.model_validate_json(Path(path).read_bytes())
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ConfigError(
            f"editorial model {path!r}: {where}: {first['msg']}; write it with 'brief learn --out FILE'"
        ) from None


def load_model(ref: str) -> EditorialModel:
    """The model a policy names: ``builtin:<name>``, ``rules`` or a JSON file from ``brief learn``."""
    path = model_file(ref)
    if path is None:
        return RULES
    try:
        stat = path.stat()
    except OSError:
        known = ", ".join(f"builtin:{p.stem}" for p in sorted(MODELS_DIR.glob("*.json")) if "." not in p.stem)
        raise ConfigError(
            f"editorial model {ref!r}: no such file; use one of {known}, 'rules', "
            "or a file from 'brief learn'"
        ) from None
    return _load(str(path), stat.st_mtime_ns)


def model_digest(ref: str) -> str:
    """What the policy version hashes for its model: the artefact's content, not its path."""
    path = model_file(ref)
    if path is None:
        return "rules"
    try:
        return _digest(str(path), path.stat().st_mtime_ns)
    except OSError:
        return f"missing:{ref}"


@functools.lru_cache(maxsize=32)
def _digest(path: str, mtime_ns: int) -> str:
    return hashlib.blake2b(Path(path).read_bytes(), digest_size=8).hexdigest()


# -- evidence ----------------------------------------------------------------------------


# A term's pattern (``_term_pattern``) -> the term as ``_folded`` writes it: a text whose folded form
# does not hold it cannot match the pattern, so the pattern is not searched there (``_candidates``).
_TERMS: dict[re.Pattern[str], str] = {}
# the only characters outside ASCII that ``re.IGNORECASE`` matches to an ASCII letter (checked over
# every code point): dotless and dotted i, the Kelvin sign, the long s
_TO_ASCII = str.maketrans({"\u0131": "i", "\u0130": "i", "\u212a": "k", "\u017f": "s"})


def _folded(text: str) -> str:
    """Case-folded, character by character, with what ``re.IGNORECASE`` matches to an ASCII letter
    written as that letter: a term's pattern matches a text only where the folded text holds the
    folded term."""
    return text.translate(_TO_ASCII).casefold()


def _candidates(patterns: Sequence[re.Pattern[str]], text: str) -> list[re.Pattern[str]]:
    """The patterns that may match ``text``: a term's pattern only if the text holds the term in
    some case (a substring test, far cheaper than the search); any other pattern always."""
    folded = _folded(text)
    return [p for p in patterns if (term := _TERMS.get(p)) is None or term in folded]


def _term_pattern(term: str) -> re.Pattern[str]:
    if not term.isascii():  # CJK terms have no word boundaries
        pattern = re.compile(re.escape(term))
    else:
        flags = 0 if term.upper() == term or any(c.isupper() for c in term[1:]) else re.IGNORECASE
        # ASCII word boundaries: "AI" inside Chinese or Dutch text ("用AI打造", "AI-model") still
        # counts; a version written against the name counts as the name ("Qwen3.5", "GPT5.4"), a
        # longer word does not ("Geminids")
        pattern = re.compile(r"(?<![A-Za-z0-9-])" + re.escape(term) + r"(?![A-Za-z])", flags)
    _TERMS[pattern] = _folded(term)
    return pattern


@dataclass(frozen=True)
class TopicEvidence:
    """The topic's vocabulary, compiled once per run."""

    name: str
    keywords: tuple[re.Pattern[str], ...]
    entities: tuple[re.Pattern[str], ...]
    leading: tuple[re.Pattern[str], ...]
    sections: frozenset[str]
    not_news: tuple[re.Pattern[str], ...]
    not_news_tags: frozenset[str]
    on_topic_sources: frozenset[str] = frozenset()
    lab_sites: frozenset[str] = frozenset()
    versioned: re.Pattern[str] | None = None  # a topic name with a version: "Genie 3", "Qwen3.5"

    @classmethod
    def build(cls, topic, on_topic_sources: Sequence[str] = ()) -> TopicEvidence:
        return cls(
            topic.name,
            tuple(_term_pattern(k) for k in topic.keywords),
            tuple(_term_pattern(e) for e in topic.entities),
            tuple(_term_pattern(e) for e in topic.leading),
            frozenset(s.strip("/").lower() for s in topic.sections),
            tuple(re.compile(p, re.IGNORECASE) for p in topic.not_news),
            frozenset(t.lower() for t in topic.not_news_tags),
            frozenset(on_topic_sources),
            frozenset(site.lower().removeprefix("www.") for site in topic.lab_sites),
            versioned(topic.entities),
        )

    def on_lab_site(self, url: str) -> bool:
        """The link is on a lab's own site (``openai.com``, ``mistral.ai`` and their subdomains)."""
        name = _host(url)
        return any(name == site or name.endswith("." + site) for site in self.lab_sites)

    def first_party(self, article) -> bool:
        """A lab's own post: from a declared on-topic source, or a link to the lab's own site
        whichever feed found it (a Hacker News item linking to ``openai.com``)."""
        link = article.url or article.canonical_url
        return article.source in self.on_topic_sources or self.on_lab_site(link)


def _hits(patterns: Sequence[re.Pattern[str]], text: str, cap: int = 3) -> float:
    return float(min(sum(1 for p in _candidates(patterns, text) if p.search(text)), cap))


def _not_news(topic: TopicEvidence, title: str, tags: Sequence[str]) -> float:
    tag_hit = any(t.lower().rsplit(" / ", 1)[-1] in topic.not_news_tags for t in tags)
    return float(min(_hits(topic.not_news, title, 2) + tag_hit, 2))


def _section(topic: TopicEvidence, url: str) -> float:
    """The URL names the topic: a path segment (``/ai/``) or a part of the site's name
    (``unsloth.ai``, ``ai.meta.com``)."""
    path = re.sub(r"^[a-z]+://[^/]+", "", url.lower())
    names = _host(url).split(".")
    return float(any(part in topic.sections for part in (*path.split("/"), *names)))


ENGLISH = frozenset({"en", "und"})


def _host(url: str) -> str:
    try:
        name = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
    return name.removeprefix("www.")


_GENERIC_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or"})


def outlet_of(article) -> str:
    """Who reported an article, as one key: the site its link is on, by name (``arstechnica``
    for an Ars article and for a Hacker News item that links to it; ``github`` for a trending
    repository; ``aibase`` for a digest's story), else its source. Two articles with one key
    are one outlet's report, not independent ones."""
    labels = _host(article.url or article.canonical_url).split(".")
    if len(labels) < 2:
        return str(article.source)
    if len(labels) >= 3 and labels[-2] in _GENERIC_SECOND_LEVEL:
        return labels[-3]
    return labels[-2]


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def _sentences(text: str) -> list[str]:
    return [part for part in _SENTENCE_END.split(text.strip()) if part.strip()]


def _names_topic(topic: TopicEvidence, text: str) -> bool:
    return any(p.search(text) for p in _candidates((*topic.keywords, *topic.entities), text))


def placement_evidence(topic: TopicEvidence, summary: str) -> dict[str, float]:
    """Where the topic sits in an article's summary: in its first sentence (``kw_lede``), and in
    how much of it (``topic_sentences``, the share of its sentences that name the topic). A story
    about a company that also makes AI names the AI, if at all, in passing, further down."""
    sentences = _sentences(summary)
    lede = sentences[0] if sentences else ""
    share = sum(_names_topic(topic, s) for s in sentences) / len(sentences) if sentences else 0.0
    return {
        "kw_lede": float(_names_topic(topic, lede)),
        "topic_sentences": round(share, 4),
        "title_only": float(not sentences),
    }


# a repository is told apart by what its description (its title here) says, not by being one
SOURCE_KINDS = ("community", "papers", "digest")


def article_evidence(topic: TopicEvidence, article, topic_cosine: float) -> dict[str, float]:
    """Topic evidence of one article (``tasks.dedup.Item``), before the embedding head.

    The offline embedding model reads English: for other languages its cosine says nothing,
    so ``emb_topic`` is left at 0 there; their ``emb_head`` is the multilingual head's
    (``multilingual_head_value``), beside names, numbers, the feed's categories and the source.
    """
    summary = article.summary[:600]
    tags = " | ".join(article.tags)
    # a repository's title is its name ("unslothai / unsloth"): its description says what it is
    title = f"{article.title}. {summary}" if article.kind == "repos" else article.title
    return {
        "kw_title": _hits(topic.keywords, title),
        "entity_title": _hits(topic.entities, title),
        "kw_summary": _hits(topic.keywords, summary),
        "entity_summary": _hits(topic.entities, summary),
        "tags": min(_hits(topic.keywords, tags) + _hits(topic.entities, tags), 3.0),
        "section": _section(topic, article.url or article.canonical_url),
        "on_topic_source": float(article.source in topic.on_topic_sources),
        "lab_site": float(topic.on_lab_site(article.url or article.canonical_url)),
        "not_news": _not_news(topic, article.title, article.tags),
        "emb_topic": round(float(topic_cosine), 4) if article.language in ENGLISH else 0.0,
        **placement_evidence(topic, summary),
        **{f"kind_{kind}": float(article.kind == kind) for kind in SOURCE_KINDS},
    }


def story_evidence(per_article: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """A story's evidence: the strongest of its articles, feature by feature, and what is derived
    from it (``with_head``)."""
    strongest = {k: max(e.get(k, 0.0) for e in per_article) for k in per_article[0]}
    return with_head(strongest, strongest.get("emb_head", 0.0))


def with_head(evidence: Mapping[str, float], head: float) -> dict[str, float]:
    """The story's evidence with its embedding head's value ``head`` (``emb_head``) and the
    features derived from it: ``head_title_only``, the head's value when the story is a title
    alone (0 otherwise)."""
    return {**evidence, "emb_head": head, "head_title_only": round(head * evidence.get("title_only", 0.0), 4)}


# -- decisions ---------------------------------------------------------------------------


def _sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-max(min(z, 40.0), -40.0)))


@dataclass(frozen=True)
class Relevance:
    relevance: float
    core: float
    outcome: Outcome
    reasons: tuple[str, ...] = ()
    # how much the story is about the topic, whatever reported it (``EditorialModel.subject``):
    # what importance reads; None: ``core``
    subject: float | None = None


def head_value(model: EditorialModel, vector: np.ndarray | None, embedder: str, language: str) -> float:
    """The embedding head's logit; 0 (undecided) for another embedder's vectors or non-English text."""
    if model.embedding_head is None or vector is None:
        return 0.0
    if embedder != model.embedding_model or language not in ENGLISH:
        return 0.0
    coef = np.asarray(model.embedding_head.coef, dtype=np.float32)
    if coef.shape[0] != vector.shape[0]:
        return 0.0
    return round(float(vector @ coef + model.embedding_head.intercept), 4)


def multilingual_head_value(model: EditorialModel, vector: np.ndarray | None, embedder: str | None) -> float:
    """The multilingual head's logit (on the English head's scale) for an article the embedding
    model cannot read; 0 (undecided) without the head, its embedder or a vector of its size."""
    head = model.multilingual_head
    if head is None or vector is None or embedder is None or embedder != model.multilingual_model:
        return 0.0
    coef = np.asarray(head.coef, dtype=np.float32)
    if coef.shape[0] != vector.shape[0]:
        return 0.0
    return round(float(vector @ coef + head.intercept), 4)


def judge(model: EditorialModel, evidence: Mapping[str, float]) -> Relevance:
    """On topic (core / related) or off-topic, with the probabilities and the reasons in words."""
    reasons = explain(evidence)
    if model.kind == "rules":
        return Relevance(1.0, 1.0, "core", ("no topic filter (rules)",))
    if model.kind == "keywords":
        hit = evidence["kw_title"] + evidence["entity_title"] + evidence["tags"] > 0
        p = 1.0 if hit else 0.0
        return Relevance(p, p, "core" if hit else "off-topic", reasons)
    if model.kind == "embedding":
        hit = evidence["emb_topic"] >= model.threshold
        p = round(min(max((evidence["emb_topic"] + 1) / 2, 0.0), 1.0), 4)
        return Relevance(p, p, "core" if hit else "off-topic", reasons)
    assert model.relevance and model.core
    p_rel = _sigmoid(model.relevance.value(evidence) + model.relevance.intercept)
    p_core = _sigmoid(model.core.value(evidence) + model.core.intercept)
    subject = _sigmoid(model.subject.value(evidence) + model.subject.intercept) if model.subject else p_core
    if evidence.get("on_topic_source") or evidence.get("lab_site"):  # a lab's own post: core, never filtered
        return Relevance(
            round(max(p_rel, 0.5), 4),
            round(max(p_core, 0.5), 4),
            "core",
            reasons,
            round(max(subject, 0.5), 4),
        )
    outcome: Outcome = "off-topic"
    if p_rel >= model.threshold:
        outcome = "core" if p_core >= 0.5 else "related"
    return Relevance(round(p_rel, 4), round(p_core, 4), outcome, reasons, round(subject, 4))


def explain(evidence: Mapping[str, float]) -> tuple[str, ...]:
    words = {
        "kw_title": "topic words in the title",
        "entity_title": "topic names in the title",
        "kw_summary": "topic words in the summary",
        "entity_summary": "topic names in the summary",
        "tags": "the feed files it under the topic",
        "section": "published in the outlet's topic section",
        "on_topic_source": "declared on-topic source",
        "lab_site": "a lab's own site",
        "not_news": "looks like a buying guide, deal or promotion",
    }
    return tuple(text for key, text in words.items() if evidence.get(key))


@dataclass
class ImportanceInputs:
    """What importance looks at beyond relevance, gathered by the scoring step."""

    sources: set[str]  # the outlets that report it (``outlet_of``)
    earlier_sources: set[str] = field(default_factory=set)  # and those of its earlier coverage
    first_party: bool = False
    titles: Sequence[str] = ()
    products: set[str] = field(default_factory=set)
    novel_products: set[str] = field(default_factory=set)
    newest: datetime | None = None
    largest_amount_usd: float = 0.0
    languages: set[str] = field(default_factory=set)  # of its articles ("und" not counted)
    points: int = 0  # the crowd: Hacker News points and comments, GitHub stars today (largest)
    comments: int = 0
    stars_today: int = 0


def _log_share(count: int, full: float) -> float:
    """``count`` on a log scale, 1 at ``full`` and above (1000 points -> 1 for ``full=1000``)."""
    return round(min(math.log10(1 + max(count, 0)) / math.log10(1 + full), 1.0), 4)


def importance_features(
    topic: TopicEvidence,
    inputs: ImportanceInputs,
    relevance: Relevance,
    evidence: Mapping[str, float],
    window_end: datetime,
    lookback_hours: int,
) -> dict[str, float]:
    recency = 0.0
    if inputs.newest is not None:
        age_h = max((window_end - inputs.newest).total_seconds() / 3600, 0.0)
        recency = max(0.0, 1 - age_h / lookback_hours)
    titles = " | ".join(inputs.titles)
    amount = 0.0
    if inputs.largest_amount_usd > 0:
        amount = min(max((math.log10(inputs.largest_amount_usd) - 7) / 3, 0.0), 1.0)  # $10M → 0, $10B → 1
    # how much it is about the topic, not in what form it was reported: a discussion's title alone
    # keeps an AI story out at worst, it does not make one in the brief matter less
    core = relevance.core if relevance.subject is None else relevance.subject
    return {
        "core": core,
        "outlets": round(math.log2(1 + len(inputs.sources | inputs.earlier_sources)), 4),
        "languages": float(min(max(len(inputs.languages - {"und"}) - 1, 0), 2)),  # beyond the first
        "first_party": float(inputs.first_party),
        "leading": _hits(topic.leading, titles, 1),
        # a lab's own post that names a model or product no earlier title named: its launch
        "lab_launch": float(inputs.first_party and bool(inputs.novel_products)),
        "product": float(bool(inputs.products)),
        "novel": float(bool(inputs.novel_products)),
        "recency": round(recency, 4),
        "not_news": evidence.get("not_news", 0.0),
        "amount": round(amount, 4),
        # the crowd's attention counts as much as the story is about the topic: a Hacker News
        # front page of politics or games says nothing of what matters in AI
        "hn_points": round(core * _log_share(inputs.points, 1000), 4),
        "hn_comments": round(core * _log_share(inputs.comments, 500), 4),
        "stars_today": round(core * _log_share(inputs.stars_today, 5000), 4),
    }


def importance(model: EditorialModel, features: Mapping[str, float], legacy: float) -> float:
    """In [0, 1]; ``legacy`` is the unfitted formula, used by the baseline model kinds."""
    if model.kind != "fitted":
        return legacy
    assert model.importance
    value = model.importance.value(features) + model.importance.intercept
    return round(min(max(value, 0.0), 1.0), 4)
