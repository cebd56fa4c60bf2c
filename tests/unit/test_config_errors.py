"""A config's mistakes: every one at once, in the file's own terms, with the nearest known key."""

from __future__ import annotations

from pathlib import Path

import pytest

from storage.errors import ConfigError
from tasks.settings import parse_settings

FILE = Path("/srv/brief/brief.toml")


def mistakes(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_settings(data, FILE)
    lines = str(caught.value).split("\n")
    assert all(line.startswith(f"{FILE}: ") for line in lines)
    return [line.removeprefix(f"{FILE}: ") for line in lines]


def test_a_misspelt_key_is_named_with_a_suggestion_not_as_a_missing_one() -> None:
    assert mistakes({"storage": {"rooot": "x"}}) == ["unknown key 'rooot' in [storage]; did you mean 'root'?"]
    source = {"name": "labnotes", "ur": "https://labnotes.example/feed"}
    assert mistakes({"storage": {"root": "x"}, "sources": [source]}) == [
        "unknown key 'ur' in [[sources]] 'labnotes'; did you mean 'url'?"
    ]


def test_every_mistake_of_the_file_is_reported_at_once_in_its_own_terms() -> None:
    data = {
        "storage": {"root": "x"},
        "timezon": "Europe/Amsterdam",
        "sources": [{"name": "a", "url": "https://a.example/feed"}, {"url": "https://b.example/feed"}],
        "delivery": [{"name": "email"}],
        "alerting": {"late_after": "9 am"},
    }
    found = mistakes(data)
    assert "unknown key 'timezon' at the top level; did you mean 'timezone'?" in found
    assert "[[sources]] #2: name is required" in found
    assert "[[delivery]] 'email': url is required" in found
    assert any(line.startswith("[alerting] late_after is wrong: ") for line in found), found
    assert len(found) == 4


def test_a_key_with_no_near_name_lists_the_known_ones_and_a_missing_table_is_named() -> None:
    [line] = mistakes({"storage": {"root": "x"}, "alerting": {"silence": 2}})
    assert line == "unknown key 'silence' in [alerting]; known keys: failing_runs, late_after, silent_days"
    assert mistakes({}) == ["the [storage] table is required"]


def test_a_value_of_the_wrong_type_or_out_of_range_is_said_in_the_files_terms() -> None:
    sources = [
        {"name": "a", "url": "https://a.example/feed", "weight": "heavy"},
        {"name": "b", "url": "https://b.example/feed", "weight": 99},
        {"name": "c", "url": "https://c.example/feed", "on_topic": "perhaps"},
    ]
    found = mistakes({"storage": {"root": "x"}, "sources": sources})
    assert found == [
        "[[sources]] 'a': weight must be a number (e.g. 1.5), not 'heavy'",
        "[[sources]] 'b': weight must be at most 10, not 99",
        "[[sources]] 'c': on_topic must be true or false, not 'perhaps'",
    ]
    assert not any("Input should" in line for line in found)  # pydantic's own wording
