"""The daily run's steps as plain functions over the store: what the Prefect tasks call.

Each step reads what it needs from the event log, decides with the pure functions of
``tasks.dedup`` / ``tasks.analyze`` / ``tasks.factcheck`` / ``tasks.write``, and appends its events.
"""

from tasks.steps.analyze import analyze_stories, left_out
from tasks.steps.answers import answered
from tasks.steps.collect import (
    SourceOutcome,
    absorb,
    collect_lookback,
    collect_one,
    collect_sources,
    fetch_one,
    last_validators,
)
from tasks.steps.compose import compose, injection_flags
from tasks.steps.context import (
    LIVE,
    SYSTEM_CLOCK,
    Capturing,
    Clock,
    Dry,
    FixedClock,
    Recorder,
    Resources,
    RunContext,
    RunIdentity,
    bootstrap,
    latest_day,
    make_context,
    open_run,
    refuse_future,
    resolve_day,
    today,
)
from tasks.steps.corrections import EditorActs, correct_item, editor_acts, restore_item, retract_item
from tasks.steps.dedup import DedupOutcome, briefed_before, dedup_day, embed_window, follow_ups, human_links
from tasks.steps.deliver import DeliveryOutcome, deliver_day, due_days, updates_due
from tasks.steps.draft import written
from tasks.steps.factcheck import check_draft
from tasks.steps.gate import run_gates
from tasks.steps.publish import (
    BriefWithheld,
    Published,
    day_lock,
    publish,
    withhold,
    withhold_if_unfit,
    withhold_reason,
)
from tasks.steps.report import RunReport
from tasks.steps.review import (
    mark_story,
    members_of,
    open_questions,
    raise_questions,
    resolve,
    same_story,
    settle_relevance,
    settle_same_story,
    story_link,
    two_stories,
)
from tasks.steps.score import Scored, score_stories
from tasks.steps.stages import STAGES, Day, Stage, between, draft, rebrief, recompose, run_stages, unfit_with
from tasks.steps.unchanged import Settled, inputs_digest, record_inputs, record_unchanged, settled

__all__ = [
    "LIVE",
    "STAGES",
    "SYSTEM_CLOCK",
    "BriefWithheld",
    "Capturing",
    "Clock",
    "Day",
    "DedupOutcome",
    "DeliveryOutcome",
    "Dry",
    "EditorActs",
    "FixedClock",
    "Published",
    "Recorder",
    "Resources",
    "RunContext",
    "RunIdentity",
    "RunReport",
    "Scored",
    "Settled",
    "SourceOutcome",
    "Stage",
    "absorb",
    "analyze_stories",
    "answered",
    "between",
    "bootstrap",
    "briefed_before",
    "check_draft",
    "collect_lookback",
    "collect_one",
    "collect_sources",
    "compose",
    "correct_item",
    "day_lock",
    "dedup_day",
    "deliver_day",
    "draft",
    "due_days",
    "editor_acts",
    "embed_window",
    "fetch_one",
    "follow_ups",
    "human_links",
    "injection_flags",
    "inputs_digest",
    "last_validators",
    "latest_day",
    "left_out",
    "make_context",
    "mark_story",
    "members_of",
    "open_questions",
    "open_run",
    "publish",
    "raise_questions",
    "rebrief",
    "recompose",
    "record_inputs",
    "record_unchanged",
    "refuse_future",
    "resolve",
    "resolve_day",
    "restore_item",
    "retract_item",
    "run_gates",
    "run_stages",
    "same_story",
    "score_stories",
    "settle_relevance",
    "settle_same_story",
    "settled",
    "story_link",
    "today",
    "two_stories",
    "unfit_with",
    "updates_due",
    "withhold",
    "withhold_if_unfit",
    "withhold_reason",
    "written",
]
