"""What changed between two versions of a day's brief (pure): items added, removed, reworded, moved."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Change = Literal["added", "removed", "reworded", "moved"]


@dataclass(frozen=True)
class ItemChange:
    change: Change
    story_id: str
    title: str
    detail: str  # what differs, in words: "headline", "summary", "Top stories #2 -> Models #1"


def diff(older: Mapping[str, Any], newer: Mapping[str, Any]) -> list[ItemChange]:
    """Item by item (by story id), in the newer version's reading order, removed items last.

    An item is ``moved`` when its section or its place within the section changed, ``reworded``
    when its headline, summary or correction line changed; an item can be both.
    """

    def places(doc: Mapping[str, Any]) -> dict[str, tuple[int, dict]]:
        seen: dict[str, int] = {}
        out = {}
        for item in doc["items"]:
            section = item.get("section", "")
            seen[section] = seen.get(section, 0) + 1
            out[item["story_id"]] = (seen[section], item)
        return out

    before, after = places(older), places(newer)
    changes = []
    for story, (rank, item) in after.items():
        if story not in before:
            changes.append(ItemChange("added", story, item["title"], _where(item, rank)))
            continue
        old_rank, old = before[story]
        words = [
            name
            for key, name in (("title", "headline"), ("summary", "summary"), ("correction", "correction"))
            if old.get(key) != item.get(key)
        ]
        if words:
            changes.append(ItemChange("reworded", story, item["title"], ", ".join(words)))
        if (old.get("section"), old_rank) != (item.get("section"), rank):
            changes.append(
                ItemChange("moved", story, item["title"], f"{_where(old, old_rank)} -> {_where(item, rank)}")
            )
    for story, (rank, item) in before.items():
        if story not in after:
            changes.append(ItemChange("removed", story, item["title"], _where(item, rank)))
    return changes


def _where(item: Mapping[str, Any], rank: int) -> str:
    section = item.get("section") or "?"
    if section == "category":
        section = item.get("category", "category")
    return f"{section} #{rank}"
