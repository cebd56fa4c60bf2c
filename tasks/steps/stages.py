"""The one place the day's decisions are sequenced: ``STAGES``, in order, each a plain function.

A stage reads what the stages before it made (a ``Day``), adds what it makes and says what it did
in a line. The daily flow runs them as Prefect tasks (between collecting and publishing); a
re-brief runs them all (``recompose``), and replays run the slice they need: evaluation and the
regression set to the written draft (``draft``), learning to the scores.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from storage.brief import Brief
from storage.events import Event
from storage.store.pending import WithPending
from tasks import factcheck
from tasks.nouns import counted
from tasks.steps.analyze import analyze_stories, left_out
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome, dedup_day
from tasks.steps.draft import written
from tasks.steps.gate import run_gates
from tasks.steps.publish import Published, day_lock, publish, withhold, withhold_reason
from tasks.steps.review import raise_questions
from tasks.steps.score import Scored, score_stories


@dataclass
class Day:
    """What a day's stages have made so far (each stage fills its own fields)."""

    outcome: DedupOutcome | None = None  # dedup: the window's news in stories
    scores: dict[str, Scored] = field(default_factory=dict)  # score: each story's relevance, importance
    off_topic: int = 0  # score: stories the topic filter left out
    analyses: list[dict] = field(default_factory=list)  # analyze
    document: Brief | None = None  # factcheck (written and checked), then gate (gated)
    findings: list[factcheck.Finding] = field(default_factory=list)  # factcheck: claims not found
    asked: dict[str, int] = field(default_factory=dict)  # questions: asked, applied
    gates: list = field(default_factory=list)  # gate: the suites' results

    def deduped(self) -> DedupOutcome:
        if self.outcome is None:
            raise RuntimeError("the dedup stage has not run for this day")
        return self.outcome

    def drafted(self) -> Brief:
        if self.document is None:
            raise RuntimeError("the factcheck stage has not written this day's document")
        return self.document


@dataclass(frozen=True)
class Stage:
    name: str  # the run report's step
    run: Callable[[RunContext, Day], str]  # fills its part of the day, says what it did


def dedup(ctx: RunContext, day: Day) -> str:
    day.outcome = o = dedup_day(ctx)
    return (
        f"{counted(o.news, 'new article')} in {counted(len(o.stories), 'story', 'stories')} "
        f"({counted(o.duplicates, 'duplicate')})"
    )


def score(ctx: RunContext, day: Day) -> str:
    day.scores = score_stories(ctx, day.deduped())
    day.off_topic = left_out(day.scores)
    topic = ctx.settings.policy.topic.name
    on = counted(len(day.scores) - day.off_topic, "story", "stories")
    return f"{on} on {topic}, {day.off_topic} left out"


def analyze(ctx: RunContext, day: Day) -> str:
    day.analyses = analyze_stories(ctx, day.deduped(), day.scores)
    return f"{counted(len(day.analyses), 'story', 'stories')} analysed"


def write(ctx: RunContext, day: Day) -> str:
    """Compose and fact-check the document, then people's corrections and retractions (their words
    are theirs: not fact-checked against sources)."""
    day.document, day.findings = written(ctx, day.deduped(), day.analyses, day.off_topic)
    return (
        f"{counted(len(day.drafted().items), 'item')} written, "
        f"{counted(len(day.findings), 'claim')} not found in their sources"
    )


def questions(ctx: RunContext, day: Day) -> str:
    day.asked = raise_questions(ctx, day.deduped(), day.drafted(), day.findings, day.scores)
    return f"{counted(day.asked['asked'], 'question')} for review, {day.asked['applied']} answered before"


def gate(ctx: RunContext, day: Day) -> str:
    day.document, day.gates = run_gates(ctx, day.deduped(), day.drafted())
    quarantined = sum(len(r.quarantined) for r in day.gates)
    return f"{sum(r.success for r in day.gates)} of {len(day.gates)} suites passed, " + (
        f"{counted(quarantined, 'row')} quarantined" if quarantined else "nothing quarantined"
    )


STAGES: tuple[Stage, ...] = (
    Stage("dedup", dedup),
    Stage("score", score),
    Stage("analyze", analyze),
    Stage("factcheck", write),
    Stage("questions", questions),
    Stage("gate", gate),
)


def between(first: str, last: str, stages: Sequence[Stage] = STAGES) -> tuple[Stage, ...]:
    """The stages from ``first`` to ``last``, both included, in their order."""
    names = [s.name for s in stages]
    return tuple(stages[names.index(first) : names.index(last) + 1])


def run_stages(ctx: RunContext, stages: Sequence[Stage], day: Day | None = None) -> Day:
    """Run ``stages`` in order on ``day`` (a new one by default); what they made."""
    day = day if day is not None else Day()
    for stage in stages:
        stage.run(ctx, day)
    return day


def draft(ctx: RunContext, outcome: DedupOutcome) -> tuple[Brief, list[factcheck.Finding], dict[str, Scored]]:
    """Score, analyze, compose and fact-check: the day's checked draft from its dedup outcome."""
    day = run_stages(ctx, between("score", "factcheck"), Day(outcome))
    return day.drafted(), day.findings, day.scores


def recompose(ctx: RunContext) -> Brief:
    """The day's brief document again from stored facts and answers (no collection): every stage,
    gated; a brief not fit to send is withheld (``BriefWithheld``)."""
    document = run_stages(ctx, STAGES).drafted()
    reason = withhold_reason(ctx, document, 0, [])  # no collection here: only the core count
    if reason:
        raise withhold(ctx, document, 0, [], reason)
    return document


def rebrief(ctx: RunContext) -> Published:
    """The day's brief again from stored facts and answers (no collection); a new version if it
    changed. Composed and published under the day's lock: from every act recorded before it."""
    with day_lock(ctx.store, ctx.day):
        return publish(ctx, recompose(ctx))


@dataclass(frozen=True)
class Composition:
    """The day's brief composed as if an act's events were recorded, none of them written yet:
    the ``document``, why it could not be published (``unfit``; None: it can be), and the act's
    events with every event composing it made, pending in ``log`` until ``publish_composition``."""

    document: Brief
    unfit: str | None
    log: WithPending


def compose_with(ctx: RunContext, events: Sequence[Event]) -> Composition:
    """The day's brief from the log and ``events`` (an act's, not written yet): every stage run on
    a log that holds them and keeps what the stages append in memory, so that an act after which
    the brief could not be published (fewer core stories than ``[delivery] min_core``) is refused
    with nothing written, and one that can be is published from this one composition."""
    log = WithPending(ctx.store, events)
    composing = dataclasses.replace(ctx, resources=dataclasses.replace(ctx.resources, store=log))
    document = run_stages(composing, STAGES).drafted()
    return Composition(document, withhold_reason(composing, document, 0, []), log)


def publish_composition(ctx: RunContext, composition: Composition) -> Published:
    """Write the composition's pending events (the act's first, then the stages', batch by batch)
    and publish its brief: one composition checked and published, under the day's lock."""
    if composition.unfit is not None:
        raise RuntimeError(f"an unfit composition is refused, never published: {composition.unfit}")
    with day_lock(ctx.store, ctx.day):
        composition.log.commit()
        return publish(ctx, composition.document)
