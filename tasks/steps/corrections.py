"""A person's corrections and retractions of the day's brief items, recorded as facts.

``brief correct``, ``brief retract`` and the editor's desk call these; the next version of the brief
(``rebrief``) applies them through ``tasks.write.apply_editor_acts``: the item shows the new text
with a visible correction line, or leaves with its note in its place. A retraction is undone by a
fact of its own (``story.restored``, naming it): the item comes back in the next version, and a
retraction made again after that names the undo it follows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from storage.brief import Brief, Item
from storage.errors import ActConflict, InputError
from storage.events import Event, new_event, utcnow
from storage.payloads import BriefCorrected, StoryRestored, StoryRetracted
from storage.typed import payload_of
from tasks.normalize import plain_line
from tasks.steps.context import RunContext

FIELDS = ("title", "summary")
ACT_TYPES = ["brief.corrected", "story.retracted", "story.restored"]
# what people record about a day (answers, marks, same-story links, corrections, retractions):
# each changes what the day's brief is composed into
PEOPLE_TYPES = [
    "confirmation.resolved",
    "article.corrected",
    "story.merged",
    "story.split",
    *ACT_TYPES,
]


@dataclass(frozen=True)
class EditorActs:
    corrections: dict[str, dict[str, BriefCorrected]] = field(default_factory=dict)  # story -> field -> act
    retractions: dict[str, StoryRetracted] = field(default_factory=dict)  # story -> act (standing)
    event_ids: dict[str, list[str]] = field(default_factory=dict)  # story -> the acts' events (lineage)
    retracted_by: dict[str, str] = field(default_factory=dict)  # story -> its standing retraction's event
    restored_by: dict[str, str] = field(default_factory=dict)  # story -> the latest undo's event
    # (story, field) whose latest correction was made before readers had the brief (held): no line
    silent: set[tuple[str, str]] = field(default_factory=set)
    # (story, field) -> the text readers first had, when it came from a correction made while held
    first_seen: dict[tuple[str, str], str] = field(default_factory=dict)


def readers_since(ctx: RunContext) -> datetime | None:
    """When readers first had the day's brief, for a day under ``[delivery] hold``: its approval or its
    first send to a readers' channel (``datetime.max`` while neither happened). None when the day
    was never held: readers had every version as it was published."""
    from tasks import deliver

    state = deliver.fold(ctx.store.read(days=[ctx.day], event_types=deliver.DELIVERY_TYPES))
    if state.held is None and not ctx.settings.delivery.hold:
        return None
    moments = [s.at for s in state.delivered.values() if s.delivery.kind != "review"]
    moments += [state.approved.at] if state.approved is not None else []
    moments = [_aware(m) for m in moments]
    return min(moments, default=datetime.max.replace(tzinfo=UTC))


def _aware(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def editor_acts(ctx: RunContext) -> EditorActs:
    """The day's corrections (the latest per story and field) and the retractions that stand (not
    undone since), in event order. A correction made while the brief was held from readers changes
    the text without a correction line (``silent``): no reader saw what it corrected."""
    frame = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=ACT_TYPES))
    acts = EditorActs()
    since = readers_since(ctx)
    for row in frame.sort(["occurred_at", "seq"]).iter_rows(named=True):
        if row["event_type"] == "story.retracted":
            retracted = payload_of(row, StoryRetracted)
            acts.event_ids.setdefault(retracted.story_id, []).append(row["event_id"])
            acts.retractions[retracted.story_id] = retracted
            acts.retracted_by[retracted.story_id] = row["event_id"]
        elif row["event_type"] == "story.restored":
            restored = payload_of(row, StoryRestored)
            acts.event_ids.setdefault(restored.story_id, []).append(row["event_id"])
            acts.restored_by[restored.story_id] = row["event_id"]
            if acts.retracted_by.get(restored.story_id) == restored.retraction:
                del acts.retractions[restored.story_id], acts.retracted_by[restored.story_id]
        else:
            corrected = payload_of(row, BriefCorrected)
            acts.event_ids.setdefault(corrected.story_id, []).append(row["event_id"])
            acts.corrections.setdefault(corrected.story_id, {})[corrected.field] = corrected
            key = (corrected.story_id, corrected.field)
            if since is not None and _aware(row["occurred_at"]) < since:
                acts.silent.add(key)
                acts.first_seen[key] = corrected.value
            else:
                acts.silent.discard(key)
    return acts


def people_acts(ctx: RunContext) -> frozenset[str]:
    """The events of people's acts on the day recorded by others than this run, as they stand."""
    frame = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=PEOPLE_TYPES))
    if not frame.height:
        return frozenset()
    return frozenset(frame.filter(frame["run_id"] != ctx.run_id)["event_id"].to_list())


def note_acts(ctx: RunContext) -> None:
    """A composition of the day's brief begins: the acts it is made from (``acts_seen``)."""
    ctx.memo["acts_seen"] = (None, people_acts(ctx))


def acts_seen(ctx: RunContext) -> frozenset[str]:
    """The acts the run's latest composition began from (none known: none)."""
    seen = ctx.memo.get("acts_seen")
    return seen[1] if seen is not None else frozenset()  # type: ignore[return-value]


def current_document(ctx: RunContext) -> Brief:
    """The day's current brief, as its readers have it (its JSON file)."""
    document = ctx.store.tree.briefs.current_document(ctx.day)
    if document is None:
        raise InputError(f"no brief is published for {ctx.day}; run 'brief run --date {ctx.day}' first")
    return document


def _item(ctx: RunContext, story_id: str) -> Item:
    document = current_document(ctx)
    for item in document.items:
        if item.story_id == story_id:
            return item
    ids = [item.story_id for item in document.items]
    shown = ", ".join(ids[:6]) + (f" and {len(ids) - 6} more" if len(ids) > 6 else "")
    raise InputError(
        f"story {story_id!r} is not in the current brief of {ctx.day} (v{document.version}), whose "
        f"items are {shown or 'none'}; 'brief replay --date {ctx.day} --projection scores' lists every "
        "story of the day with its id and outcome"
    )


WORDS = {"title": "headline"}  # what the desk's form and the brief call a field


def _headline(ctx: RunContext, story_id: str) -> str:
    """The story as a person knows it: its headline in the current brief (or where it was
    retracted from), quoted; its id when the brief holds neither."""
    document = ctx.store.tree.briefs.current_document(ctx.day)
    shown = [*(document.items if document else ()), *((document.retracted or ()) if document else ())]
    title = next((i.title for i in shown if i.story_id == story_id), None)
    return f"“{title}”" if title else f"story {story_id!r}"


def _fact(ctx: RunContext, event_type: str, payload: dict, story_id: str, by: str) -> Event:
    return new_event(
        event_type,
        payload,
        brief_date=ctx.day,
        run_id=ctx.run_id,
        subject_id=story_id,
        produced_by=f"review@1:{by}",
        occurred_at=utcnow(),
    )


def correct_item(
    ctx: RunContext, story_id: str, field_: str, value: str, note: str, by: str, via: str | None = None
) -> list[Event]:
    """A new headline or summary for an item of the current brief, checked before anything is written."""
    if field_ not in FIELDS:
        raise InputError(f"field {field_!r} cannot be corrected here; give one of {', '.join(FIELDS)}")
    text = plain_line(value)  # no bidirectional or other control characters reach readers
    if not text:
        raise InputError(f"the new {WORDS.get(field_, field_)} is empty; give the text readers should see")
    item = _item(ctx, story_id)
    shown = item.title if field_ == "title" else item.summary
    if shown == text:
        raise InputError(
            f"the {WORDS.get(field_, field_)} of “{item.title}” already reads so; nothing to correct"
        )
    earlier = editor_acts(ctx).corrections.get(story_id, {}).get(field_)
    previous = earlier.previous if earlier else shown  # what readers first saw
    payload = {
        "story_id": story_id,
        "field": field_,
        "value": text,
        "previous": previous,
        "note": plain_line(note),
        "by": by,
        "via": via,
    }
    return [_fact(ctx, "brief.corrected", payload, story_id, by)]


def retract_item(ctx: RunContext, story_id: str, note: str, by: str, via: str | None = None) -> list[Event]:
    """An item leaves the brief; ``note`` (required) says why, where it was."""
    text = plain_line(note)
    if not text:
        raise InputError("a retraction needs a note saying why; readers see it where the item was")
    item = _item(ctx, story_id)
    follows = editor_acts(ctx).restored_by.get(story_id)  # retracted again after an undo: a new fact
    payload = {
        "story_id": story_id,
        "title": item.title,
        "note": text,
        "by": by,
        "via": via,
        "follows": follows,
    }
    return [_fact(ctx, "story.retracted", payload, story_id, by)]


def restore_item(
    ctx: RunContext, story_id: str, note: str, by: str, via: str | None = None, retraction: str | None = None
) -> list[Event]:
    """Undo the retraction of an item: it comes back in the next version (the retraction stays in
    the log). Refused in one line when the story has no retraction standing on the day, and
    (ActConflict) when ``retraction``, the one the person meant to undo, is not the one standing."""
    standing = editor_acts(ctx).retracted_by.get(story_id)
    if standing is None:
        raise InputError(
            f"{_headline(ctx, story_id)} is not retracted on {ctx.day}: there is no retraction to undo"
        )
    if retraction is not None and retraction != standing:
        raise ActConflict(
            f"the retraction of {_headline(ctx, story_id)} you meant to undo no longer stands: it was "
            "undone, and the story was retracted again since; reload the page to undo that one"
        )
    payload = {"story_id": story_id, "retraction": standing, "note": plain_line(note), "by": by, "via": via}
    return [_fact(ctx, "story.restored", payload, story_id, by)]
