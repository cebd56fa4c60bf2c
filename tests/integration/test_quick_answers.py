"""``brief --help``, a command's ``--help`` and a mistake in the config answer at once: the config is
read and checked before anything that loads polars, pyarrow, Prefect, the event types or the models
is imported. Each case runs in a fresh process, which then lists the heavy modules it imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

HEAVY = (
    "polars",
    "pyarrow",
    "pandas",
    "prefect",
    "torch",
    "sentence_transformers",
    "ops.runs",
    "storage.payloads",
)
LIST_HEAVY = (
    "import sys\n"
    "from flows import cli\n"
    "sys.argv = ['brief', *sys.argv[1:]]\n"
    "code = 0\n"
    "try:\n"
    "    cli.main()\n"
    "except SystemExit as exc:\n"
    "    code = exc.code\n"
    f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
    "print('exit', code, 'heavy', ' '.join(heavy) or '-', file=sys.stderr)\n"
)


def answered(*args: str) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", LIST_HEAVY, *args], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    said, last = done.stderr.rstrip().rsplit("\n", 1) if "\n" in done.stderr.strip() else ("", done.stderr)
    return said, last.strip()


@pytest.fixture
def configs(tmp_path: Path) -> dict[str, Path]:
    misspelt = tmp_path / "misspelt.toml"
    misspelt.write_text(
        '[storage]\nrooot = "store"\n\n[[sources]]\nname = "a"\nurl = "https://a.example/feed"\n'
    )
    return {"misspelt": misspelt}


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["stats", "--help"], ["backfill", "--help"]])
def test_help_loads_nothing_heavy(args: list[str]) -> None:
    _, last = answered(*args)
    assert last == "exit 0 heavy -", last


@pytest.mark.parametrize(
    "command", [["run"], ["stats"], ["events"], ["backfill", "--start", "2025-08-05", "--end", "2025-08-06"]]
)
def test_a_config_mistake_is_said_before_anything_heavy_loads(
    configs: dict[str, Path], command: list[str]
) -> None:
    said, last = answered(*command, "--config", str(configs["misspelt"]))
    assert last == "exit 2 heavy -", (said, last)
    assert said.startswith("error: ") and "rooot" in said, said


def test_a_checked_config_is_taken_only_for_the_same_file_and_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settings a command checked as it parsed ``--config`` stand for that file only: a copy of it
    elsewhere (same name, size and time, another root) or another BRIEF_* variable is parsed anew."""
    import shutil

    from tasks.settings import config_parses, forget_kept_settings, load_settings

    first, second = tmp_path / "a" / "brief.toml", tmp_path / "b" / "brief.toml"
    first.parent.mkdir()
    second.parent.mkdir()
    first.write_text('[storage]\nroot = "store"\n\n[[sources]]\nname = "a"\nurl = "https://a.example/feed"\n')
    shutil.copy2(first, second)
    try:
        monkeypatch.chdir(first.parent)
        checked = load_settings("brief.toml", keep=True)
        parses = config_parses()
        assert load_settings("brief.toml") is checked and config_parses() == parses  # taken, not parsed
        load_settings("brief.toml", keep=True)
        monkeypatch.chdir(second.parent)
        elsewhere = load_settings("brief.toml")
        assert elsewhere.storage.root != checked.storage.root and config_parses() == parses + 2
        load_settings("brief.toml", keep=True)
        monkeypatch.setenv("BRIEF_TIMEZONE", "Europe/Amsterdam")
        assert load_settings("brief.toml").timezone == "Europe/Amsterdam"
    finally:
        forget_kept_settings()
