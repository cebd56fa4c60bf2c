"""Shadow runs: each daily run also decides under a candidate policy, and publishes nothing of it.

``[policy.shadow] candidate = "FILE"`` names a candidate file (the format ``brief policy adopt``
takes). After the run's own score step, ``shadow_day`` decides the day again under the candidate,
from what the run already has: the same news (the candidate's news window when its lookback
differs), the run's vectors (the embedders remember them), people's answers as the run applied
them. Only the decisions run again: the clustering when the candidate's clustering settings
differ, the follow-ups, and the relevance and importance of every story. A language model is
never asked: its answers already in the day's log are used, else the offline judgement.

The decisions are ``shadow.clustered`` and ``shadow.scored`` events (the payloads the candidate's
own ``story.clustered`` and ``story.scored`` would have had, with ``live_policy``), under the
candidate's version and the run's id, and one ``shadow.finished`` that says how many articles were
decided otherwise. No projection of the brief, nor anything reading the live policy's decisions,
reads those types. A failing shadow never fails the run.

``ops/shadow_stats.py`` compares the two (``brief stats --shadow``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from storage.events import Event, new_event, utcnow
from storage.payloads import Payload
from storage.typed import payload_of
from tasks import editorial
from tasks.pairs import load_pair_model
from tasks.settings import Settings, read_candidate
from tasks.steps.context import Capturing, RunContext
from tasks.steps.dedup import (
    DedupOutcome,
    briefed_before,
    cluster_news,
    clustering_rule,
    decided_by,
    follow_ups,
    human_links,
    producer_of,
    story_policy,
)
from tasks.steps.dedup import multilingual_vectors as dedup_vectors
from tasks.steps.score import Scored
from tasks.steps.stages import Day, between, run_stages


@dataclass(frozen=True)
class Shadow:
    file: str  # as the config names it
    settings: Settings  # the run's settings with the candidate's policy (and [llm])
    version: str


def shadow_of(configured: Settings, live: Settings) -> Shadow | None:
    """The shadow of a run whose config is ``configured`` and whose policy is ``live``'s; None
    without ``[policy.shadow]``. The file was checked when the config was loaded."""
    if configured.policy.shadow is None:
        return None
    file = configured.policy.shadow.candidate
    candidate = read_candidate(file, live, f"policy.shadow.candidate {file!r}")
    version = candidate.policy_version()
    if candidate.llm is not None:  # answers from the log only: a budget of no calls
        candidate = candidate.model_copy(
            update={"llm": candidate.llm.model_copy(update={"max_calls_per_run": 0})}
        )
    return Shadow(file, candidate, version)


def _same_clustering(live: Settings, candidate: Settings) -> bool:
    a, b = live.policy, candidate.policy
    fields = (
        "lookback_hours",
        "near_duplicate_threshold",
        "same_source_threshold",
        "min_shared_names",
        "cross_language_threshold",
        "question_margin",
        "story_model",
    )
    return all(getattr(a, f) == getattr(b, f) for f in fields)


def _recluster(own: RunContext, outcome: DedupOutcome) -> DedupOutcome:
    """The run's news clustered under the candidate's settings, with the run's vectors."""
    policy = story_policy(own)
    news = [outcome.items[a] for a in sorted({a for s in outcome.stories for a in s.members})]
    vectors = own.embedder.encode([i.text for i in news])
    multilingual = dedup_vectors(own, news)
    rule = clustering_rule(policy)
    must, cannot = human_links(own, own.reach)
    clustering = cluster_news(policy, news, vectors, must, cannot, multilingual)
    briefed = briefed_before(own)
    model = load_pair_model(policy.story_model)
    follow = follow_ups(own, clustering.stories, outcome.items, briefed, rule, model)
    continued = set(follow.values())
    earlier_sources: dict[str, set[str]] = {}
    for article_id, (story_id, _) in briefed.items():
        if story_id in continued and article_id in outcome.items:
            earlier_sources.setdefault(story_id, set()).add(editorial.outlet_of(outcome.items[article_id]))
    producer = f"{producer_of(policy)}:{own.embedder.name}"
    if multilingual is not None and own.multilingual is not None:
        producer += f"+{own.multilingual.name}"
    own.append(
        [
            own.emit(
                "story.clustered",
                {
                    "story_id": follow.get(story.story_id, story.story_id),
                    "members": list(story.members),
                    "representative": story.representative,
                    "follow_up_of": follow.get(story.story_id),
                    "pair_scores": [list(p) for p in story.pair_scores],
                    "decided_by": decided_by(policy),
                },
                subject=follow.get(story.story_id, story.story_id),
                producer=producer,
            )
            for story in clustering.stories
        ]
    )
    return dataclasses.replace(
        outcome,
        stories=clustering.stories,
        follow_up_of=follow,
        borderline=clustering.borderline,
        earlier_sources=earlier_sources,
    )


def _kept_clustering(own: RunContext, outcome: DedupOutcome) -> DedupOutcome:
    """The run's own clustering, when the candidate clusters as the live policy does."""
    own.append(
        [
            own.emit(
                "story.clustered",
                {
                    "story_id": outcome.follow_up_of.get(story.story_id, story.story_id),
                    "members": list(story.members),
                    "representative": story.representative,
                    "follow_up_of": outcome.follow_up_of.get(story.story_id),
                    "pair_scores": [list(p) for p in story.pair_scores],
                },
                subject=outcome.follow_up_of.get(story.story_id, story.story_id),
                producer="shadow@1:the run's clustering",
            )
            for story in outcome.stories
        ]
    )
    return outcome


# --- what differs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Decisions:
    """One policy's decisions of one day: each story's members, outcome and importance."""

    members: dict[str, tuple[str, ...]]  # story id -> its articles
    outcome: dict[str, str]  # story id -> core / related / off-topic
    importance: dict[str, float]

    def story_of(self) -> dict[str, str]:
        return {a: s for s, members in self.members.items() for a in members}

    def top(self, n: int) -> set[str]:
        """The articles of the ``n`` most important core stories (the brief's top section, roughly)."""
        core = sorted(
            (s for s, o in self.outcome.items() if o == "core"), key=lambda s: (-self.importance[s], s)
        )
        return {a for s in core[:n] for a in self.members[s]}


def decisions_of(outcome: DedupOutcome, scores: Mapping[str, Scored]) -> Decisions:
    members: dict[str, tuple[str, ...]] = {}
    outcomes: dict[str, str] = {}
    importance: dict[str, float] = {}
    for story in outcome.stories:
        scored = scores[story.story_id]
        members[scored.story_id] = story.members
        outcomes[scored.story_id] = scored.outcome
        importance[scored.story_id] = scored.importance
    return Decisions(members, outcomes, importance)


def differences(live: Decisions, candidate: Decisions, top: int) -> dict[str, int]:
    """Articles decided otherwise: relevance (their story's outcome), clustering (the articles they
    are grouped with) and top (among the ``top`` most important core stories under one only)."""
    ours, theirs = live.story_of(), candidate.story_of()
    both = ours.keys() & theirs.keys()
    relevance = sum(live.outcome[ours[a]] != candidate.outcome[theirs[a]] for a in both)
    clustering = sum(set(live.members[ours[a]]) != set(candidate.members[theirs[a]]) for a in both)
    return {
        "relevance": relevance,
        "clustering": clustering,
        "top": len(live.top(top) ^ candidate.top(top)),
    }


# --- the run's hook -------------------------------------------------------------------------


ROOM = 62  # a run's step line is 80 columns: 18 of them for the step's name and time
SHORT = 8  # a candidate named by the first characters of its version, as run ids are


def said(version: str, kept: int, stories: int, differed: Mapping[str, int]) -> str:
    """What the shadow step decided, in at most ``ROOM`` columns: stories kept, then the articles
    decided otherwise, in fewer words when the counts are long (``brief stats --shadow`` has all)."""
    name, share = version[:SHORT], f"{kept}/{stories} kept"
    r, c, t = differed["relevance"], differed["clustering"], differed["top"]
    if not (r or c or t):
        return f"{name}: {share}, every decision as the live policy's"
    each = f"{r} relevance, {c} clustering, {t} top differ"
    for line in (f"{name}: {share}; {each}", f"{share}; {each}", f"{share}; {r + c + t} decisions differ"):
        if len(line) <= ROOM:
            return line
    return line[: ROOM - 1] + "…"


@dataclass(frozen=True)
class ShadowOutcome:
    line: str  # the run's shadow step line (at most ``ROOM`` columns)
    events: int = 0
    differed: dict[str, int] = field(default_factory=dict)
    error: str | None = None


def shadow_day(
    ctx: RunContext, shadow: Shadow, outcome: DedupOutcome, scores: Mapping[str, Scored]
) -> ShadowOutcome:
    """Decide the day under the candidate and append its decisions; never raises (a candidate that
    fails leaves the run as it was, and says why)."""
    if shadow.version == ctx.policy_version:
        return ShadowOutcome(f"{shadow.version[:SHORT]} is the policy in force: nothing to compare")
    started = time.perf_counter()
    try:
        # the run's context under the candidate: what it would append is kept (``captured``), not
        # stored; its record of what it made is its own, as the shadow's events are stored under
        # other ids, so the live steps after it must not name them
        recorder = Capturing()
        own = ctx.under(shadow.settings, recorder)
        clustered: DedupOutcome | None = None  # another news window: the day decided afresh from the log
        if _same_clustering(ctx.settings, shadow.settings):
            clustered = _kept_clustering(own, outcome)
        elif own.settings.policy.lookback_hours == ctx.settings.policy.lookback_hours:
            clustered = _recluster(own, outcome)
        first = "dedup" if clustered is None else "score"
        day = run_stages(own, between(first, "score"), Day(clustered))
        decided, shadow_scores = day.deduped(), day.scores
        found = decisions_of(decided, shadow_scores)
        differed = differences(decisions_of(outcome, scores), found, ctx.settings.policy.top_stories)
        events = [_shadow_event(e, ctx, shadow) for e in recorder.captured if e.event_type in _AS_SHADOW]
        kept = sum(o != "off-topic" for o in found.outcome.values())
        events.append(
            new_event(
                "shadow.finished",
                {
                    "candidate": shadow.version,
                    "file": shadow.file,
                    "live_policy": ctx.policy_version,
                    "articles": len(found.story_of()),
                    "stories": len(found.members),
                    "kept": kept,
                    "differed": differed,
                    "seconds": round(time.perf_counter() - started, 3),
                },
                brief_date=ctx.day,
                run_id=ctx.run_id,
                subject_id=f"policy-{shadow.version}",
                produced_by="shadow@1",
                occurred_at=utcnow(),
                policy_version=shadow.version,
            )
        )
        ctx.append(events)
    except Exception as exc:  # the candidate's failure is not the run's
        failed = (
            f"{shadow.version[:SHORT]} failed ({type(exc).__name__}), the brief is unaffected; see the log"
        )
        return ShadowOutcome(
            failed if len(failed) <= ROOM else failed[: ROOM - 1] + "…",
            error=f"{type(exc).__name__}: {exc}",
        )
    return ShadowOutcome(said(shadow.version, kept, len(found.members), differed), len(events), differed)


_AS_SHADOW = {"story.clustered": "shadow.clustered", "story.scored": "shadow.scored"}
SHADOW_TYPES = ("shadow.clustered", "shadow.scored")


def _shadow_event(event: Event, ctx: RunContext, shadow: Shadow) -> Event:
    return new_event(
        _AS_SHADOW[event.event_type],
        {**payload_of(event, Payload).model_dump(mode="json"), "live_policy": ctx.policy_version},
        brief_date=event.brief_date,
        run_id=ctx.run_id,
        subject_id=event.subject_id,
        produced_by=event.produced_by,
        occurred_at=event.occurred_at,
        seq=event.seq,
        source_event_ids=event.source_event_ids,
        policy_version=shadow.version,
    )
