"""The diff's "caused by": a change is credited only to acts that can have made it (the desk's trial:
a relevance change credited to a retraction and its undo, a move from #1 to #2 credited to marks on
items below it, a headline change credited to a mark)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flows.desk.pages.history import causes
from ops.changes import Acted
from storage.brief import Brief
from tasks import versions
from tests.factories import brief, brief_item

T0 = datetime(2025, 8, 6, 9, tzinfo=UTC)


def act(n: int, kind: str, subject: str, field: str = "", said: str = "") -> Acted:
    return Acted(f"ev-{n}", kind, T0 + timedelta(minutes=n), subject, field, said, (), "ann", "desk", 2)


def item(story: str, title: str, section: str, relevance: str = "core", **kw):
    return brief_item(story, title, section=section, relevance=relevance, summary="s", **kw)


OLDER = brief(
    item("orchard", "Orchard raises $12M", "top"),
    item("bright", "Brightwater opens a lab", "top"),
    item("tiny", "TinyEval ships", "top"),
    item("north", "Northwind AI raises $120M", "category"),
    version=1,
)
NEWER = brief(
    item("north", "Northwind AI raises $120M", "top", lead=True),
    item("orchard", "Orchard raises $12M", "top"),
    item(
        "bright",
        "Brightwater opens a robotics lab",
        "category",
        relevance="related",
        correction="Correction: the headline read “Brightwater opens a lab”.",
    ),
    item("tiny", "TinyEval ships", "category", relevance="related"),
    version=2,
)
ACTS = [
    act(1, "article.corrected", "bright", "relevance", "related"),
    act(2, "article.corrected", "tiny", "relevance", "related"),
    act(3, "story.retracted", "tiny", "", "wrong day"),
    act(4, "story.restored", "tiny"),
    act(5, "article.corrected", "north", "relevance", "lead"),
    act(6, "brief.corrected", "bright", "title", "Brightwater opens a robotics lab"),
]


def credited(older: Brief = OLDER, newer: Brief = NEWER) -> dict[tuple[str, str], tuple[list[str], str]]:
    found = versions.diff(older, newer)
    return {
        (c.story_id, c.change): ([a.event_id for a in acts], why)
        for c, acts, why in causes(found, older, newer, ACTS)
    }


def test_a_relevance_change_is_credited_to_the_mark_on_it_not_to_a_retraction_and_its_undo() -> None:
    assert credited()[("tiny", "marked")] == (["ev-2"], "")


def test_a_move_is_credited_to_what_moved_items_above_it_not_to_marks_on_items_below_it() -> None:
    acts, why = credited()[("orchard", "moved")]
    assert acts == ["ev-5"], (
        acts
    )  # Northwind marked lead came in above it; Brightwater and TinyEval sat below
    assert why == "Northwind AI raises $120M was marked", why


def test_a_headline_change_is_credited_to_the_headline_correction_not_to_a_mark() -> None:
    got = credited()
    assert got[("bright", "reworded")] == (["ev-6"], "")
    assert got[("bright", "marked")] == (["ev-1"], "")  # and the mark is no cause of the headline
    assert got[("bright", "moved")] == (["ev-1"], "")  # moved by the mark on it


def test_a_retracted_item_is_credited_to_its_retraction_and_a_restored_one_to_its_undo() -> None:
    gone = NEWER.model_copy(
        update={"items": [i for i in NEWER.items if i.story_id != "tiny"], "retracted": []}
    )
    from storage.brief import Retracted

    gone = gone.model_copy(
        update={"retracted": [Retracted(story_id="tiny", title="TinyEval ships", section="top", note="n")]}
    )
    assert credited(OLDER, gone)[("tiny", "removed")] == (["ev-3"], "")
    back = credited(gone, NEWER)
    assert back[("tiny", "added")] == (["ev-2", "ev-4"], "")  # its undo, and the mark that set where it is
