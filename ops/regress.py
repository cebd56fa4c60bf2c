"""The regression set: decisions frozen with the facts needed to replay them, which every policy
adopted after them must keep.

A case (``regression.case_added``, a fact in the stream of its brief date) says what a policy must
decide about one story of one day: ``off-topic``, ``related``, ``core`` (its on-topic outcome),
``lead`` (the brief's first item), or ``same-as`` / ``not-same`` another story (clustered together,
or apart). A story stands for one article, its ``anchor`` (the article or link named, else the
story's representative), so a replay finds it whatever story ids another clustering gives.

Freezing copies the events a replay of that day reads (``FROZEN_TYPES`` over the days a run of it
reads, and the earlier briefs it may repeat or continue) into one content-addressed file under the
root (``storage/blobs.py``): cases of one day frozen with nothing new between them share it, and a
replay needs none of the day's partitions. Replaying a day is the run's own stages, dedup to
factcheck, over those events in memory (a ``Dry`` recorder), with people's marks and same-story answers
held out as ``brief evaluate`` holds them out: a case made from a correction is then a real test.
"""

from __future__ import annotations

import dataclasses
import io
import uuid
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import polars as pl

from storage.errors import InputError
from storage.events import Event, event_from_row, new_event, short_hash, utcnow
from storage.payloads import (
    EXPECTATIONS,
    ArticleCorrected,
    FrozenFacts,
    Payload,
    RegressionCaseAdded,
    StoryClustered,
    StoryMerged,
    StorySplit,
)
from storage.store import ParquetEventStore
from storage.store.base import events_to_segment, read_segments
from storage.typed import payload_of
from tasks.nouns import counted
from tasks.settings import Settings

if TYPE_CHECKING:
    from tasks.steps import Resources

PRODUCER = "regress@1"
FROZEN_TYPES = ("article.collected", "article.corrected")  # over the days a run of the date reads
EARLIER_BRIEFS = ("brief.published", "story.clustered")  # the earlier days' published stories
PAIRED = ("same-as", "not-same")


# --- naming a case --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Expectation:
    kind: str
    other: str | None = None  # same-as / not-same: the other story's key


def parse_expectation(text: str) -> Expectation:
    """``off-topic``, ``related``, ``core``, ``lead``, ``same-as:S2`` or ``not-same:S2``."""
    kind, sep, other = text.strip().partition(":")
    usage = "off-topic, related, core, lead, same-as:STORY or not-same:STORY"
    if kind not in EXPECTATIONS:
        raise InputError(f"--expect {text!r} is not an expectation; give {usage}")
    if kind in PAIRED and not other.strip():
        raise InputError(f"--expect {text!r} names no other story; give {kind}:STORY (a story id or link)")
    if kind not in PAIRED and sep:
        raise InputError(f"--expect {text!r}: only same-as and not-same name another story")
    return Expectation(kind, other.strip() or None)


@dataclasses.dataclass(frozen=True)
class Found:
    story_id: str
    anchor: str
    members: list[str]


def _reach(settings: Settings, day: date) -> list[date]:
    from tasks.steps.context import read_days

    return [day - timedelta(days=k) for k in range(read_days(settings.policy.lookback_hours), -1, -1)]


def day_stories(store: ParquetEventStore, day: date) -> list[Event]:
    """The day's stories as its latest brief that was clustered has them (its run's
    ``story.clustered``; a purge publishes without clustering again), else as the latest run that
    clustered the day has them."""
    events = store.read([day], event_types=["brief.published", "story.clustered"])
    clustered = [e for e in events if e.event_type == "story.clustered"]
    if not clustered:
        raise InputError(f"no stories on {day}; run or backfill that date first ('brief run --date {day}')")
    runs = {e.run_id for e in clustered}
    published = [e.run_id for e in events if e.event_type == "brief.published" and e.run_id in runs]
    run = published[-1] if published else clustered[-1].run_id
    return [e for e in clustered if e.run_id == run]


def find(store: ParquetEventStore, settings: Settings, day: date, key: str, stories: list[Event]) -> Found:
    """The story a key names on ``day``: a story id (anchored on its representative), or an article
    id or link (anchored on that article)."""
    for e in stories:
        story = payload_of(e, StoryClustered)
        if story.story_id == key:
            return Found(key, story.representative, list(story.members))
    hits = _articles_named(store, settings, day, key)
    for e in stories:
        story = payload_of(e, StoryClustered)
        inside = [a for a in story.members if a in hits]
        if inside:
            return Found(story.story_id, inside[0], list(story.members))
    if hits:
        raise InputError(
            f"article {key!r} was not news on {day}: no story of that day holds it; "
            "name a story of that day's brief"
        )
    raise InputError(
        f"no story, article or link {key!r} on {day}; "
        f"'brief events --type story.scored --date {day}' lists the day's stories"
    )


def _articles_named(store: ParquetEventStore, settings: Settings, day: date, key: str) -> set[str]:
    """Articles of the days a run of ``day`` reads whose id, link or canonical link is ``key``."""
    from storage.projections import materialize

    frame = materialize(store, "articles", days=_reach(settings, day))
    named = (pl.col("article_id") == key) | (pl.col("url") == key) | (pl.col("canonical_url") == key)
    return set(frame.filter(named)["article_id"].to_list())


# --- freezing -------------------------------------------------------------------------------


def freeze(store: ParquetEventStore, settings: Settings, day: date) -> dict[str, Any]:
    """Copy the events a replay of ``day`` reads into one blob under the root; its description."""
    reach = _reach(settings, day)
    facts = store.read(reach, event_types=list(FROZEN_TYPES))
    earlier = store.read([d for d in reach if d < day], event_types=list(EARLIER_BRIEFS))
    published = {(e.run_id, e.brief_date) for e in earlier if e.event_type == "brief.published"}
    briefs = [e for e in earlier if (e.run_id, e.brief_date) in published]
    llm = store.read([day], event_types=["llm.called"])  # a policy with the same prompts replays its answers
    events = sorted(facts + briefs + llm, key=lambda e: (e.brief_date, e.occurred_at, e.seq, e.event_id))
    data = events_to_segment(events).to_pybytes()
    digest, path = store.tree.blobs.put(data, ".events")
    return {
        "digest": digest,
        "path": path,
        "events": len(events),
        "first_day": reach[0].isoformat(),
        "last_day": day.isoformat(),
    }


def thaw(store: ParquetEventStore, facts: FrozenFacts | Mapping[str, Any]) -> list[Event]:
    """The frozen events of a case (its ``facts``, model or stored), checked against their digest."""
    frozen = facts if isinstance(facts, FrozenFacts) else FrozenFacts.model_validate(facts)
    data = store.tree.blobs.get(frozen.path)
    frame = read_segments([io.BytesIO(data)]).collect()
    return [event_from_row(row) for row in frame.iter_rows(named=True)]


def add_case(
    settings: Settings,
    store: ParquetEventStore,
    day: date,
    key: str,
    expectation: Expectation,
    by: str,
    note: str = "",
    via: str | None = None,
    correction: str | None = None,
) -> tuple[Event, bool]:
    """Freeze a case; (its event, whether it is new: the same case again writes nothing)."""
    stories = day_stories(store, day)
    story = find(store, settings, day, key, stories)
    other = None
    if expectation.other is not None:
        other = find(store, settings, day, expectation.other, stories)
        if other.anchor == story.anchor:
            raise InputError(
                f"--expect {expectation.kind}:{expectation.other} names the same article as --story {key}; "
                "name two different stories"
            )
    case_id = "case-" + short_hash(
        day.isoformat(), expectation.kind, story.anchor, other.anchor if other else "", size=12
    )
    known = store.read([day], event_types=["regression.case_added"])
    for case in known:
        if payload_of(case, RegressionCaseAdded).case_id == case_id:
            return case, False  # kept forever as it was first frozen
    for case in known:
        if _contradicts(case, expectation.kind, story, other):
            kept = payload_of(case, RegressionCaseAdded)
            raise Contradiction(
                f"--expect {expectation.kind} contradicts case {kept.case_id} (added by "
                f"{kept.by}), which expects {_expected(case)} for {_named(case, story)} on {day}: "
                f"no policy can keep both; a case cannot be removed or replaced yet, so "
                f"{kept.case_id} stands (a policy that breaks it is adopted only with --force)",
                case,
            )
    payload = {
        "case_id": case_id,
        "expect": expectation.kind,
        "key": key,
        "story_id": story.story_id,
        "anchor": story.anchor,
        "members": story.members,
        "other_key": expectation.other,
        "other_story_id": other.story_id if other else None,
        "other_anchor": other.anchor if other else None,
        "other_members": other.members if other else [],
        "facts": freeze(store, settings, day),
        "by": by,
        "note": " ".join(note.split()),
        "via": via,
        "correction": correction,
    }
    event = new_event(
        "regression.case_added",
        payload,
        brief_date=day,
        run_id=f"regress-{utcnow():%Y%m%dT%H%M%S%f}",
        subject_id=case_id,
        produced_by=PRODUCER,
        occurred_at=utcnow(),
        source_event_ids=[correction] if correction else [],
    )
    written = store.append([event]).written
    return event, bool(written)


class Contradiction(InputError):
    """A new case expects what an existing case of the same story (or pair) rules out."""

    def __init__(self, message: str, case: Event) -> None:
        super().__init__(message)
        self.case = case


OUTCOMES = ("off-topic", "related", "core")  # a story has one of these outcomes
ONLY_CORE_LEADS = {("lead", "off-topic"), ("lead", "related")}


def _contradicts(case: Event, kind: str, story: Found, other: Found | None) -> bool:
    """Whether ``case`` and a new expectation about ``story`` (and ``other``) could never both pass:
    two outcomes of one story; a lead that is not core; one pair both same-as and not-same (in
    either order). A story is the same when its anchor or its story id is."""
    p = payload_of(case, RegressionCaseAdded)
    if p.expect == kind:
        return False
    if kind in PAIRED or p.expect in PAIRED:
        if other is None or p.expect not in PAIRED:
            return False
        pairs = ({p.anchor, p.other_anchor}, {p.story_id, p.other_story_id})
        return {story.anchor, other.anchor} == pairs[0] or {story.story_id, other.story_id} == pairs[1]
    if p.anchor != story.anchor and p.story_id != story.story_id:
        return False
    return (kind in OUTCOMES and p.expect in OUTCOMES) or tuple(sorted((kind, p.expect))) in ONLY_CORE_LEADS


def _named(case: Event, story: Found) -> str:
    p = payload_of(case, RegressionCaseAdded)
    if p.expect in PAIRED:
        return f"the pair {p.story_id}, {p.other_story_id}"
    return f"story {p.story_id}" + (f" (article {p.anchor})" if p.story_id != story.story_id else "")


def cases(store: ParquetEventStore) -> list[Event]:
    """Every case, oldest first (each once: the same case added again is the same event)."""
    return store.read(event_types=["regression.case_added"])


# --- replaying ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Result:
    case: Event
    passed: bool
    got: str  # what the policy decided, in words


@dataclasses.dataclass(frozen=True)
class Replayed:
    """One day's decisions under one policy."""

    story_of: dict[str, tuple[str, ...]]  # article -> the members of its story
    scores: dict[tuple[str, ...], Any]  # story members -> its ``Scored``
    lead: str | None  # the first item's story id


def replay_day(settings: Settings, resources: Resources, day: date, events: Sequence[Event]) -> Replayed:
    """Dedup, score and compose ``day`` from frozen events under ``settings``' policy; nothing is written
    (the caller's models, when ``settings`` name the same ones; the embedders' caches are the root's)."""
    from tasks import steps

    frozen = ParquetEventStore(
        f"memory://regress-{uuid.uuid4().hex}"
    )  # the frozen events, a store of their own
    try:
        frozen.append(list(events))
        replaying = resources.for_settings(settings).with_store(frozen)
        run = f"regress-{settings.policy_version()}"
        # the cases' judgements are people's: held out, as evaluate holds them out
        ctx = steps.open_run(replaying, settings, day, run, recorder=steps.Dry(), held_out=True)
        decided = steps.run_stages(ctx, steps.between("dedup", "factcheck"))
        outcome, document, scores = decided.deduped(), decided.drafted(), decided.scores
    finally:
        frozen.tree.remove()
    story_of = {a: s.members for s in outcome.stories for a in s.members}
    by_members = {s.members: scores[s.story_id] for s in outcome.stories}
    items = document.items
    return Replayed(story_of, by_members, items[0].story_id if items else None)


def judge(case: Event, replayed: Replayed) -> Result:
    """Whether the replayed decisions keep the case."""
    p = payload_of(case, RegressionCaseAdded)
    members = replayed.story_of.get(p.anchor)
    if members is None:
        return Result(case, p.expect == "off-topic", "not news under this policy")
    scored = replayed.scores[members]
    if p.expect in PAIRED:
        others = replayed.story_of.get(p.other_anchor) if p.other_anchor is not None else None
        together = others is not None and others == members
        got = "one story" if together else "two stories"
        return Result(case, together == (p.expect == "same-as"), got)
    if p.expect == "lead":
        lead = replayed.lead == scored.story_id
        return Result(case, lead, "leads" if lead else f"{scored.outcome}, not the lead")
    return Result(case, scored.outcome == p.expect, f"{scored.outcome} (on-topic {scored.relevance:.2f})")


def replay(
    settings: Settings,
    resources: Resources,
    found: Sequence[Event],
    progress: Callable[[date, int], None] | None = None,
) -> list[Result]:
    """Every case under ``settings``' policy, one replay per frozen day, each with the caller's
    models; in the order given."""
    store = resources.store
    groups: dict[tuple[date, str], list[Event]] = defaultdict(list)
    for case in found:
        groups[(case.brief_date, payload_of(case, RegressionCaseAdded).facts.path)].append(case)
    results: dict[str, Result] = {}
    for (day, _), members in sorted(groups.items()):
        if progress is not None:
            progress(day, len(members))
        replayed = replay_day(
            settings, resources, day, thaw(store, payload_of(members[0], RegressionCaseAdded).facts)
        )
        for case in members:
            results[case.event_id] = judge(case, replayed)
    return [results[c.event_id] for c in found]


# --- the adoption gate ----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Gate:
    current: list[Result]
    candidate: list[Result]

    @property
    def broken(self) -> list[Result]:
        """Cases the candidate fails and the policy in force passes."""
        return [c for a, c in zip(self.current, self.candidate, strict=True) if a.passed and not c.passed]

    def record(self, forced: bool) -> dict[str, Any]:
        """The ``regression`` of a ``policy.adopted`` payload."""
        return {
            "cases": len(self.candidate),
            "passed_current": sum(r.passed for r in self.current),
            "passed_candidate": sum(r.passed for r in self.candidate),
            "broken": [payload_of(r.case, RegressionCaseAdded).case_id for r in self.broken],
            "forced": forced,
        }


def gate(
    current: Settings,
    candidate: Settings,
    resources: Resources,
    progress: Callable[[str, date, int], None] | None = None,
) -> Gate | None:
    """The regression set under the policy in force and under a candidate; None without cases."""
    found = cases(resources.store)
    if not found:
        return None

    def said(name: str) -> Callable[[date, int], None] | None:
        return None if progress is None else (lambda day, n: progress(name, day, n))

    return Gate(
        replay(current, resources, found, said("current")),
        replay(candidate, resources, found, said("candidate")),
    )


def refusal(check: Gate) -> str:
    """One line: what the candidate breaks, and how to adopt it all the same."""
    broken = check.broken
    named = ", ".join(
        f"{payload_of(r.case, RegressionCaseAdded).case_id} ({r.case.brief_date} "
        f"{payload_of(r.case, RegressionCaseAdded).story_id} "
        f"expected {_expected(r.case)}, got {r.got})"
        for r in broken[:3]
    )
    more = f" and {len(broken) - 3} more" if len(broken) > 3 else ""
    return (
        f"the candidate fails {counted(len(broken), 'regression case')} "
        f"the policy in force passes: {named}{more}; "
        "'brief evaluate --regression --policy FILE' lists them; adopt anyway with --force --reason \"…\""
    )


def _expected(case: Event) -> str:
    p = payload_of(case, RegressionCaseAdded)
    return f"{p.expect}:{p.other_story_id}" if p.expect in PAIRED else p.expect


def describe_case(case: Event) -> dict[str, str]:
    """A case as a row for a person."""
    p = payload_of(case, RegressionCaseAdded)
    return {
        "case": p.case_id,
        "date": case.brief_date.isoformat(),
        "story": p.story_id,
        "expected": _expected(case),
        "by": p.by,
        "note": p.note,
    }


def describe(result: Result) -> dict[str, str]:
    """A result as a row for a person (the case's, with what the policy got)."""
    row = describe_case(result.case)
    by, note = row.pop("by"), row.pop("note")
    return {**row, "got": result.got, "by": by, "note": note}


CORRECTIONS = ("article.corrected", "story.merged", "story.split")


def cases_of_corrections(
    settings: Settings,
    store: ParquetEventStore,
    corrections: Sequence[Event],
    by: str,
    refused: list[str] | None = None,
) -> list[Event]:
    """Cases made from people's corrections of decisions, once they are in the log: a relevance mark
    (its mark is the expectation), a same-story answer (``same-as``), a two-stories answer
    (``not-same``), each pair of articles it names. Other corrections (a headline, a publish time)
    are not a decision a policy takes, and make none. Each case names its correction as its source.
    A case that would contradict one in the set is not made; ``refused`` gets why."""
    made = []
    for correction in corrections:
        act = payload_of(correction, Payload)  # who and where, read where the type has them
        if correction.event_type == "article.corrected":
            mark = payload_of(correction, ArticleCorrected)
            if mark.field != "relevance" or mark.value is None:
                continue
            wanted = [(mark.article_id, Expectation(mark.value))]
        elif correction.event_type in ("story.merged", "story.split"):
            merged = correction.event_type == "story.merged"
            kind = "same-as" if merged else "not-same"
            link = payload_of(correction, StoryMerged) if merged else payload_of(correction, StorySplit)
            first, *rest = link.article_ids
            wanted = [(first, Expectation(kind, other)) for other in rest]
        else:
            continue
        who = getattr(act, "person", None) or getattr(act, "by", None) or by
        note = getattr(act, "reason", None) or f"from {correction.event_type} by {who}"
        for key, expectation in wanted:
            try:
                event, _ = add_case(
                    settings,
                    store,
                    correction.brief_date,
                    key,
                    expectation,
                    by,
                    note,
                    via=getattr(act, "via", None) or "review",
                    correction=correction.event_id,
                )
            except Contradiction as why:  # the correction is recorded; the case it contradicts stands
                if refused is not None:
                    refused.append(str(why))
                continue
            made.append(event)
    return made
