"""Commands printed for a person to copy name the config that was used, unless it is the default."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from tasks.alerts import Cause
from tasks.settings import load_settings, parse_settings

MINIMAL = '[storage]\nroot = "store"\n'


def test_the_default_config_needs_no_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "brief.toml").write_text(MINIMAL)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BRIEF_CONFIG", raising=False)
    assert load_settings().config_option == ""
    assert load_settings("brief.toml").config_option == ""  # named, but what the default finds


def test_another_config_is_named_as_it_was_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "my configs"
    folder.mkdir()
    (folder / "team.toml").write_text(MINIMAL)
    monkeypatch.chdir(tmp_path)
    assert load_settings("my configs/team.toml").config_option == " --config 'my configs/team.toml'"
    monkeypatch.setenv("BRIEF_CONFIG", str(folder / "team.toml"))
    assert load_settings().config_option == f" --config '{folder / 'team.toml'}'"
    # a copy made on the way (a policy applied, say) keeps it
    copied = load_settings().model_copy(update={"language": "zh"})
    assert copied.config_option == f" --config '{folder / 'team.toml'}'"


def test_settings_made_without_a_file_name_none() -> None:
    assert parse_settings({"storage": {"root": "/tmp/store"}}).config_option == ""


def test_an_alerts_more_line_runs_with_the_config() -> None:
    cause = Cause("withheld", date(2025, 8, 6), "withheld", look="brief events --date 2025-08-06")
    _, body = cause.message(" --config /etc/brief/team.toml")
    assert body.endswith("More: brief events --date 2025-08-06 --config /etc/brief/team.toml")
    assert cause.message()[1].endswith("More: brief events --date 2025-08-06")
