"""The brief as a model: ``Brief`` holds its ``Item`` s, each with its ``Citation`` s and ``Fact`` s,
and what people took out (``Retracted``).

The JSON file is the boundary: ``brief_json`` writes a brief as the file has always had it (its keys
in this order, an optional key absent rather than null: an item's ``language``, ``translated_title``,
``section``, ``verified`` and ``correction``, a citation's ``kind``, ``outlet_label``,
``discussion_url`` and ``evidence``, the brief's ``retracted``), and ``Brief.model_validate`` reads one
back, so every file published before the model existed loads as it is and is written again byte for
byte. Code reads a brief by attribute; only this module knows its keys.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from storage.payloads import Fact

# a number as the brief wrote it: an int stays an int in the file (pydantic would make 1 into 1.0)
Number = int | float


class BriefPart(BaseModel):
    """A part of a brief: frozen, no key the file does not have; ``OPTIONAL`` keys are left out of
    the file when they are None (absent), as they always were."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    OPTIONAL: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.OPTIONAL:
            if data.get(name) is None:
                data.pop(name, None)
        return data


class Citation(BriefPart):
    """An article an item cites: its link as the outlet published it (the JSON file has it as
    ``reader_link`` shows it), and for a kind that names its outlet (community, repos, papers,
    digest) that kind, the outlet's label, the discussion's link and the source's evidence."""

    OPTIONAL = ("kind", "outlet_label", "discussion_url", "evidence")

    article_id: str
    url: str
    source: str
    published: str | None = None  # ISO, UTC
    kind: str | None = None
    outlet_label: str | None = None
    discussion_url: str | None = None
    evidence: dict[str, int | str] | None = None

    @property
    def named_kind(self) -> str:
        """The citation's kind; a citation without one is a news or lab article."""
        return self.kind or "news"


class Item(BriefPart):
    """One story of the brief. ``section`` is set when the brief is arranged, ``verified`` when it
    is fact-checked; ``language`` only when the item's is not the brief's; ``correction`` only when a
    person corrected it. ``relevance_score``, ``lead`` and ``promotion`` are absent from briefs
    published before they were written."""

    OPTIONAL = (
        "language",
        "translated_title",
        "relevance_score",
        "lead",
        "promotion",
        "section",
        "verified",
        "correction",
    )

    story_id: str
    title: str
    language: str | None = None
    translated_title: str | None = None
    category: str
    category_confidence: Number
    importance: Number
    relevance: str = "core"
    relevance_score: Number | None = None
    lead: bool | None = None
    promotion: bool | None = None
    summary: str
    facts: list[Fact] = []
    citations: list[Citation] = []
    follow_up_of: str | None = None
    flags: list[str] = []
    section: str | None = None
    verified: bool | None = None
    correction: str | None = None

    @property
    def core(self) -> bool:
        return self.relevance == "core"

    @property
    def unverified(self) -> bool:
        """The fact-check found a claim its sources do not state (an item not checked is not unverified)."""
        return self.verified is False

    @property
    def flagged(self) -> bool:
        """Its source text talks to an AI system (shown as quoted data)."""
        return "instructions_to_ai" in self.flags


class Retracted(BriefPart):
    """An item a person took out: its title, the section it was in, and the note."""

    story_id: str
    title: str
    section: str | None = None
    note: str


class Window(BriefPart):
    """The news window the brief covers: ISO times, UTC."""

    start: str
    end: str


class LeftOut(BriefPart):
    off_topic: int = 0  # stories the topic filter left out


class Brief(BriefPart):
    """A day's brief, the JSON contract: ``date`` (ISO), its ``version``, its language, the policy it
    was composed under, its news window, its topic, what was left out, its items in reading order and
    the items people retracted."""

    OPTIONAL = ("retracted",)

    date: str
    version: int = 1
    language: str = "en"
    policy_version: str
    window: Window
    topic: str = "AI"
    left_out: LeftOut = LeftOut()
    items: list[Item] = []
    retracted: list[Retracted] | None = None

    def with_items(self, items: list[Item]) -> Brief:
        return self.model_copy(update={"items": items})

    @property
    def core(self) -> int:
        """How many of its items are core stories."""
        return sum(1 for i in self.items if i.core)

    @property
    def story_ids(self) -> list[str]:
        return [i.story_id for i in self.items]

    def section(self, name: str) -> list[Item]:
        return [i for i in self.items if i.section == name]


def brief_dict(brief: Brief) -> dict[str, Any]:
    """The brief as its JSON file holds it (keys in the file's order, absent keys left out)."""
    return brief.model_dump(mode="json")


def brief_json(brief: Brief) -> str:
    """The brief's JSON file, as it has always been written."""
    return json.dumps(brief_dict(brief), ensure_ascii=False, indent=2) + "\n"


def read_brief(text: str | bytes) -> Brief:
    """A brief's JSON file as its model."""
    return Brief.model_validate_json(text)
