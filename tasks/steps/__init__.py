"""The daily run's steps as plain functions over the store: what the Prefect tasks call.

Each step reads what it needs from the event log, decides with the pure functions of
``tasks.dedup`` / ``tasks.analyze`` / ``tasks.factcheck`` / ``tasks.write``, and appends its events.
"""

from tasks.steps.answers import answered
from tasks.steps.brief import (
    Published,
    analyze_stories,
    compose,
    draft,
    factcheck,
    gate,
    injection_flags,
    left_out,
    publish,
)
from tasks.steps.collect import SourceOutcome, collect_lookback, collect_one, last_validators
from tasks.steps.context import RunContext, make_context, resolve_day, today
from tasks.steps.dedup import DedupOutcome, briefed_before, dedup_day, follow_ups, human_links
from tasks.steps.report import RunReport
from tasks.steps.review import mark_story, open_questions, raise_questions, rebrief, resolve
from tasks.steps.score import Scored, score_stories

__all__ = [
    "DedupOutcome",
    "Published",
    "RunContext",
    "RunReport",
    "Scored",
    "SourceOutcome",
    "analyze_stories",
    "answered",
    "briefed_before",
    "collect_lookback",
    "collect_one",
    "compose",
    "dedup_day",
    "draft",
    "factcheck",
    "follow_ups",
    "gate",
    "human_links",
    "injection_flags",
    "last_validators",
    "left_out",
    "make_context",
    "mark_story",
    "open_questions",
    "publish",
    "raise_questions",
    "rebrief",
    "resolve",
    "resolve_day",
    "score_stories",
    "today",
]
