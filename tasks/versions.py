"""What changed between two versions of a day's brief (pure): items added, removed, reworded, moved."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from storage.brief import Brief, Item

Change = Literal["added", "removed", "reworded", "marked", "moved"]


@dataclass(frozen=True)
class ItemChange:
    change: Change
    story_id: str
    title: str
    detail: str  # what differs, in words: "headline", "summary", "Top stories #2 -> Models #1"
    label: str = ""  # the change as a person reads it, where its kind alone misleads: "joined", "went into"


def diff(older: Brief, newer: Brief) -> list[ItemChange]:
    """Item by item (by story id), in the newer version's reading order, removed items last.

    An item is ``moved`` when its section or its place within the section changed, ``reworded``
    when its headline, its headline's translation, its summary or its correction line changed,
    ``marked`` when it became or stopped being the lead, or its relevance, category or sources
    changed; an item can be all three. A removed item a person retracted says so.
    """

    def ranked(doc: Brief) -> dict[str, tuple[int, Item]]:
        at = places(doc)
        return {i.story_id: (at[i.story_id][1], i) for i in doc.items}

    before, after = ranked(older), ranked(newer)
    changes = []
    for story, (rank, item) in after.items():
        if story not in before:
            changes.append(ItemChange("added", story, item.title, _where(item, rank)))
            continue
        old_rank, old = before[story]
        words = [
            name
            for differs, name in (
                (old.title != item.title, "headline"),
                (old.translated_title != item.translated_title, "translated headline"),
                (old.summary != item.summary, "summary"),
                (old.correction != item.correction, "correction"),
            )
            if differs
        ]
        if words:
            changes.append(ItemChange("reworded", story, item.title, ", ".join(words)))
        marks = _marks(old, item)
        if marks:
            changes.append(ItemChange("marked", story, item.title, "; ".join(marks)))
        if (old.section, old_rank) != (item.section, rank):
            changes.append(
                ItemChange("moved", story, item.title, f"{_where(old, old_rank)} → {_where(item, rank)}")
            )
    retracted = {r.story_id for r in newer.retracted or ()}
    for story, (rank, item) in before.items():
        if story not in after:
            why = "retracted from " if story in retracted else ""
            changes.append(ItemChange("removed", story, item.title, why + _where(item, rank)))
    return _joined(changes, before, after, retracted)


def _joined(
    changes: list[ItemChange],
    before: Mapping[str, tuple[int, Item]],
    after: Mapping[str, tuple[int, Item]],
    retracted: set[str],
) -> list[ItemChange]:
    """A same-story link in words: an item that left because its reports are now another item's
    "went into" that item, and the item that gained them was "joined" by it (not "marked … sources
    1 -> 2" and "removed … #5")."""
    into: dict[str, str] = {}  # the item that left -> the item its reports went into
    for story, (_, old) in before.items():
        cited = {c.article_id for c in old.citations}
        if story in after or story in retracted or not cited:
            continue
        for other, (_, new) in after.items():
            if other in before and cited <= {c.article_id for c in new.citations}:
                into[story] = other
                break
    if not into:
        return changes
    title = {s: i.title for s, (_, i) in [*before.items(), *after.items()]}
    out = []
    for c in changes:
        joined = [title[s] for s, o in into.items() if o == c.story_id]
        if c.change == "removed" and c.story_id in into:
            where = f"“{title[into[c.story_id]]}”, as the same story (it was {c.detail})"
            c = ItemChange(c.change, c.story_id, c.title, where, "went into")
        elif c.change == "marked" and joined:
            names = " and ".join(f"“{t}”" for t in joined)
            parts = [
                f"{p}: {names} joined it as the same story" if p.startswith("sources") else p
                for p in c.detail.split("; ")
            ]
            c = ItemChange(c.change, c.story_id, c.title, "; ".join(parts), "joined")
        out.append(c)
    return out


def places(doc: Brief) -> dict[str, tuple[str, int]]:
    """Each item's place: its section and its rank within it, from 1."""
    seen: dict[str, int] = {}
    out = {}
    for item in doc.items:
        section = item.section or ""
        seen[section] = seen.get(section, 0) + 1
        out[item.story_id] = (section, seen[section])
    return out


def _marks(old: Item, new: Item) -> list[str]:
    """What a reader sees changed in an item's standing: lead, relevance, category, sources."""
    out = []
    if bool(old.lead) != bool(new.lead):
        out.append("marked lead" if new.lead else "no longer lead")
    if old.relevance != new.relevance:
        out.append(f"relevance {old.relevance} -> {new.relevance}")
    if old.category != new.category:
        out.append(f"category {old.category} -> {new.category}")
    was, now = {c.article_id for c in old.citations}, {c.article_id for c in new.citations}
    if was != now:
        out.append(f"sources {len(was)} -> {len(now)}")
    return out


def _where(item: Item, rank: int) -> str:
    section = item.section or "?"
    if section == "category":
        section = item.category
    return f"{section} #{rank}"


READERS_CHANGES = 3  # what an update's line names; the rest are counted


def for_readers(older: Brief, newer: Brief, lab: Mapping[str, str]) -> str | None:
    """What changed since ``older``, the version a reader had, in one short clause of the brief's
    language: retractions first, then corrections, items added and taken out, and whether the order
    changed ("retracted “…”; corrected the headline of “…”"); None when a reader sees no change."""
    found = diff(older, newer)
    retracted = {r.story_id for r in newer.retracted or ()}
    said: list[str] = []
    for c in found:
        if c.change == "removed" and c.story_id in retracted:
            said.append(lab["changed_retracted"].format(title=c.title))
    for c in found:
        if c.change == "reworded":
            words = c.detail.split(", ")
            if "headline" in words:
                said.append(lab["changed_headline"].format(title=c.title))
            if "summary" in words:
                said.append(lab["changed_summary"].format(title=c.title))
    for c in found:
        if c.change == "added":
            said.append(lab["changed_added"].format(title=c.title))
        elif c.change == "removed" and c.story_id not in retracted:
            said.append(lab["changed_removed"].format(title=c.title))
    order_changed = any(c.change == "moved" for c in found)
    if not said and not order_changed:
        return None
    shown = said[:READERS_CHANGES]
    if len(said) > READERS_CHANGES:
        shown.append(lab["changed_more"].format(n=len(said) - READERS_CHANGES))
    elif order_changed:
        shown.append(lab["changed_order"])
    return lab["changed_join"].join(shown)
