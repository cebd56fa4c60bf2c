"""Where settings come from: the config file (its paths its folder's) and BRIEF_* variables only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.errors import ConfigError
from tasks.settings import config_parses, load_settings, parse_settings


def write_config(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "prompts").mkdir(exist_ok=True)
    (folder / "templates").mkdir(exist_ok=True)
    config = folder / "brief.toml"
    config.write_text(text)
    return config


PATHS = """
policy_file = "policies/mine.toml"
[storage]
root = "store"
[[sources]]
name = "lab"
url = "file://feeds/lab/{date}.xml"
[[sources]]
name = "wire"
url = "https://wire.example/feed"
[output]
templates = "templates"
[llm]
base_url = "http://127.0.0.1:9/v1"
model = "m"
prompts = "prompts"
"""


def test_relative_paths_are_the_config_folders_wherever_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "conf"
    config = write_config(folder, PATHS)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    settings = load_settings(str(config))
    assert settings.storage.root == str(folder / "store")
    assert settings.sources[0].url == f"file://{folder}/feeds/lab/{{date}}.xml"
    assert settings.sources[1].url == "https://wire.example/feed"  # an address stays as written
    assert settings.policy_file == str(folder / "policies" / "mine.toml")
    assert settings.output.templates == str(folder / "templates")
    assert settings.llm is not None and settings.llm.prompts == str(folder / "prompts")
    assert (
        settings.policy.editorial_model == "builtin:ai" and settings.policy.story_model == "builtin:stories"
    )


def test_absolute_home_and_url_roots_stay_as_written(tmp_path: Path) -> None:
    for root in ("/srv/brief", "~/brief", "s3://bucket/brief", "memory://test"):
        config = write_config(tmp_path / "c", f'[storage]\nroot = "{root}"\n')
        assert load_settings(str(config)).storage.root == root


@pytest.mark.parametrize("root", ["", "  "])
def test_an_empty_store_root_is_refused_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str
) -> None:
    config = write_config(tmp_path / "c", f'[storage]\nroot = "{root}"\n')
    with pytest.raises(ConfigError, match=r"\[storage\] root is wrong: is empty; name the store's folder"):
        load_settings(str(config))
    monkeypatch.setenv("BRIEF_STORAGE__ROOT", root)  # the same from the environment
    with pytest.raises(ConfigError, match="BRIEF_STORAGE__ROOT"):
        load_settings(str(write_config(tmp_path / "d", '[storage]\nroot = "store"\n')))


def test_settings_validated_without_a_file_keep_their_paths(tmp_path: Path) -> None:
    settings = parse_settings({"storage": {"root": "store"}, "policy_file": "p.toml"})
    assert settings.storage.root == "store" and settings.policy_file == "p.toml"


def test_brief_variables_are_read_over_the_file_and_no_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "conf", '[storage]\nroot = "store"\n')
    monkeypatch.setenv("BRIEF_TIMEZONE", "Europe/Amsterdam")
    monkeypatch.setenv("BRIEF_STORAGE__ROOT", "other")  # relative: the config's folder's too
    monkeypatch.setenv("BRIEF_SOURCES", json.dumps([{"name": "x", "url": "https://x.example/feed"}]))
    monkeypatch.setenv("TIMEZONE", "Asia/Tokyo")  # not under the prefix: never read
    monkeypatch.setenv("STORAGE__ROOT", "/not/this")
    settings = load_settings(str(config))
    assert settings.timezone == "Europe/Amsterdam"
    assert settings.storage.root == str(tmp_path / "conf" / "other")
    assert [s.name for s in settings.sources] == ["x"]


def test_a_bad_variable_is_named_with_the_files_mistakes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "conf", '[storage]\nroot = "store"\nrooot = 1\n')
    monkeypatch.setenv("BRIEF_TIMEZONE", "Mars/Base")
    with pytest.raises(ConfigError) as refused:
        load_settings(str(config))
    lines = str(refused.value).splitlines()
    assert len(lines) == 3, lines
    assert "unknown key 'rooot' in [storage]" in lines[0]
    assert "timezone is wrong: unknown timezone 'Mars/Base'" in lines[1]
    assert lines[2].endswith("set in the environment over the file: BRIEF_TIMEZONE")  # not in the file


def test_each_load_parses_the_file_once(tmp_path: Path) -> None:
    config = write_config(tmp_path / "conf", '[storage]\nroot = "store"\n')
    before = config_parses()
    load_settings(str(config))
    assert config_parses() - before == 1


def test_a_variable_that_is_not_json_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "conf", '[storage]\nroot = "store"\n')
    monkeypatch.setenv("BRIEF_SOURCES", "not json")
    with pytest.raises(ConfigError) as refused:
        load_settings(str(config))
    said = str(refused.value)
    assert "\n" not in said and said.startswith(
        f"{config}: the environment variable BRIEF_SOURCES is not JSON"
    )
    assert said.endswith("correct it or unset it")


def test_a_mistake_in_a_variables_entry_is_named_by_that_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(
        tmp_path / "conf",
        '[storage]\nroot = "store"\n[[sources]]\nname = "labnotes"\nurl = "https://l.example/feed"\n',
    )
    monkeypatch.setenv("BRIEF_SOURCES", json.dumps([{"name": "x", "ur": "https://x.example/feed"}]))
    with pytest.raises(ConfigError) as refused:
        load_settings(str(config))
    lines = str(refused.value).splitlines()
    assert "unknown key 'ur' in [[sources]] 'x'; did you mean 'url'?" in lines[0], lines
    assert "labnotes" not in str(refused.value) and lines[-1].endswith("over the file: BRIEF_SOURCES")


def test_a_table_variable_inside_another_that_is_not_json_is_named_as_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = write_config(tmp_path / "conf", '[storage]\nroot = "store"\n')
    monkeypatch.setenv("BRIEF_DELIVERY__CHANNELS", "not json")
    with pytest.raises(ConfigError) as refused:
        load_settings(str(config))
    assert "the environment variable BRIEF_DELIVERY__CHANNELS is not JSON" in str(refused.value)
