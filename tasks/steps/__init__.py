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
from tasks.steps.context import RunContext, latest_day, make_context, refuse_future, resolve_day, today
from tasks.steps.corrections import EditorActs, correct_item, editor_acts, retract_item
from tasks.steps.dedup import DedupOutcome, briefed_before, dedup_day, embed_window, follow_ups, human_links
from tasks.steps.deliver import DeliveryOutcome, deliver_day, due_days
from tasks.steps.draft import draft, written
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
    open_questions,
    raise_questions,
    rebrief,
    recompose,
    resolve,
    same_story,
    story_link,
    two_stories,
)
from tasks.steps.score import Scored, score_stories

__all__ = [
    "BriefWithheld",
    "DedupOutcome",
    "DeliveryOutcome",
    "EditorActs",
    "Published",
    "RunContext",
    "RunReport",
    "Scored",
    "SourceOutcome",
    "absorb",
    "analyze_stories",
    "answered",
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
    "last_validators",
    "latest_day",
    "left_out",
    "make_context",
    "mark_story",
    "open_questions",
    "publish",
    "raise_questions",
    "rebrief",
    "recompose",
    "refuse_future",
    "resolve",
    "resolve_day",
    "retract_item",
    "run_gates",
    "same_story",
    "score_stories",
    "story_link",
    "today",
    "two_stories",
    "withhold",
    "withhold_if_unfit",
    "withhold_reason",
    "written",
]
