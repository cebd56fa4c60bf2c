"""The editor's acts on a day's brief, one function each, for every entrypoint that offers them.

Mark, same story, two stories, correct, retract (and undo it), answer (a review batch), approve and deliver:
``brief review`` / ``correct`` / ``retract`` / ``approve`` / ``deliver``, the desk's forms and the
``deliver-held`` flow parse what a person gave, call one of these and show its ``Outcome``.

Each act takes the day's lock (``steps.day_lock``), checks its events against the log as it
stands inside the lock, composes the new version once from every act recorded before it and its
own (an act after which the brief could not be published is refused here, before anything is
written), records the events and publishes that version, and sends what the channels are owed,
all before the lock is let go: no other act, run
or purge publishes a version of the day in between. The hold rules are the same whoever acts: an
answer to the day's questions is a person's look at the brief and approves a held one; a mark, a
correction, a retraction or a same-story act does not.

Every act takes the settings and the process's ``Resources`` (``ops.workspace.resources_of``, built
once by the command or the desk): the store it records in and the clock that says what today and
"now" are (a held brief's deadline, an update's window). Nothing here imports Prefect: ``brief
approve`` and the desk run without it.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import polars as pl

from ops import changes
from storage.errors import InputError
from storage.events import Event, utcnow
from storage.store import EventStore, ParquetEventStore
from tasks import deliver as delivery_rules
from tasks import steps
from tasks.settings import Settings


@dataclass(frozen=True)
class Act:
    """Who acts on which day's brief, and where: ``via`` is ``"desk"`` at the desk and None at the
    command line (the events say so). ``as_case``: keep the act's marks and same-story links as
    regression cases too (``ops.regress``). ``seen``: the version of the brief the person acted on
    (a desk form's); an act on an item that changed since is refused (``StaleAct``, naming what
    changed and who changed it). None: on the current version, as the command line acts."""

    day: date
    who: str
    via: str | None = None
    as_case: bool = False
    seen: int | None = None


@dataclass(frozen=True)
class Answer:
    """A reply to an open question: the answer, and how it was given (``human``, ``default``)."""

    question_id: str
    answer: str
    by: str = "human"


@dataclass
class Outcome:
    """What an act did: the events it recorded, the version it published (None: nothing recorded,
    nothing published), what the channels were sent, whether the brief is approved or held after
    it, and the regression cases it kept (``refused``: why a case was not kept). An approval and a
    delivery record no act of their own here and publish nothing: ``published`` is None."""

    day: date
    events: list[Event] = field(default_factory=list)
    published: steps.Published | None = None
    delivery: steps.DeliveryOutcome | None = None
    approved: bool = False
    held: bool = False
    cases: list[Event] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    @property
    def version(self) -> int | None:
        if self.published is not None:
            return self.published.version
        return self.delivery.version if self.delivery is not None else None

    @property
    def sent(self) -> list[str]:
        """The channels that received a message."""
        return [s.channel for s in self.delivery.sent if s.ok] if self.delivery is not None else []

    @property
    def failed(self) -> list[tuple[str, str]]:
        """The channels a message failed to reach, each with why (secrets redacted)."""
        return [(s.channel, s.reason) for s in self.delivery.failed] if self.delivery is not None else []


Make = Callable[[steps.RunContext], list[Event]]


def approver() -> str:
    """Who acts at this terminal: ``$BRIEF_USER``, else the login name."""
    try:
        return os.environ.get("BRIEF_USER") or getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def day_of(
    settings: Settings,
    clock: steps.Clock,
    given: date | None,
    option: str = "--date",
    *,
    future: bool = False,
) -> date:
    """The day an act is about: ``given``, else today in the configured timezone by ``clock``; a day
    after tomorrow is refused in one line naming ``option`` unless ``future`` (a look, not an act)."""
    day = given or steps.today(settings, clock)
    return day if future else steps.refuse_future(day, settings, option, clock)


def act_story(store: EventStore, day: date, story: str, *, dated: bool) -> str:
    """The story id ``story`` names on ``day`` (the id, or its first characters when they name one
    story of the day's briefs alone; InputError when they name several). Without a date given
    (``dated`` false: today), a story that only another day's brief holds is refused naming that
    day. A story no brief names comes back as given: the act says why it cannot act on it."""
    from ops.trace import briefs_stories, named_story, names

    here = briefs_stories(store, [day]).get(day) if day in store.days() else None
    if here is not None and any(s.startswith(story) for s in here[1]):  # named, or too short to name
        return named_story(here[1], story, day, here[0])
    if not dated:
        elsewhere = sorted(d for d, (_, stories) in briefs_stories(store).items() if names(stories, story))
        if len(elsewhere) == 1:
            raise InputError(f"story {story!r} is in the brief of {elsewhere[0]}: add --date {elsewhere[0]}")
        if elsewhere:
            listed = ", ".join(str(d) for d in elsewhere)
            raise InputError(f"story {story!r} is in the briefs of {listed}: add --date with the day meant")
    return story


def require_brief(store: ParquetEventStore, day: date) -> None:
    """An InputError when ``day`` has no published brief (nothing to review or act on): that no brief
    is published; when a run withheld it, which run and why (not the run again: it withholds again
    while its cause holds); when no run did, the command that runs the day."""
    from ops import reads

    if reads.current(store, day) is not None:
        return
    held = reads.withheld(store, day)
    if held is None:
        raise InputError(f"no brief is published for {day}; run 'brief run --date {day}' first")
    raise InputError(
        f"no brief is published for {day}: it was withheld by its run {held.run_id} at "
        f"{held.at:%Y-%m-%d %H:%M} UTC, because {held.withheld.reason}; nothing to review or act on"
    )


def open_questions(settings: Settings, resources: steps.Resources, day: date) -> pl.DataFrame:
    """The day's open questions, for ``brief review`` to ask: not those about a story whose
    retraction stands (``ops.changes.moot_questions``), as the desk does not ask them either."""
    from ops.changes import moot_questions

    frame = steps.open_questions(context(settings, resources, day, "review"))
    moot = moot_questions(resources.store, day, frame.iter_rows(named=True))
    return frame.filter(~pl.col("question_id").is_in(sorted(moot))) if moot else frame


def context(settings: Settings, resources: steps.Resources, day: date, what: str) -> steps.RunContext:
    """Under the policy a run would use now (``ops.policy.governing``), as every re-render is."""
    from ops.policy import governed_context

    run_id = f"{what}-{utcnow():%Y%m%dT%H%M%S%f}"  # a name, unique per act: not the clock's to say
    return governed_context(settings, day, run_id, resources)[0]


def record(
    settings: Settings,
    resources: steps.Resources,
    act: Act,
    what: str,
    make: Make,
    *,
    about: Sequence[str] = (),
    approves: bool = False,
    urgent: bool = False,
    made_first: bool = False,
) -> Outcome:
    """The one path of every act: under the day's lock, ``make(ctx)`` checks the act against the log
    and gives its events (all checked before any is written); the brief is composed once from the
    log and them, with nothing written yet; then they are recorded with what composing made, that
    composition published, and what the channels are owed sent (``approves``: approving a held brief
    by ``act.who``; ``urgent``: an update goes out now, not when its ``update_after`` window closes;
    ``made_first``: the act is checked against the log before its version is, for an act that can
    no longer be made whatever the version, such as an undo of a retraction that no longer stands).
    Nothing given is refused (InputError), nothing written; so is an act made from an earlier
    version (``act.seen``) when an item of ``about`` changed since (StaleAct), and an act after
    which the brief could not be published (``[delivery] min_core``; UnfitAct): an act is
    recorded together with the version it makes, or not at all."""
    ctx = context(settings, resources, act.day, what if act.via is None else f"{act.via}-{what}")
    outcome = Outcome(act.day)
    with steps.day_lock(ctx.store, act.day):
        # an approval (answers approve a held brief) is of the whole brief the person saw
        if made_first:
            outcome.events = make(ctx)
        _check_seen(ctx, act, None if approves and ctx.settings.delivery.hold else about)
        if not made_first:
            outcome.events = make(ctx)
        if not outcome.events:
            raise InputError(
                f"nothing to record on the brief of {act.day}: no answer, mark or correction given"
            )
        composition = steps.compose_with(ctx, outcome.events)
        _refuse_unfit(ctx, what, composition)
        outcome.published = steps.publish_composition(ctx, composition)
        if ctx.settings.delivery.channels:
            by = act.who if approves and ctx.settings.delivery.hold else None
            outcome.delivery = steps.deliver_day(ctx, approve_by=by, via=act.via or what, urgent=urgent)
        _hold_state(ctx, outcome)
    if act.as_case:
        from ops.regress import cases_of_corrections

        outcome.cases = cases_of_corrections(settings, ctx.store, outcome.events, act.who, outcome.refused)
    return outcome


class UnfitAct(InputError):
    """An act after which the day's brief could not be published: refused before it is written."""


def _refuse_unfit(ctx: steps.RunContext, what: str, composition: steps.Composition) -> None:
    """Under the day's lock, before the act's events are written: refuse them when the brief
    composed with them is not fit to publish (``steps.compose_with``), saying why and what to do
    instead."""
    reason = composition.unfit
    if reason is None:
        return
    current = ctx.store.tree.briefs.current_document(ctx.day)
    readers = f"the brief stays at v{current.version}" if current is not None else "no brief is published"
    raise UnfitAct(
        f"not recorded: after this {what} the brief of {ctx.day} would have {reason}, and could not be "
        f"published; {readers}. Mark another story core first, or set [delivery] min_core = 0 to "
        "publish thinner briefs"
    )


def _check_seen(ctx: steps.RunContext, act: Act, about: Sequence[str] | None) -> None:
    """Under the day's lock: refuse an act made from an earlier version when what it acts on (the
    items of the stories ``about``; None: the whole brief) changed since."""
    if act.seen is None or about == ():
        return
    refused = changes.stale(ctx.store, act.day, act.seen, about)
    if refused is not None:
        raise refused


def _hold_state(ctx: steps.RunContext, outcome: Outcome) -> None:
    state = delivery_rules.fold(ctx.store.read(days=[ctx.day], event_types=delivery_rules.DELIVERY_TYPES))
    outcome.approved = state.approved is not None
    outcome.held = state.holding


# -- the acts ---------------------------------------------------------------------------------


def mark(settings: Settings, resources: steps.Resources, act: Act, marks: Mapping[str, str]) -> Outcome:
    """People's relevance marks (story, article id or link -> off-topic, related, core, lead)."""
    marks = _named_marks(resources, act, marks)
    return record(settings, resources, act, "mark", lambda ctx: _marks(ctx, act, marks), about=list(marks))


def _named_marks(resources: steps.Resources, act: Act, marks: Mapping[str, str]) -> dict[str, str]:
    """The marks with a story named by its first characters named by its id (article ids and links
    are kept as given)."""
    return {act_story(resources.store, act.day, named, dated=True): given for named, given in marks.items()}


def _marks(
    ctx: steps.RunContext, act: Act, marks: Mapping[str, str], answered: Sequence[str] = ()
) -> list[Event]:
    """The marks, and the answers they give to the day's open questions asking whether a marked
    story is on the topic (but those ``answered`` in the same act)."""
    reason = "marked at the desk" if act.via == "desk" else "marked in review"
    marked = [
        e
        for story, given in marks.items()
        for e in steps.mark_story(ctx, story, given, act.who, reason, via=act.via)
    ]
    return marked + steps.settle_relevance(ctx, marked, act.who, act.via, answered)


def same_story(settings: Settings, resources: steps.Resources, act: Act, stories: Sequence[str]) -> Outcome:
    """Two (or more) of the day's stories are one; an open question asking whether two of their
    articles are one story is answered "yes" by it."""

    def make(ctx: steps.RunContext) -> list[Event]:
        groups = [set(steps.members_of(ctx, s)) for s in dict.fromkeys(stories)]
        links = steps.same_story(ctx, stories, act.who, act.via)

        def answer(a: str, b: str) -> str | None:
            apart = [k for k, g in enumerate(groups) if a in g] != [k for k, g in enumerate(groups) if b in g]
            return "yes" if apart and any(a in g for g in groups) and any(b in g for g in groups) else None

        return links + steps.settle_same_story(ctx, answer, act.who, act.via, links)

    return record(settings, resources, act, "same-story", make, about=list(stories))


def two_stories(
    settings: Settings, resources: steps.Resources, act: Act, story: str, apart: Sequence[str]
) -> Outcome:
    """The articles ``apart`` of ``story`` are a story of their own; an open question asking whether
    one of them and one of the rest are one story is answered "no" by it."""

    def make(ctx: steps.RunContext) -> list[Event]:
        rest = set(steps.members_of(ctx, story)) - set(apart)
        links = steps.two_stories(ctx, story, apart, act.who, act.via)

        def answer(a: str, b: str) -> str | None:
            cut = (a in apart and b in rest) or (b in apart and a in rest)
            return "no" if cut else None

        return links + steps.settle_same_story(ctx, answer, act.who, act.via, links)

    return record(settings, resources, act, "two-stories", make, about=[story])


def correct(
    settings: Settings,
    resources: steps.Resources,
    act: Act,
    story: str,
    fields: Mapping[str, str],
    note: str = "",
) -> Outcome:
    """A new headline and/or summary (``fields``: title, summary -> the text readers should see)."""
    if not fields:
        raise InputError("give a title and/or a summary: the text readers should see")

    def make(ctx: steps.RunContext) -> list[Event]:
        return [
            e
            for name, value in fields.items()
            for e in steps.correct_item(ctx, story, name, value, note, act.who, act.via)
        ]

    return record(settings, resources, act, "correct", make, about=[story])


def retract(settings: Settings, resources: steps.Resources, act: Act, story: str, note: str) -> Outcome:
    """The item leaves the brief; ``note`` says why, where it was. Readers owed an update get it at
    once, with whatever else is pending: a withdrawn report does not wait for the window."""
    return record(
        settings,
        resources,
        act,
        "retract",
        lambda ctx: steps.retract_item(ctx, story, note, act.who, act.via),
        about=[story],
        urgent=True,
    )


def restore(
    settings: Settings,
    resources: steps.Resources,
    act: Act,
    story: str,
    note: str = "",
    *,
    retraction: str | None = None,
) -> Outcome:
    """Undo the retraction of ``story``: it comes back in the next version (the retraction and its
    undoing both stay in the log). ``retraction``: the event id of the retraction to undo (a desk
    form's); refused (ActConflict) when another one stands now."""
    return record(
        settings,
        resources,
        act,
        "restore",
        lambda ctx: steps.restore_item(ctx, story, note, act.who, act.via, retraction),
        about=[story],
        made_first=True,  # an undo with no retraction standing is refused as such, from any page
    )


def answer(
    settings: Settings,
    resources: steps.Resources,
    act: Act,
    answers: Sequence[Answer],
    marks: Mapping[str, str] | None = None,
) -> Outcome:
    """A review batch: answers to the day's open questions (each still open when it is recorded),
    and marks given with them. A person's look at the day's questions approves a held brief."""
    marks = _named_marks(resources, act, marks or {})
    return record(
        settings, resources, act, "review", lambda ctx: answer_events(ctx, act, answers, marks), approves=True
    )


def answer_events(
    ctx: steps.RunContext, act: Act, answers: Sequence[Answer], marks: Mapping[str, str] | None = None
) -> list[Event]:
    """The events of a review batch, every answer and mark checked against the log first."""
    marking = _marks(ctx, act, marks or {}, [a.question_id for a in answers])
    asked = {q["question_id"]: q for q in steps.open_questions(ctx).iter_rows(named=True)}
    gone = [a.question_id for a in answers if a.question_id not in asked]
    if gone:
        raise InputError(f"question {gone[0]} of {ctx.day} is no longer open: it was answered meanwhile")
    events = [
        e
        for a in answers
        for e in steps.resolve(ctx, asked[a.question_id], a.answer, a.by, person=act.who, via=act.via)
    ]
    return events + marking


def approve(settings: Settings, resources: steps.Resources, act: Act) -> Outcome:
    """A person's approval of the day's held brief (a fact), then its delivery to readers; made from
    version ``act.seen``, refused (StaleAct) when the brief changed since: what is approved is what
    the person saw."""
    if not settings.delivery.hold:
        raise InputError(
            "nothing is held: [delivery] hold is not true in the config; 'brief deliver' sends a brief"
        )
    ctx = context(settings, resources, act.day, "approve")
    outcome = Outcome(act.day)
    with steps.day_lock(ctx.store, act.day):
        _check_seen(ctx, act, None)
        outcome.delivery = steps.deliver_day(ctx, approve_by=act.who, via=act.via or "approve")
        _hold_state(ctx, outcome)
    return outcome


def require_channels(settings: Settings) -> None:
    """Refused, in one line, when the config names no channel to send to (the command line and
    the desk's "send now" alike)."""
    if not settings.delivery.channels:
        raise InputError("the config has no [[delivery]] channels; add one with name = … and url = …")


def deliver(
    settings: Settings,
    resources: steps.Resources,
    day: date,
    channel: str | None = None,
    *,
    now: bool = False,
) -> steps.DeliveryOutcome:
    """What the day's current brief still owes its channels (all, or ``channel``), sent; an update
    whose ``update_after`` window is still open waits for it, unless ``now`` ("send now")."""
    require_channels(settings)
    ctx = context(settings, resources, day, "deliver")
    with steps.day_lock(ctx.store, day):
        return steps.deliver_day(ctx, only=channel, urgent=now)


def pending_update(
    settings: Settings, resources: steps.Resources, day: date, now: datetime | None = None
) -> datetime | None:
    """When the day's update held back by ``[delivery] update_after`` goes out (None: none pending),
    judged at ``now`` (default: the resources' clock)."""
    moment = now or resources.clock.now()
    return steps.updates_due(resources.store, settings.delivery, moment, [day]).get(day)


def release_updates(
    settings: Settings,
    resources: steps.Resources,
    now: datetime | None = None,
    say: Callable[[str], None] = print,
) -> list[steps.DeliveryOutcome]:
    """Every update held back by ``[delivery] update_after`` whose window has closed by ``now``
    (default: the resources' clock), sent: the version current now, once per channel, for every
    act within the window."""
    moment = now or resources.clock.now()
    outcomes = []
    for day, due in steps.updates_due(resources.store, settings.delivery, moment).items():
        if due > moment:
            continue
        ctx = context(settings, resources, day, "update")
        with steps.day_lock(ctx.store, day):
            outcome = steps.deliver_day(ctx, now=moment)
        sent = [s.channel for s in outcome.sent if s.ok]
        if sent:
            say(f"{day}: its update window closed; v{outcome.version} sent to {', '.join(sent)}")
            outcomes.append(outcome)
    return outcomes


def release_due(
    settings: Settings,
    resources: steps.Resources,
    now: datetime | None = None,
    say: Callable[[str], None] = print,
) -> list[steps.DeliveryOutcome]:
    """Every held brief whose deadline has passed by ``now`` (default: the resources' clock) without
    an approval, delivered with a note; then every update whose ``update_after`` window has closed
    (``release_updates``)."""
    moment = now or resources.clock.now()
    if not settings.delivery.hold:
        return release_updates(settings, resources, moment, say)
    outcomes = []
    for day in steps.due_days(resources.store, moment):
        ctx = context(settings, resources, day, "deadline")
        with steps.day_lock(ctx.store, day):
            outcome = steps.deliver_day(ctx, now=moment)
        sent = [s.channel for s in outcome.sent if s.ok]
        say(f"{day}: nobody approved it by the deadline; delivered to {', '.join(sent) or 'no channel'}")
        outcomes.append(outcome)
    return outcomes + release_updates(settings, resources, moment, say)
