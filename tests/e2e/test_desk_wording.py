"""The desk in an editor's words, over HTTP against its application on the samples' day: History's
line for a version names the story an act was about by its headline."""

from __future__ import annotations

import html
from pathlib import Path

from tests.e2e.test_desk_consistency import built, client, config, csrf_of, current, seen_of
from tests.e2e.test_review import DAY

__all__ = ["built", "config"]  # fixtures


def act(desk, path: str, **fields: str):
    page = desk.get(f"/today?date={DAY}").text
    return desk.post(path, data={"date": DAY, "seen": seen_of(page), "csrf": csrf_of(page), **fields})


def test_history_names_the_story_a_mark_a_correction_and_a_retraction_were_about(config: Path) -> None:
    desk = client(config, "ann")
    first, second = current(config)["items"][:2]
    assert act(desk, "/today/mark", story=second["story_id"], mark="lead").status_code == 200
    fixed = act(desk, "/today/correct", story=first["story_id"], field="title", value="A plainer headline")
    assert fixed.status_code == 200, fixed.text
    assert (
        act(desk, "/today/retract", story=second["story_id"], note="withdrawn", sure="1").status_code == 200
    )
    history = html.unescape(desk.get("/history").text)
    assert f"ann: marked “{second['title']}” lead" in history
    assert f"ann: corrected the headline of “{first['title']}” to “A plainer headline”" in history
    assert f"ann: retracted “{second['title']}” (note: “withdrawn”)" in history


def test_a_refused_correction_or_undo_names_the_headline_not_the_story_id(config: Path) -> None:
    desk = client(config, "ann")
    item = current(config)["items"][0]
    same = act(desk, "/today/correct", story=item["story_id"], field="title", value=item["title"])
    said = html.unescape(same.text)
    assert same.status_code == 400
    assert f"the headline of “{item['title']}” already reads so" in said and item["story_id"] not in said
    empty = html.unescape(act(desk, "/today/correct", story=item["story_id"], field="title", value=" ").text)
    assert "the new headline is empty" in empty
    undo = act(desk, "/today/restore", story=item["story_id"])
    said = html.unescape(undo.text)
    assert undo.status_code == 400
    assert f"“{item['title']}” is not retracted" in said and item["story_id"] not in said
