"""`brief correct` and `brief retract` name a story as `brief trace` does (its id or its first
characters), and without --date say which day's brief holds a story that today's does not."""

from __future__ import annotations

import shutil
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from ops.acts import act_story
from storage.errors import InputError
from storage.events import new_event
from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO

DAY = date(2025, 8, 6)
STORIES = ["st-1d93f8aa01", "st-1d93f8bb02", "st-fdba15cc03"]


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """The samples' config over a store that holds one published brief (2025-08-06, v1 and v2)."""
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    published = [
        new_event(
            "brief.published",
            {
                "brief_date": DAY.isoformat(),
                "version": version,
                "items": len(stories),
                "stories": stories,
                "files": {"json": f"briefs/{DAY}.json"},
                "content_hash": f"c0ffee{version}",
            },
            brief_date=DAY,
            run_id="run-1",
            subject_id=DAY.isoformat(),
            produced_by="publish@1",
            occurred_at=datetime(2025, 8, 6, 7, version, tzinfo=UTC),
        )
        for version, stories in ((1, STORIES), (2, STORIES[1:]))  # v2: the first one retracted
    ]
    store.append(published)
    return config


def test_a_story_of_another_day_without_date_names_that_day(config: Path) -> None:
    for args in (["correct", "st-fdba15", "--title", "T"], ["retract", "st-fdba15cc03", "--note", "n"]):
        done = brief(*args, "--config", str(config))
        assert done.returncode == 2, done.stderr
        said = done.stderr.strip()
        assert f"is in the brief of {DAY}: add --date {DAY}" in said, said
        assert "no brief is published" not in said


def test_a_prefix_naming_several_stories_is_ambiguous_and_a_short_one_too_short(config: Path) -> None:
    done = brief("correct", "st-1d93f8", "--title", "T", "--date", str(DAY), "--config", str(config))
    assert done.returncode == 2
    assert "'st-1d93f8' is ambiguous: it names 2 items of the brief of 2025-08-06" in done.stderr
    assert "(st-1d93f8aa01, st-1d93f8bb02); give more of its id" in done.stderr
    done = brief("retract", "st-1d", "--note", "n", "--date", str(DAY), "--config", str(config))
    assert done.returncode == 2
    assert "too short to name an item" in done.stderr


def test_a_unique_prefix_names_its_story_even_a_retracted_one(config: Path) -> None:
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    assert act_story(store, DAY, "st-fdba15", dated=True) == "st-fdba15cc03"
    assert act_story(store, DAY, "st-1d93f8a", dated=True) == "st-1d93f8aa01"  # in v1 only: --undo finds it
    assert act_story(store, DAY, "st-1d93f8bb02", dated=False) == "st-1d93f8bb02"
    assert act_story(store, DAY, "st-nothing", dated=True) == "st-nothing"  # the act says why not
    with pytest.raises(InputError, match="add --date 2025-08-06"):
        act_story(store, date(2025, 8, 7), "st-fdba15", dated=False)


def test_a_mark_names_its_story_by_a_prefix_as_correct_does(config: Path) -> None:
    done = brief("review", "--mark", "st-1d93f8=off-topic", "--date", str(DAY), "--config", str(config))
    assert done.returncode == 2
    assert "'st-1d93f8' is ambiguous" in done.stderr, done.stderr
