"""A store root nothing can be written under, or an --out nothing can be written at: one line,
exit 2, nothing written; ``brief check`` finds the root out with a probe file it removes again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.cli import brief
from tests.conftest import REPO


def sample_with_root(tmp_path: Path, root: str) -> Path:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', f'root = "{root}"'))
    return config


def unwritable_roots(tmp_path: Path) -> list[str]:
    regular = tmp_path / "a-file"
    regular.write_text("not a folder")
    return ["/proc/dailybrief-store", str(regular / "store")]


@pytest.mark.parametrize("which", [0, 1], ids=["proc", "under-a-file"])
def test_check_finds_an_unwritable_root(tmp_path: Path, which: int) -> None:
    root = unwritable_roots(tmp_path)[which]
    config = sample_with_root(tmp_path, root)
    done = brief("check", "--date", "2025-08-06", "--config", str(config))
    assert done.returncode == 1, done.stdout + done.stderr
    storage = next(line for line in done.stdout.splitlines() if "storage" in line)
    assert "cannot be written" in done.stdout and "[storage] root" in done.stdout, done.stdout
    assert "FAIL" in storage, storage
    assert "Traceback" not in done.stdout + done.stderr
    said = next(line for line in done.stderr.splitlines() if line.startswith("error: storage"))
    assert said.count("[storage] root") == 1, said  # how to fix it, said once


@pytest.mark.parametrize(
    "command",
    [
        ["run", "--date", "2025-08-06"],
        ["backfill", "--start", "2025-08-05", "--end", "2025-08-06"],
        ["collect", "--date", "2025-08-06"],
    ],
    ids=["run", "backfill", "collect"],
)
@pytest.mark.parametrize("which", [0, 1], ids=["proc", "under-a-file"])
def test_a_command_that_writes_refuses_an_unwritable_root_in_one_line(
    tmp_path: Path, command: list[str], which: int
) -> None:
    root = unwritable_roots(tmp_path)[which]
    config = sample_with_root(tmp_path, root)
    done = brief(*command, "--config", str(config))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: storage root {root!r} cannot be written"), lines[0]
    assert "[storage] root" in lines[0]
    assert not Path(root).exists()


def test_check_of_a_writable_root_leaves_nothing_behind(tmp_path: Path) -> None:
    """The probe is removed, and so is every folder it made for it: a root that was not there is
    still not there (the first run makes it)."""
    config = sample_with_root(tmp_path, "new/store")
    done = brief("check", "--date", "2025-08-06", "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "empty; the first run fills it" in done.stdout
    assert not (tmp_path / "samples" / "new").exists()
    existing = tmp_path / "samples" / "old"
    existing.mkdir()
    config.write_text(config.read_text().replace('root = "new/store"', 'root = "old"'))
    assert brief("check", "--date", "2025-08-06", "--config", str(config)).returncode == 0
    assert list(existing.iterdir()) == []


def test_export_to_an_unwritable_out_is_one_line(tmp_path: Path) -> None:
    config = sample_with_root(tmp_path, "store")
    assert brief("collect", "--date", "2025-08-06", "--config", str(config)).returncode == 0
    regular = tmp_path / "a-file"
    regular.write_text("not a folder")
    for out in ("/proc/nope/x", str(regular / "x")):
        done = brief(
            "export",
            "events",
            "--start",
            "2025-08-06",
            "--end",
            "2025-08-06",
            "--out",
            out,
            "-c",
            str(config),
        )
        assert done.returncode == 2, done.stdout + done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: --out {out!r} cannot be written"), done.stderr
        assert not Path(out).parent.exists() or Path(out).parent == regular


@pytest.mark.parametrize("command", [["events"], ["review", "--date", "2025-08-06"], ["desk"]])
def test_a_command_that_reads_names_the_unwritable_root_not_a_first_run(
    tmp_path: Path, command: list[str]
) -> None:
    """'run brief run first' would only lead to the same root refused again."""
    root = unwritable_roots(tmp_path)[1]
    config = sample_with_root(tmp_path, root)
    done = brief(*command, "--config", str(config))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()], done.stderr
    assert f"storage root {root!r} cannot be written" in done.stderr and "brief run" not in done.stderr
