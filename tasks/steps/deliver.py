"""The deliver step: the day's current brief to its channels, each send an event, exactly once.

Reading the brief, deciding, sending and recording happen under one lock per day (a lock file
on a local disk, a lease object on S3: ``storage/atomic.py``), so a rerun, a resend and an
approval running at once, on one machine or several, send a message once. A channel that is
down never fails the run: its attempts are ``delivery.failed`` events and ``brief deliver``
sends it later. (A process killed between a service taking a message and the event being
written would send it again on the next try: no chat or mail service offers more than
at-least-once here.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo

from storage.brief import Brief
from storage.errors import InputError
from storage.payloads import BriefPublished
from storage.typed import payload_of
from tasks import deliver
from tasks.channels import DeliverySettings
from tasks.nouns import counted
from tasks.steps.context import RunContext
from tasks.steps.publish import category_labels, day_lock, write_feed
from tasks.steps.send import send

PRODUCER = "deliver@1"


@dataclass(frozen=True)
class Sent:
    channel: str
    kind: str
    version: int
    ok: bool
    attempts: int
    reason: str = ""


@dataclass
class DeliveryOutcome:
    day: date
    version: int | None = None
    sent: list[Sent] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    waiting: str | None = None
    held_now: bool = False
    until: datetime | None = None  # when a held brief goes to readers by itself (none: on approval only)
    zone: tzinfo = UTC
    pending: datetime | None = None  # an update held back by ``[delivery] update_after`` goes out then

    @property
    def failed(self) -> list[Sent]:
        return [s for s in self.sent if not s.ok]

    def line(self) -> str:
        """The deliver step in a few words (the run's line for it: it fits 80 columns)."""
        ok = sum(s.ok for s in self.sent)
        if self.waiting:  # the readers' channels wait: held, not failed
            at = f"{self.until.astimezone(self.zone):%m-%d %H:%M %Z} or " if self.until else ""
            parts = [f"held until {at}approved"] + (["review copy sent"] if ok else [])
        else:
            parts = [
                f"sent to {ok} of {counted(len(self.sent), 'channel')}"
                if self.failed
                else f"sent to {counted(ok, 'channel')}"
            ]
            if self.skipped:
                parts.append(f"{len(self.skipped)} not sent")
        if self.failed:  # the run's warning at its end names the command that resends
            parts.append(f"{len(self.failed)} failed (how to resend: below)")
        if self.pending:
            parts.append(f"update pending till {self.pending:%H:%M} UTC")
        return ", ".join(parts)

    def rows(self) -> list[dict]:
        """Lines of the run report: one per send, skip and hold."""
        rows = [
            {
                "source": f"delivery: {s.channel}",
                "items": 1,
                "new events": s.attempts,
                "status": (f"{s.kind} v{s.version} delivered" if s.ok else f"FAILED ({s.reason})")
                + ("" if s.ok else f"; resend: brief deliver --date {self.day} --channel {s.channel}"),
            }
            for s in self.sent
        ]
        rows += [
            {"source": f"delivery: {name}", "items": 0, "new events": 0, "status": f"not sent: {why}"}
            for name, why in self.skipped
        ]
        return rows


def current_brief(ctx: RunContext) -> Brief:
    document = ctx.store.tree.briefs.current_document(ctx.day)
    if document is None:
        raise InputError(f"no brief is published for {ctx.day}; run 'brief run --date {ctx.day}' first")
    return document


def deliver_day(
    ctx: RunContext,
    *,
    now: datetime | None = None,
    only: str | None = None,
    approve_by: str | None = None,
    via: str = "approve",
    urgent: bool = False,
    sleep: Callable[[float], None] = time.sleep,
) -> DeliveryOutcome:
    """Send the day's current brief where the settings and the log say it still has to go; an update
    waits for its ``[delivery] update_after`` window to close unless ``urgent``."""
    settings = ctx.settings.delivery
    outcome = DeliveryOutcome(ctx.day)
    if not settings.channels:
        return outcome
    if only is not None:
        settings.channel(only)  # an unknown name is one clear line
    # under the day's lock too: no act is recorded, and no version published, while the day's
    # current brief is sent (what readers get carries every act recorded before it)
    with day_lock(ctx.store, ctx.day), ctx.store.tree.briefs.delivery_lock(ctx.day) as lock:
        # the brief is read under the lock: a deliverer that waited sends what is current when
        # its turn comes, not what was current when it started waiting
        document = current_brief(ctx)
        version = document.version
        outcome.version = version
        published = published_event(ctx, version)
        state = deliver.fold(ctx.store.read(days=[ctx.day], event_types=deliver.DELIVERY_TYPES))
        moment = now or ctx.resources.clock.now()  # when a held delivery is due: the run's clock
        if approve_by is not None and settings.hold and state.approved is None:
            approval = _emit(
                ctx,
                "brief.approved",
                {"brief_date": ctx.day.isoformat(), "version": version, "by": approve_by, "via": via},
                moment,
            )
            ctx.append([approval])
            state = deliver.fold([*ctx.store.read(days=[ctx.day], event_types=deliver.DELIVERY_TYPES)])
        core = document.core
        plan = deliver.plan(
            settings,
            state,
            version=version,
            core=core,
            now=moment,
            zone=ctx.settings.zone,
            only=only,
            published=published_at(ctx.store, ctx.day),
            urgent=urgent,
        )
        outcome.skipped, outcome.waiting, outcome.pending = plan.skipped, plan.waiting, plan.pending
        outcome.until, outcome.zone = plan.until, ctx.settings.zone
        if plan.hold_now:
            held = {
                "brief_date": ctx.day.isoformat(),
                "version": version,
                "review_channel": settings.review_channel,
                "until": plan.until,
            }
            ctx.append([_emit(ctx, "brief.held", held, moment, published)])
            outcome.held_now = True
        questions = _questions(ctx) if any(s.kind == "review" for s in plan.sends) else []
        labels = category_labels(ctx)
        for item in plan.sends:
            lock.check()  # a lock taken over (on an object store) sends nothing more
            message = deliver.compose_message(
                item,
                document,
                labels,
                zone=ctx.settings.zone,
                until=plan.until,
                questions=questions,
                templates=ctx.settings.output.templates,
                earlier=_earlier(ctx, item),
                desk=desk_page(ctx.settings.desk.hosts, ctx.settings.desk.tls, ctx.day),
            )
            outcome.sent.append(_send(ctx, item, message, version, sleep, published))
    if settings.hold and (approve_by is not None or any(s.ok and s.kind != "review" for s in outcome.sent)):
        write_feed(ctx, labels)  # released: the feed, a readers' channel, gets the brief now
    return outcome


def _earlier(ctx: RunContext, item: deliver.Send) -> Brief | None:
    """The version an update replaces, as the channel got it (None: not an update, or its file is
    gone), so the update says what changed since."""
    if item.kind != "update" or item.previous is None:
        return None
    briefs = ctx.store.tree.briefs
    try:
        return briefs.read(briefs.version(ctx.day, item.previous))
    except (FileNotFoundError, OSError):
        return None


def desk_page(hosts: list[str], tls: bool, day: date) -> str:
    """The address of the desk's Hold page for ``day`` under its first public name (``[desk] hosts``),
    https when the desk is reached through TLS; "" when it has none (only its own machine reaches it)."""
    if not hosts:
        return ""
    return f"{'https' if tls else 'http'}://{hosts[0]}/hold?date={day.isoformat()}"


def _send(
    ctx: RunContext,
    item: deliver.Send,
    message: deliver.Message,
    version: int,
    sleep: Callable[[float], None],
    published: list[str],
) -> Sent:
    channel = item.channel
    day = ctx.day.isoformat()
    resend = f"brief deliver --date {day} --channel {channel.name}"

    def failed(attempt: deliver.Attempt, will_retry: bool) -> None:
        number = len(attempts_so_far) + 1
        attempts_so_far.append(attempt)
        payload = {
            "brief_date": day,
            "channel": channel.name,
            "version": version,
            "kind": item.kind,
            "target": channel.target,
            "reason": attempt.reason,
            "attempt": number,
            "attempted_at": attempt.at,
            "will_retry": will_retry,
            "resend": resend,
        }
        ctx.append([_emit(ctx, "delivery.failed", payload, attempt.at, published)])

    attempts_so_far: list[deliver.Attempt] = []
    attempts = send(channel, message, sleep=sleep, on_failure=failed)
    last = attempts[-1]
    if last.ok:
        payload = {
            "brief_date": day,
            "channel": channel.name,
            "version": version,
            "kind": item.kind,
            "target": channel.target,
            "format": message.format,
            "subject": message.subject,
            "attempts": len(attempts),
            "released": item.released,
            "by": item.by,
            "note": "nobody reviewed it before the deadline" if item.released == "deadline" else None,
        }
        ctx.append([_emit(ctx, "brief.delivered", payload, last.at, published)])
    return Sent(channel.name, item.kind, version, last.ok, len(attempts), last.reason)


def published_event(ctx: RunContext, version: int) -> list[str]:
    """The ``brief.published`` of the day's ``version`` (the latest, should there be several): what a
    send, a failed send or a hold of that version names as its source."""
    frame = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
    found = [
        r["event_id"] for r in frame.iter_rows(named=True) if payload_of(r, BriefPublished).version == version
    ]
    return found[-1:]


def published_at(store, day: date) -> dict[int, datetime]:
    """When each version of the day's brief was first published."""
    frame = store.query(lambda: store.scan([day], event_types=["brief.published"]))
    out: dict[int, datetime] = {}
    for r in frame.sort(["occurred_at", "seq"]).iter_rows(named=True):
        out.setdefault(payload_of(r, BriefPublished).version, r["occurred_at"])
    return out


def _emit(ctx: RunContext, event_type: str, payload: dict, at: datetime, sources: Sequence[str] = ()):
    from storage.events import new_event

    return new_event(
        event_type,
        payload,
        brief_date=ctx.day,
        run_id=ctx.run_id,
        subject_id=f"brief-{ctx.day.isoformat()}",
        produced_by=PRODUCER,
        occurred_at=at,
        source_event_ids=sources,
        policy_version=ctx.policy_version,
    )


def _questions(ctx: RunContext) -> list[dict[str, str]]:
    from tasks.steps.review import open_questions

    frame = open_questions(ctx).sort(["priority", "question_id"], descending=[True, False])
    return [
        {"id": q["question_id"], "prompt": q["prompt"], "default": q["default"]}
        for q in frame.iter_rows(named=True)
    ]


DUE_DAYS = 14  # ``brief deliver --due`` looks at the latest this many days of the log


def due_days(store, now: datetime) -> list[date]:
    """Days whose held brief nobody approved and whose deadline has passed by ``now``."""
    recent = sorted(store.days())[-DUE_DAYS:]
    by_day: dict[date, list] = {}
    for event in store.read(days=recent, event_types=["brief.held", "brief.approved"]):
        by_day.setdefault(event.brief_date, []).append(event)
    due = []
    for day, events in sorted(by_day.items()):
        state = deliver.fold(events)
        until = state.held.until if state.held else None
        if state.approved is None and until is not None and until <= now:
            due.append(day)
    return due


def updates_due(
    store, settings: DeliverySettings, now: datetime, days: list[date] | None = None
) -> dict[date, datetime]:
    """Days (``days``, else the latest ``DUE_DAYS``) with an update held back by ``update_after`` (a
    version newer than one a reader channel with updates got; while the brief is held, newer than
    the review channel's last review copy), each with when it is due (it may have passed)."""
    readers = [c.name for c in settings.readers if c.updates]
    review = settings.review_channel if settings.hold else None
    if not (readers or review) or not settings.update_after:
        return {}
    recent = days if days is not None else sorted(store.days())[-DUE_DAYS:]
    delivered: dict[date, list] = {}
    for event in store.read(days=recent, event_types=deliver.DELIVERY_TYPES):
        delivered.setdefault(event.brief_date, []).append(event)
    out = {}
    for day, events in sorted(delivered.items()):
        state = deliver.fold(events)
        if state.holding:
            # held, not released: readers wait for an approval or the deadline; the editors get review copies
            asked = state.versions_reviewed(review) if review else []
            if not asked:
                continue
            sent = asked[-1:]
        else:
            sent = [max(v) for v in (state.versions_sent(name) for name in readers) if v]
        published = published_at(store, day)
        newest = max(published, default=0)
        dues = [deliver.update_due(settings, published, last, now) for last in sent if last < newest]
        if dues:
            out[day] = min(d or now for d in dues)
    return out
