"""The improvement loop's operations, whole: learn a candidate, evaluate it beside the policy in
force, replay the regression set, gate an adoption on it, keep people's corrections as cases.

Each takes the configured settings and their store and returns what a person is shown; the
machinery is in ``ops/learn.py``, ``ops/evaluate.py``, ``ops/regress.py`` and ``ops/policy.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from ops import evaluate as evaluation
from ops import learn as learning
from ops import regress, story_learning
from ops.policy import Adoption, adopt, adoptions, argument, governing, history
from ops.runs import date_range
from ops.workspace import SYSTEM_CLOCK, Clock, Resources, Stage, quietly, today
from storage.errors import InputError
from storage.events import Event
from storage.store import ParquetEventStore
from tasks.editorial import load_model
from tasks.nouns import counted
from tasks.settings import Settings

# --- brief evaluate ------------------------------------------------------------------------


@dataclass(frozen=True)
class Evaluation:
    """A candidate beside the policy in force over stored days: the figures of each (by name and
    version), and the verdict on unseen judgements (recorded as a ``policy.evaluated`` event)."""

    days: list[date]
    figures: dict[str, dict[str, Any]]
    verdict: dict[str, Any]


def collected_days(store: ParquetEventStore) -> list[date]:
    """The days that hold news (a feed fetched), as ``brief learn`` reads them."""
    return sorted({e.brief_date for e in store.read(event_types=["feed.fetched"])})


def evaluate(
    configured: Settings,
    resources: Resources,
    policy: str,
    start: str | None = None,
    end: str | None = None,
    labels: str | None = None,
    stage: Stage = quietly,
) -> Evaluation:
    """Replay ``start`` .. ``end`` (default: the collected days) through the policy in force and the
    candidate ``policy``; their figures, the verdict, recorded; nothing is published. ``resources``:
    the command's (its store; its models, for both policies when they name the same)."""
    store = resources.store
    if start is None or end is None:
        held = collected_days(store)
        if not held:
            raise InputError("the store holds no collected day yet; run or backfill some dates first")
        start, end = start or held[0].isoformat(), end or held[-1].isoformat()
    wanted = date_range(start, end)
    candidate = evaluation.candidate_settings(policy, configured)
    settings = governing(configured, store).settings  # "current" is the policy in force
    stored = set(store.days())
    days = [d for d in wanted if d in stored]
    if not days:
        raise InputError(f"no stored events between {start} and {end}; run or backfill those dates first")
    folder = Path(labels) if labels else None
    if folder is not None:
        evaluation.check_labels_folder(folder)
    figures: dict[str, dict[str, Any]] = {}
    judged: dict[str, dict] = {}
    for name, chosen in (("current", settings), ("candidate", candidate)):
        version = chosen.policy_version()
        judged[name] = {}
        with stage(f"replaying {counted(len(days), 'day')} through the {name} policy ({version}) …"):
            figures[f"{name} {version}"] = evaluation.evaluate_policy(
                chosen, resources, chosen.policy, days, folder, judged[name]
            )
    if (
        folder is not None
        and not any(k.startswith("label:") for day in judged["candidate"].values() for k in day)
        and all(f["label_f1"] is None for f in figures.values())
    ):
        raise InputError(
            f"--labels {labels!r}: none of its labels names an article of the stored days "
            f"{days[0]} .. {days[-1]}; check the folder and --start/--end"
        )
    seen_keys: set[str] = set()
    seen_stories: set[tuple[str, str]] = set()
    for chosen in (settings, candidate):
        keys, stories = learning.seen_by(load_model(chosen.policy.editorial_model))
        seen_keys |= keys
        seen_stories |= stories
    per_day, left_out = evaluation.unseen(judged["current"], judged["candidate"], seen_keys, seen_stories)
    decided = evaluation.verdict(per_day, left_out)
    evaluation.record(store, settings, candidate, days[0], days[-1], figures, folder, decided)
    return Evaluation(days, figures, decided)


# --- brief learn ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Learnt:
    """A fitted model written to ``model_path``; with a ``.toml`` ``out``, the candidate policy too;
    the story pair model refitted beside it (``stories_path``) when the days hold labelled stories
    or people's same-story answers on two blocks of days."""

    fitted: learning.Fitted
    out: Path
    model_path: Path
    stories: story_learning.StoryFit | None = None
    stories_path: Path | None = None


def _learn_days(store: ParquetEventStore, start: date | None, end: date | None) -> list[date]:
    stored = store.days()
    first = start or (stored[0] if stored else None)
    days = [d for d in stored if (first is None or d >= first) and (end is None or d <= end)]
    if not days:
        raise InputError("no stored days in that range; run or backfill them first")
    return days


def learn(
    configured: Settings,
    resources: Resources,
    out: Path,
    start: date | None = None,
    end: date | None = None,
    labels: str | None = None,
    name: str | None = None,
    progress: Callable[[date, int], None] | None = None,
    stage: Stage = quietly,
) -> Learnt:
    """A model fitted from hand labels (``labels``) and people's answers over the stored days; without
    labels, the model in force refined. Written as a model (``out`` a ``.json``) or as the policy in
    force with the new model (a ``.toml``, its model beside it). ``resources``: the command's (its
    store, and its models for both replays)."""
    store = resources.store
    given = learning.read_labels(Path(labels)) if labels else learning.Labels()
    if labels and not given:
        raise InputError(
            f"--labels {labels!r} holds no hand labels (relevance-*.json or <name>-YYYY-MM-DD.json); "
            "point it at the labels folder or leave it out"
        )
    settings = governing(configured, store).settings  # the policy in force: what is refined
    days = _learn_days(store, start, end)
    with stage(f"replaying {counted(len(days), 'day')} for examples …"):
        examples = learning.collect_examples(settings, days, given, progress, resources=resources)
    if labels and not any(e.by == "label" for e in examples):
        raise InputError(
            f"--labels {labels!r}: none of its {len(given)} labels names an article of the stored days "
            f"{days[0]} .. {days[-1]}; check the folder and --start/--end"
        )
    if not examples:
        raise InputError(
            "no labelled or marked story in that range; mark stories in 'brief review' or give --labels"
        )
    base = None
    if not labels:  # people's answers refine the model in force (its training stories come along)
        base = load_model(settings.policy.editorial_model)
        if base.kind != "fitted" or not base.training:
            raise InputError(
                f"the model in force {settings.policy.editorial_model!r} keeps no training stories to "
                "refine; give --labels to fit from hand labels"
            )
    note = f"brief learn over {days[0]} .. {days[-1]}" + (f" with labels from {labels}" if labels else "")
    with stage(
        f"fitting on {counted(len(examples), 'example')}, and its figures on each block of days left out …"
    ):
        topic, model = settings.policy.topic.name, settings.embedding.model
        fitted = learning.fit(examples, name or out.stem, topic, model, note=note, base=base)
    story_labels = story_learning.read_story_labels(Path(labels)) if labels else {}
    answered = bool(store.read(event_types=["story.merged", "story.split"]))
    story_days = [d for d in days if answered or d in story_labels]  # a day with neither teaches nothing
    with stage(f"replaying {counted(len(story_days), 'day')} for labelled stories and same-story answers …"):
        stories = story_learning.learn_stories(settings, story_days, story_labels, note, resources=resources)
    stories_path = None
    if stories is not None:
        stories_path = write_pair_model(stories, out)
        policy = settings.policy.model_copy(update={"story_model": stories_path.name})
        settings = settings.model_copy(update={"policy": policy})
    return Learnt(fitted, out, learning.write(fitted, out, settings, configured), stories, stories_path)


def write_pair_model(stories: story_learning.StoryFit, out: Path) -> Path:
    """The refitted pair model beside ``out`` (``<name>.pairs.json``), which a candidate policy names."""
    from storage.atomic import write_text

    path = out.with_name(f"{out.name.removesuffix(out.suffix)}.pairs.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, stories.model.to_json())
    return path


# --- brief policy show --------------------------------------------------------------------


@dataclass(frozen=True)
class InForce:
    """The adoption in force at a time (None: the config's [policy] rules), and, now, what a pinned
    ``policy_file`` says over it."""

    adoption: Event | None
    config_version: str
    pinned: str | None = None  # the run's line about the policy it uses, when the config pins one


def policy_in_force(configured: Settings, store: ParquetEventStore, as_of: datetime | None = None) -> InForce:
    """The policy adopted at ``as_of`` (default now); a copy of an adoption that a crash left out of
    ``policies/adopted`` is put back first."""
    history(store)
    found = adoptions(store, as_of)
    if not found:
        return InForce(None, configured.policy_version())
    pinned = governing(configured, store).line if as_of is None and configured.policy_file else None
    return InForce(found[-1], configured.policy_version(), pinned)


# --- the regression set --------------------------------------------------------------------


@dataclass(frozen=True)
class RegressionRun:
    """The regression set replayed under the policy in force, and under a candidate when one was given."""

    current_version: str
    current: list[regress.Result]
    candidate_version: str | None = None
    gate: regress.Gate | None = None

    @property
    def failed(self) -> list[regress.Result]:
        """The cases the policy in force fails."""
        return [r for r in self.current if not r.passed]

    @property
    def faults(self) -> list[regress.Result]:
        """What the policy evaluated gets wrong: the cases the candidate breaks (those the policy in
        force passes), or without a candidate, the cases the policy in force fails."""
        return self.gate.broken if self.gate is not None else self.failed

    @property
    def evaluated_failed(self) -> list[regress.Result]:
        """The cases the policy evaluated fails: the candidate's, or without one, the policy in force's
        (``brief evaluate --regression`` exits 1 when there is one)."""
        return [r for r in self.gate.candidate if not r.passed] if self.gate is not None else self.failed

    @property
    def failed_by_both(self) -> int:
        """Cases the candidate fails that the policy in force fails too."""
        if self.gate is None:
            return 0
        pairs = zip(self.gate.current, self.gate.candidate, strict=True)
        return sum(not a.passed and not c.passed for a, c in pairs)


def replay_regression(
    configured: Settings, resources: Resources, policy: str | None = None, stage: Stage = quietly
) -> RegressionRun | None:
    """Every case under the policy in force and, given ``policy``, the candidate; None without cases.
    ``resources``: the command's (its store, and its models for every replay)."""
    store = resources.store
    found = regress.cases(store)
    if not found:
        return None
    current = governing(configured, store).settings
    with stage(f"replaying {counted(len(found), 'case')} under the policy in force …"):
        now = regress.replay(current, resources, found)
    if policy is None:
        return RegressionRun(current.policy_version(), now)
    candidate = evaluation.candidate_settings(policy, configured)
    with stage(f"replaying {counted(len(found), 'case')} under the candidate …"):
        check = regress.Gate(now, regress.replay(candidate, resources, found))
    return RegressionRun(current.policy_version(), now, candidate.policy_version(), check)


def gate_adoption(
    configured: Settings, resources: Resources, file: str, force: bool, stage: Stage = quietly
) -> dict[str, Any] | None:
    """Before an adoption: the regression set under the policy in force and the candidate. A candidate
    that breaks a case is refused (one line) unless ``force``; the check recorded with the adoption."""
    candidate = evaluation.candidate_settings(file, configured, argument(file))
    with stage("replaying the regression set under the policy in force and the candidate …"):
        check = regress.gate(governing(configured, resources.store).settings, candidate, resources)
    if check is None:
        return None
    if check.broken and not force:
        raise InputError(regress.refusal(check))
    return check.record(forced=bool(check.broken))


def adopt_candidate(
    configured: Settings,
    resources: Resources,
    file: str,
    by: str,
    reason: str,
    force: bool = False,
    stage: Stage = quietly,
    clock: Clock = SYSTEM_CLOCK,
) -> Adoption:
    """Adopt a candidate policy file once the regression set allows it (or ``force``), recorded on
    today's date by ``clock``."""
    check = gate_adoption(configured, resources, file, force, stage)
    return adopt(configured, resources.store, file, by, reason, today(configured, clock), regression=check)


@dataclass(frozen=True)
class FrozenCase:
    """A case frozen (or found already in the set), and how the policy in force does on it."""

    event: Event
    written: bool
    version: str  # of the policy in force
    result: regress.Result


def freeze_case(
    configured: Settings,
    resources: Resources,
    day: date,
    story: str,
    expectation: regress.Expectation,
    by: str,
    note: str = "",
) -> FrozenCase:
    """Freeze a decision about ``story`` of ``day`` as a case, and replay it under the policy in force."""
    store = resources.store
    event, written = regress.add_case(configured, store, day, story, expectation, by, note, via="cli")
    chosen = governing(configured, store)
    [result] = regress.replay(chosen.settings, resources, [event])
    return FrozenCase(event, written, chosen.record["version"], result)


@dataclass(frozen=True)
class KeptCases:
    made: list[Event]
    refused: list[str] = field(default_factory=list)  # why a correction made no case
