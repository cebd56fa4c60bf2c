"""Score the day's stories: on the topic or not (core / related / off-topic), and how much each matters.

Every decision is a ``story.scored`` derivation with the scores, the evidence and the reasons,
so "why is X missing from the brief" is one ``brief events --type story.scored`` away. A
person's mark (``article.corrected`` of the field ``relevance``) overrides the model. A language
model cannot take a decision over: a story whose report talks to an AI system keeps the offline
relevance and importance (the model is not asked), and a declared on-topic source's post is not
dropped as off-topic on a model's word.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from tasks import analyze, editorial, injection, llm
from tasks.steps.context import RunContext, lookback_days
from tasks.steps.dedup import DedupOutcome
from tasks.steps.llm import Analyst
from tasks.steps.llm import analyst as llm_analyst


@dataclass(frozen=True)
class Scored:
    story_id: str  # the id the story goes by in the brief (an earlier story's id for a follow-up)
    relevance: float
    core: float
    outcome: editorial.Outcome
    importance: float
    lead: bool = False  # a person said it should lead
    evidence: dict | None = None
    marked: bool = False  # a person's mark decided it
    promotion: bool = False  # looks like an event, a livestream or a deal: never leads (fitted models)
    event_id: str = ""  # its ``story.scored`` (what the analysis names as its source)

    @property
    def kept(self) -> bool:
        return self.outcome != "off-topic"


def on_topic_threshold(model: editorial.EditorialModel) -> float:
    """The on-topic score a story needs (a fitted model's own threshold)."""
    return model.threshold if model.kind == "fitted" else 0.5


def topic_evidence(ctx: RunContext) -> editorial.TopicEvidence:
    on_topic = [s.name for s in ctx.settings.sources if s.first_party]
    return editorial.TopicEvidence.build(ctx.settings.policy.topic, on_topic)


def known_products(ctx: RunContext, outcome: DedupOutcome, topic: editorial.TopicEvidence) -> set[str]:
    """Product and model names in titles the feeds still carry from before the window.

    The memory is what was collected for this brief date and the days its lookback reaches
    (a partition-pruned read): feeds carry days to years of archive, and a lab's feed most of
    all. It does not reach further back on purpose: a day's brief then does not depend on
    which other dates happen to be in the log, so backfilling older dates later (or running
    dates out of order) gives the same brief.
    """
    import polars as pl

    since = ctx.day - timedelta(days=lookback_days(ctx.settings.policy.lookback_hours))
    days = [d for d in ctx.reach if since <= d]
    recent = set(
        ctx.store.query(
            lambda: ctx.store.scan(days, event_types=["article.collected"]).select(
                pl.col("subject_id").unique()
            )
        )["subject_id"].to_list()
    )
    start = outcome.window[0]
    names: set[str] = set()
    for article_id in recent:
        item = outcome.items.get(article_id)
        if item is not None and item.published_at is not None and item.published_at < start:
            names.update(analyze.release_names(item.title, topic.versioned))
    return names


def multilingual_vectors(ctx: RunContext, items) -> dict:
    """Article id -> its multilingual vector, for the articles the run's embedder cannot read
    (none without a multilingual embedder: their embedding evidence is then undecided)."""
    foreign = [i for i in items if i.language not in editorial.ENGLISH]
    if ctx.editorial_reader is None or not foreign:
        return {}
    vectors = ctx.editorial_reader.encode([i.text for i in foreign])
    return {i.article_id: v for i, v in zip(foreign, vectors, strict=True)}


def marked_of(outcome: DedupOutcome, story) -> str | None:
    """What a person marked a story (any of its articles), if anyone did."""
    return next(
        (outcome.corrected_relevance[a] for a in story.members if a in outcome.corrected_relevance), None
    )


def mark_event(outcome: DedupOutcome, story) -> list[str]:
    """The ``article.corrected`` that holds the mark ``marked_of`` found, as a source."""
    marked = [a for a in story.members if a in outcome.corrected_relevance]
    found = outcome.corrections.get((marked[0], "relevance")) if marked else None
    return [found] if found else []


@dataclass(frozen=True)
class Reading:
    """What every story of a run is scored with: the model, the topic, and each article's vectors."""

    model: editorial.EditorialModel
    topic: editorial.TopicEvidence
    vector_of: dict  # article id -> its vector (the run's embedder)
    topic_vector: Any
    multilingual_of: dict  # article id -> its multilingual vector, for the articles not in English
    seen_products: set[str]  # ``known_products``


@dataclass(frozen=True)
class Decision:
    """One story's decision as it is taken: the model's, then a language model's, then a person's."""

    outcome: editorial.Outcome
    relevance: float
    core: float
    rank: float
    features: dict
    reasons: list[str]
    lead: bool = False


def read_day(
    ctx: RunContext, outcome: DedupOutcome, model: editorial.EditorialModel, topic: editorial.TopicEvidence
) -> Reading:
    """Embed the day's articles and the topic once, for every story's evidence."""
    policy = ctx.settings.policy
    order = sorted({a for s in outcome.stories for a in s.members})
    vectors = ctx.embedder.encode([outcome.items[a].text for a in order] + [policy.topic.description])
    return Reading(
        model,
        topic,
        dict(zip(order, vectors[:-1], strict=True)),
        vectors[-1],
        multilingual_vectors(ctx, [outcome.items[a] for a in order]),
        known_products(ctx, outcome, topic),
    )


def story_topic_evidence(ctx: RunContext, reading: Reading, items) -> dict[str, float]:
    """A story's topic evidence: each article's, with its embedding head's value, then the strongest."""
    per_article = []
    for item in items:
        vector = reading.vector_of[item.article_id]
        evidence = editorial.article_evidence(reading.topic, item, float(vector @ reading.topic_vector))
        if item.language in editorial.ENGLISH:
            evidence["emb_head"] = editorial.head_value(
                reading.model, vector, ctx.embedder.name, item.language
            )
        else:
            evidence["emb_head"] = editorial.multilingual_head_value(
                reading.model,
                reading.multilingual_of.get(item.article_id),
                ctx.editorial_reader.name if ctx.editorial_reader else None,
            )
        per_article.append(evidence)
    return editorial.story_evidence(per_article)


def importance_inputs(
    ctx: RunContext, outcome: DedupOutcome, reading: Reading, items, story_id: str
) -> editorial.ImportanceInputs:
    """What importance reads of a story beyond relevance: its outlets, names, amounts and crowd."""
    products = {name for i in items for name in analyze.release_names(i.title, reading.topic.versioned)}
    amounts = [
        float(f.value.split()[1])
        for i in items
        for f in analyze.extract_facts(i, ctx.day.year)
        if f.kind == "amount" and f.value.startswith("USD ")
    ]
    crowd = [dict(i.evidence) for i in items]
    return editorial.ImportanceInputs(
        sources={editorial.outlet_of(i) for i in items},
        earlier_sources=outcome.earlier_sources.get(story_id, set()),
        first_party=any(reading.topic.first_party(i) for i in items),
        titles=[i.title for i in items],
        products=products,
        novel_products=products - reading.seen_products,
        newest=max((i.published_at for i in items if i.published_at), default=None),
        largest_amount_usd=max(amounts, default=0.0),
        languages={i.language for i in items},
        points=max((int(e.get("points", 0)) for e in crowd), default=0),
        comments=max((int(e.get("comments", 0)) for e in crowd), default=0),
        stars_today=max((int(e.get("stars_today", 0)) for e in crowd), default=0),
    )


def legacy_importance(
    ctx: RunContext, outcome: DedupOutcome, items, inputs: editorial.ImportanceInputs
) -> float:
    """The unfitted formula of earlier versions, which the baseline model kinds rank with."""
    policy = ctx.settings.policy
    category_rules = [analyze.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
    category, _ = analyze.categorise(
        " ".join(f"{i.title} {i.title} {i.summary}" for i in items), category_rules
    )
    return analyze.importance(
        [i.source for i in items],
        {s.name: s.weight for s in ctx.settings.sources},
        {c.name: c.weight for c in policy.categories}.get(category, 0.8),
        inputs.newest,
        outcome.window[1],
        policy.lookback_hours,
    )


def model_decision(
    ctx: RunContext, outcome: DedupOutcome, reading: Reading, items, story_id: str
) -> tuple[dict[str, float], editorial.Relevance, editorial.ImportanceInputs, Decision]:
    """The model's decision on a story, with its evidence, its judgement and importance's inputs."""
    model = reading.model
    evidence = story_topic_evidence(ctx, reading, items)
    judged = editorial.judge(model, evidence)
    inputs = importance_inputs(ctx, outcome, reading, items, story_id)
    policy = ctx.settings.policy
    features = editorial.importance_features(
        reading.topic, inputs, judged, evidence, outcome.window[1], policy.lookback_hours
    )
    legacy = legacy_importance(ctx, outcome, items, inputs) if model.kind != "fitted" else 0.0
    rank = editorial.importance(model, features, legacy)
    reasons = list(judged.reasons)
    if judged.outcome == "off-topic":
        reasons.append(f"on-topic score {judged.relevance:.2f}, under {on_topic_threshold(model):.2f}")
    return (
        evidence,
        judged,
        inputs,
        Decision(judged.outcome, judged.relevance, judged.core, rank, features, reasons),
    )


def ask_language_model(
    analyst: Analyst, story_id: str, items, first_party: bool, decision: Decision
) -> Decision:
    """A language model's relevance and importance over the model's, but not over a declared on-topic
    source's post said off-topic."""
    verdict = analyst.ask("relevance", story_id, items)
    reasons = list(decision.reasons)
    if isinstance(verdict, llm.RelevanceAnswer) and verdict.outcome == "off-topic" and first_party:
        reasons.append(
            "language model said off-topic; kept: a post of a declared on-topic source or a lab's own site"
        )
    elif isinstance(verdict, llm.RelevanceAnswer):
        sure = 0.5 + verdict.confidence / 2
        relevance = sure if verdict.outcome != "off-topic" else 1 - sure
        core = relevance if verdict.outcome == "core" else min(decision.core, 0.49)
        decision = replace(decision, outcome=verdict.outcome, relevance=relevance, core=core)
        reasons.insert(0, f"language model: {verdict.outcome} ({verdict.reason[:160]})".rstrip(" ()"))
    ranked = analyst.ask("importance", story_id, items)
    if isinstance(ranked, llm.ImportanceAnswer):
        features = {**decision.features, "offline_importance": decision.rank}
        decision = replace(decision, rank=ranked.importance, features=features)
        reasons.append(f"language model importance {ranked.importance:.2f}")
    return replace(decision, reasons=reasons)


def mark(marked: str | None, decision: Decision) -> Decision:
    """A person's mark over every other decision."""
    if marked is None:
        return decision
    return replace(
        decision,
        outcome="core" if marked == "lead" else marked,  # type: ignore[arg-type]
        lead=marked == "lead",
        reasons=[f"a person marked it {marked}", *decision.reasons],
    )


def score_story(
    ctx: RunContext, outcome: DedupOutcome, reading: Reading, analyst: Analyst | None, story
) -> tuple[Scored, Any]:
    """One story's score and its ``story.scored`` (not appended yet)."""
    model = reading.model
    items = [outcome.items[a] for a in story.members]
    story_id = outcome.follow_up_of.get(story.story_id, story.story_id)
    evidence, judged, inputs, decision = model_decision(ctx, outcome, reading, items, story_id)
    marked = marked_of(outcome, story)
    instructed = any(injection.looks_like_instructions(f"{i.title} {i.summary}") for i in items)
    if analyst is not None and marked is None and instructed:
        kept = "language model not asked: a report talks to an AI system (offline decision kept)"
        decision = replace(decision, reasons=[*decision.reasons, kept])
    if analyst is not None and marked is None and not instructed:
        decision = ask_language_model(analyst, story_id, items, inputs.first_party, decision)
    decision = mark(marked, decision)
    decided = ctx.emit(
        "story.scored",
        {
            "story_id": story_id,
            "topic": reading.topic.name,
            "relevance": decision.relevance,
            "core": decision.core,
            "outcome": decision.outcome,
            "model_outcome": judged.outcome,
            "importance": decision.rank,
            "evidence": {**evidence, **{f"importance.{k}": v for k, v in decision.features.items()}},
            "reasons": decision.reasons,
            "marked_by": "human" if marked else None,
            "model": model.name,
            "representative": story.representative,
            "title": outcome.items[story.representative].title,
        },
        subject=story_id,
        producer=f"score.{model.kind}@1:{model.name}",
        sources=[
            *ctx.made("story.clustered", story_id),
            *(mark_event(outcome, story) if marked else []),
            *(analyst.used("relevance", story_id) + analyst.used("importance", story_id) if analyst else []),
        ],
    )
    scored = Scored(
        story_id,
        decision.relevance,
        decision.core,
        decision.outcome,
        decision.rank,
        decision.lead,
        {**evidence, **decision.features},
        marked is not None,
        bool(evidence["not_news"]) and model.kind == "fitted",
        decided.event_id,
    )
    return scored, decided


def score_stories(ctx: RunContext, outcome: DedupOutcome) -> dict[str, Scored]:
    """Story (clustering id) -> its score; appends one ``story.scored`` per story."""
    model = editorial.load_model(ctx.settings.policy.editorial_model)
    topic = topic_evidence(ctx)
    if not outcome.stories:
        return {}
    reading = read_day(ctx, outcome, model, topic)
    analyst = llm_analyst(ctx)
    scores: dict[str, Scored] = {}
    events = []
    for story in outcome.stories:
        scores[story.story_id], decided = score_story(ctx, outcome, reading, analyst, story)
        events.append(decided)
    ctx.append(events)
    if analyst is not None:
        analyst.flush()
    return scores
