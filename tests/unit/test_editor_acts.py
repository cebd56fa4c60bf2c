"""People's corrections and retractions applied to a brief document, and the diff of two versions."""

from __future__ import annotations

from storage.brief import Brief, Item, Retracted, brief_dict
from storage.payloads import BriefCorrected, StoryRetracted
from tasks import versions, write
from tasks.render import render, view
from tests.factories import brief, brief_item


def item(story: str, title: str, section: str = "top", summary: str = "") -> Item:
    return brief_item(story, title, summary=summary, section=section)


def doc(*items: Item) -> Brief:
    return brief(*items)


def test_a_document_nobody_corrected_is_unchanged_so_its_version_stays() -> None:
    original = doc(item("st-1", "One"), item("st-2", "Two"))
    assert write.content_hash(write.apply_editor_acts(original, {}, {})) == write.content_hash(original)


def test_a_corrected_headline_shows_with_a_correction_line_and_a_retracted_item_leaves_its_note() -> None:
    original = doc(
        item("st-1", "Orchard raises $12M", summary="s"), item("st-2", "Two", section="quick_link")
    )
    fixed = write.apply_editor_acts(
        original,
        {
            "st-1": {
                "title": BriefCorrected(
                    story_id="st-1",
                    field="title",
                    value="Orchard raises $21M",
                    previous="Orchard raises $12M",
                    note="typo",
                    by="ann",
                )
            }
        },
        {"st-2": StoryRetracted(story_id="st-2", title="Two", note="not news", by="ann")},
    )
    assert fixed.story_ids == ["st-1"]
    assert fixed.items[0].title == "Orchard raises $21M"
    assert fixed.items[0].correction == "Correction: the headline read “Orchard raises $12M”. Typo."
    assert brief_dict(fixed)["retracted"] == [
        {"story_id": "st-2", "title": "Two", "section": "quick_link", "note": "not news"}
    ]
    html = render("html", view(fixed, {}))
    assert "Correction: the headline read" in html and "“Two” (Quick links) was retracted: not news" in html
    markdown = render("markdown", view(fixed, {}))
    assert "Correction: the headline read" in markdown and "was retracted: not news" in markdown


def test_two_corrections_of_one_item_read_as_one_sentence_each_in_every_rendering() -> None:
    original = doc(item("st-1", "Northwind AI raises $120M Series B to build robot arms", summary="s"))
    acts = {
        "title": BriefCorrected(
            story_id="st-1",
            field="title",
            value="Northwind AI raises $120M to build robot arms",
            previous="Northwind AI raises $120M Series B to build robot arms",
            note="Series B was not confirmed",
            by="ann",
        ),
        "summary": BriefCorrected(
            story_id="st-1", field="summary", value="shorter", previous="s", note="tightened", by="bo"
        ),
    }
    fixed = write.apply_editor_acts(original, {"st-1": acts}, {})
    line = (
        "Correction: the headline read “Northwind AI raises $120M Series B to build robot arms”. "
        "Series B was not confirmed. The summary read “s”. Tightened."
    )
    assert fixed.items[0].correction == line
    for kind in ("markdown", "html", "text"):
        shown = render(kind, view(fixed, {}))
        assert "Series B was not confirmed. The summary read “s”. Tightened." in shown, kind


def test_a_correction_without_a_note_keeps_its_one_sentence() -> None:
    act = BriefCorrected(story_id="st-1", field="summary", value="new", previous="old", note="", by="ann")
    fixed = write.apply_editor_acts(doc(item("st-1", "One", summary="old")), {"st-1": {"summary": act}}, {})
    assert fixed.items[0].correction == "Correction: the summary read “old”."


def test_a_summary_correction_quotes_what_readers_had_a_long_one_shortened() -> None:
    """Without a note, "the summary was corrected" told readers nothing: the line quotes the old text."""
    old = "Orchard raised $12M from Acme. " + "It plans to hire engineers in Berlin and Lisbon. " * 8
    act = BriefCorrected(story_id="st-1", field="summary", value="new", previous=old, note="", by="ann")
    fixed = write.apply_editor_acts(doc(item("st-1", "One", summary=old)), {"st-1": {"summary": act}}, {})
    line = fixed.items[0].correction or ""
    assert line.startswith("Correction: the summary read “Orchard raised $12M from Acme. It plans")
    assert line.endswith("”.") and len(line) < 260, line
    for kind in ("markdown", "html", "text", "entry", "email"):
        assert "the summary read" in render(kind, view(fixed, {})), kind  # type: ignore[arg-type]
    zh = write.apply_editor_acts(
        brief(item("st-1", "One", summary="旧摘要"), language="zh"), {"st-1": {"summary": act}}, {}
    )
    assert zh.items[0].correction == "更正：原摘要为“" + write.short_summary(old, limit=200) + "”。"


def test_the_diff_of_two_versions_names_added_removed_reworded_and_moved_items() -> None:
    older = doc(item("a", "A"), item("b", "B"), item("c", "C"))
    newer = doc(item("b", "B"), item("a", "A, corrected"), item("d", "D"))
    changes = {(c.change, c.story_id) for c in versions.diff(older, newer)}
    assert changes == {
        ("moved", "b"),
        ("reworded", "a"),
        ("moved", "a"),
        ("added", "d"),
        ("removed", "c"),
    }
    moved = {c.story_id: c.detail for c in versions.diff(older, newer) if c.change == "moved"}
    assert all(" → " in d and "->" not in d for d in moved.values()), moved  # the desk's arrow
    assert versions.diff(older, older) == []


def test_a_same_story_answer_keeps_its_payload_and_id_and_the_desk_adds_who_and_where(tmp_path) -> None:
    from datetime import date

    from storage.events import new_event, utcnow
    from storage.registry import REGISTRY
    from tasks import steps
    from tasks.settings import load_settings

    config = tmp_path / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    ctx = steps.make_context(load_settings(str(config)), date(2025, 8, 6), "review-1")
    pair = ["art-a", "art-b"]
    answered = steps.story_link(ctx, pair, True, "human", question_id="q-1")
    before = new_event(  # the v1 payload an answer recorded before the desk existed
        "story.merged",
        {"article_ids": pair, "question_id": "q-1"},
        brief_date=ctx.day,
        run_id="another-run",
        subject_id="art-a",
        produced_by="review@1:human",
        occurred_at=utcnow(),
    )
    assert answered.payload == {"article_ids": pair, "question_id": "q-1"}
    assert answered.event_id == before.event_id  # a fact: the same answer is stored once
    at_desk = steps.story_link(ctx, pair, False, "human", person="ann", via="desk")
    assert at_desk.event_type == "story.split" and at_desk.schema_version == 2
    assert (at_desk.payload["person"], at_desk.payload["via"]) == ("ann", "desk")
    assert REGISTRY.upcast("story.split", 1, {"article_ids": pair}) == (2, {"article_ids": pair})


def test_a_stored_v1_retraction_reads_as_v2_and_a_retraction_after_an_undo_is_a_fact_of_its_own() -> None:
    from datetime import UTC, date, datetime

    from storage.events import new_event
    from storage.payloads import StoryRetractedV2
    from storage.typed import payload_of

    v1 = {"story_id": "st-2", "title": "Two", "note": "not news", "by": "ann"}
    stored = {"event_type": "story.retracted", "schema_version": 1, "payload": v1}
    read = payload_of(stored, StoryRetracted)
    assert isinstance(read, StoryRetractedV2) and read.follows is None and read.note == "not news"

    def retraction(**more: str) -> str:
        at = datetime(2025, 8, 6, 9, tzinfo=UTC)
        made = new_event(
            "story.retracted",
            {**v1, **more},
            brief_date=date(2025, 8, 6),
            run_id="r",
            subject_id="st-2",
            produced_by="review@1:ann",
            occurred_at=at,
        )
        return made.event_id

    first = retraction()
    assert first == retraction()  # recorded twice, one fact
    assert retraction(follows="undo-1") != first != retraction(follows="undo-2")
    assert retraction(follows="undo-1") != retraction(follows="undo-2")


def test_the_diff_names_a_lead_mark_a_relevance_or_category_change_and_a_retraction() -> None:
    older = doc(item("a", "A"), item("b", "B"), item("c", "C"))
    marked = older.items[0].model_copy(update={"lead": True})
    moved = older.items[1].model_copy(update={"relevance": "related", "category": "Tools"})
    newer = doc(marked, moved).model_copy(
        update={"retracted": [Retracted(story_id="c", title="C", section="top", note="wrong")]}
    )
    found = {(c.change, c.story_id): c.detail for c in versions.diff(older, newer)}
    assert found[("marked", "a")] == "marked lead"
    assert found[("marked", "b")] == f"relevance core -> related; category {older.items[1].category} -> Tools"
    assert found[("removed", "c")].startswith("retracted from ")
    assert versions.diff(newer, older)[0].detail == "no longer lead"
