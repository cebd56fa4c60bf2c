"""Deciding what goes where, and what it says.

``fold`` turns a day's delivery events into its state; ``plan`` decides, from that state and
the settings, which channel gets which message (a pure function: no clock, no network);
``compose_message`` makes its subject and body. Sending, with backoff, is the step's
(``tasks/steps/send.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from storage.brief import Brief
from storage.events import Event
from storage.payloads import BriefApprovedV2, BriefDelivered, BriefHeld, DeliveryFailed
from storage.typed import payload_of
from tasks.channels import Channel, DeliverySettings

Kind = Literal["brief", "update", "review"]
Released = Literal["direct", "approved", "deadline"]
DELIVERY_TYPES = ["brief.delivered", "delivery.failed", "brief.held", "brief.approved"]


@dataclass(frozen=True)
class Sent:
    """A message the log says was delivered, and when."""

    delivery: BriefDelivered
    at: datetime


@dataclass(frozen=True)
class Approval:
    """A held brief's approval, and when it was given."""

    approval: BriefApprovedV2
    at: datetime


@dataclass(frozen=True)
class DayState:
    """What the log says about a day's deliveries."""

    delivered: Mapping[tuple[str, int, str], Sent] = field(default_factory=dict)
    failures: Sequence[DeliveryFailed] = ()
    held: BriefHeld | None = None
    approved: Approval | None = None

    @property
    def deadline_release(self) -> Sent | None:
        """The first message that reached readers because the held brief's deadline passed unapproved."""
        released = [s for s in self.delivered.values() if s.delivery.released == "deadline"]
        return min(released, key=lambda s: s.at) if released else None

    @property
    def released(self) -> bool:
        """Readers have the held brief: a person approved it, or it went out at its deadline."""
        return self.approved is not None or self.deadline_release is not None

    @property
    def holding(self) -> bool:
        """The brief is held and not released: readers get nothing yet, the editors review copies."""
        return self.held is not None and not self.released

    def withheld_from_readers(self, hold: bool, now: datetime) -> bool:
        """Readers' channels (the feed among them) must not have the day's brief yet: it is held and
        neither approved nor past its deadline; or ``hold`` is on and the brief, not yet delivered
        anywhere, is about to be held (a publish writes the feed before its delivery holds it)."""
        if self.released:
            return False
        if self.held is not None:
            return self.held.until is None or now < self.held.until
        return hold and not self.delivered

    def versions_sent(self, channel: str) -> list[int]:
        return sorted({v for (c, v, k) in self.delivered if c == channel and k != "review"})

    def versions_reviewed(self, channel: str) -> list[int]:
        """The versions ``channel`` got as a review copy while the brief was held."""
        return sorted({v for (c, v, k) in self.delivered if c == channel and k == "review"})


def fold(events: Iterable[Event]) -> DayState:
    delivered: dict[tuple[str, int, str], Sent] = {}
    failures: list[DeliveryFailed] = []
    held: BriefHeld | None = None
    approved: Approval | None = None
    for e in sorted(events, key=lambda e: (e.occurred_at, e.seq, e.event_id)):
        if e.event_type == "brief.delivered":
            sent = payload_of(e, BriefDelivered)
            delivered.setdefault((sent.channel, sent.version, sent.kind), Sent(sent, e.occurred_at))
        elif e.event_type == "delivery.failed":
            failures.append(payload_of(e, DeliveryFailed))
        elif e.event_type == "brief.held" and held is None:
            held = payload_of(e, BriefHeld)
        elif e.event_type == "brief.approved" and approved is None:
            approved = Approval(payload_of(e, BriefApprovedV2), e.occurred_at)
    return DayState(delivered, failures, held, approved)


@dataclass(frozen=True)
class Send:
    channel: Channel
    kind: Kind
    released: Released
    previous: int | None = None  # the version an update replaces
    by: str | None = None


@dataclass(frozen=True)
class Plan:
    sends: list[Send]
    hold_now: bool  # record brief.held: this is the first time the day's brief is held
    until: datetime | None  # the hold's deadline
    waiting: str | None  # why readers get nothing yet
    skipped: list[tuple[str, str]]  # (channel, why not)
    pending: datetime | None = None  # when the earliest update held back by ``update_after`` is due


def plan(
    settings: DeliverySettings,
    state: DayState,
    *,
    version: int,
    core: int,
    now: datetime,
    zone: ZoneInfo,
    only: str | None = None,
    published: Mapping[int, datetime] | None = None,
    urgent: bool = False,
) -> Plan:
    """Which channel gets which message for ``version`` of a day's brief, now.

    An update waits for its window (``update_due``: ``published`` says when each version was first
    published) unless ``urgent`` (a retraction, "send now"): a channel gets one update for every
    version published within it, the one current when it closes. So does the review channel while
    the brief is held: the first held version at once, then one review copy per window."""
    sends: list[Send] = []
    pending: datetime | None = None
    skipped: list[tuple[str, str]] = []
    hold_now = settings.hold and state.held is None
    until: datetime | None = None
    released: Released = "direct"
    by = None
    waiting = None
    if settings.hold:
        until = settings.deadline(now, zone) if state.held is None else state.held.until
        if state.approved is not None:
            released, by = "approved", state.approved.approval.by
        elif state.deadline_release is not None or (until is not None and now >= until):
            released = "deadline"
        else:
            at = f" or at {until.astimezone(zone):%Y-%m-%d %H:%M %Z}" if until else ""
            waiting = f"held for review: readers get it after 'brief approve'{at}"
            review = settings.channel(settings.review_channel or "")
            if only in (None, review.name) and (review.name, version, "review") not in state.delivered:
                asked = state.versions_reviewed(review.name)
                due = update_due(settings, published or {}, max(asked), now) if asked else None
                if due is not None and now < due and not urgent:
                    pending = due
                    at = f"{due.astimezone(zone):%H:%M %Z}"
                    skipped.append(
                        (review.name, f"review copy pending: the version current at {at} goes out then")
                    )
                else:
                    sends.append(Send(review, "review", "direct"))
    for channel in settings.readers:
        if only not in (None, channel.name):
            continue
        if waiting:
            skipped.append((channel.name, waiting))
            continue
        if (channel.name, version, "brief") in state.delivered or (
            channel.name,
            version,
            "update",
        ) in state.delivered:
            continue
        if core < channel.min_core:
            skipped.append((channel.name, f"{core} core stories, fewer than min_core = {channel.min_core}"))
            continue
        earlier = [v for v in state.versions_sent(channel.name) if v != version]
        if earlier and not channel.updates:
            skipped.append((channel.name, f"v{max(earlier)} was sent and updates = false"))
            continue
        due = update_due(settings, published or {}, max(earlier), now) if earlier else None
        if due is not None and now < due and not urgent:
            pending = due if pending is None else min(pending, due)
            at = f"{due.astimezone(zone):%H:%M %Z}"
            skipped.append((channel.name, f"update pending: the version current at {at} goes out then"))
            continue
        kind: Kind = "update" if earlier else "brief"
        sends.append(Send(channel, kind, released, max(earlier) if earlier else None, by))
    return Plan(sends, hold_now, until, waiting, skipped, pending)


def update_due(
    settings: DeliverySettings, published: Mapping[int, datetime], last_sent: int, now: datetime
) -> datetime | None:
    """When a channel that got ``last_sent`` gets its update: ``update_after`` minutes after the first
    version published since (None: at once, ``update_after = 0``)."""
    if not settings.update_after:
        return None
    opened = min((at for v, at in published.items() if v > last_sent), default=now)
    return opened + timedelta(minutes=settings.update_after)


@dataclass(frozen=True)
class Message:
    subject: str
    body: str
    format: Literal["html", "markdown", "text"]
    kind: Literal["info", "success", "warning", "failure"] = "info"  # Apprise's notify type


def compose_message(
    send: Send,
    document: Brief,
    labels: Mapping[str, str],
    *,
    zone: ZoneInfo,
    until: datetime | None = None,
    questions: Sequence[Mapping[str, str]] = (),
    templates: str | None = None,
    earlier: Brief | None = None,
    desk: str = "",
) -> Message:
    """The subject and body a channel gets: its format's template, with the note the kind calls for.

    ``earlier``: the version an update replaces (the one the channel got), so its note says what
    changed. Readers see no version number: the first brief a reader gets may be the day's second
    or ninth (held for review, corrected before it went out), and "v2" out of nowhere reads as if
    they missed one; an update says it is one, and what changed. The review copy editors get keeps
    the number, which the desk shows. ``desk``: the address of the desk's Hold page a review copy
    names ("": the desk has no public name)."""
    from tasks import versions
    from tasks.render import render, view

    base = view(document, labels, numbered=send.kind == "review")  # editors compare versions at the desk
    lab = base["lab"]
    at = f"{until.astimezone(zone):%Y-%m-%d %H:%M %Z}" if until else ""
    note = None
    if send.kind == "update":
        what = versions.for_readers(earlier, document, lab) if earlier is not None else None
        note = lab["updated"].format(what=what) if what else lab["updated_plain"]
    elif send.kind == "review":
        deadline = lab["held_deadline"].format(at=at) if until else ""
        note = lab["held"].format(date=document.date, deadline=deadline, desk=f" ({desk})" if desk else "")
    elif send.released == "deadline":
        note = lab["unreviewed"].format(at=at)
    context = {**base, "note": note, "questions": list(questions) if send.kind == "review" else []}
    fmt = send.channel.body_format
    template = {"html": "email", "markdown": "markdown", "text": "text"}[fmt]
    title = base["title"]
    if send.kind == "update":
        subject = lab["subject_updated"].format(title=title)
    elif send.kind == "review":
        n = len(questions)
        subject = lab["subject_review"].format(
            title=title, n=n, questions="question" if n == 1 else "questions"
        )
    else:
        subject = f"{title}: {base['lead']}" if base["lead"] else title
    if send.released == "deadline" and send.kind != "review":
        subject += lab["subject_unreviewed"]
    subject = re.sub(r"\s+", " ", subject).strip()[:200]
    return Message(subject, render(template, context, templates), fmt)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Attempt:
    ok: bool
    at: datetime
    reason: str = ""


def reasons_from_log(log: str) -> list[str]:
    """Apprise's warnings, and the debug lines that carry the service's answer (an SMTP code)."""
    out = []
    for line in log.splitlines():
        level, _, text = line.strip().partition(" ")
        if level in {"WARNING", "ERROR", "CRITICAL"} or (
            level == "DEBUG" and re.search(r"exception|error|refused|response", text, re.IGNORECASE)
        ):
            out.append(text.strip())
    return [line for line in out if line and not line.endswith(":")]
