"""The long waits of a first day say what they are: each install step of ``make`` says what it
installs and roughly how long it takes before it starts, and the spinner of a run says that the
embedding model is loading while it loads for the first time."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

import pytest
from rich.console import Console

from flows.runlog import RunLog, run_output
from flows.views.console import saying
from tasks.embed import SentenceTransformerEmbedder, _RememberingEmbedder
from tests.conftest import REPO


def test_each_install_step_says_what_it_installs_and_how_long_before_it_starts(tmp_path: Path) -> None:
    planned = subprocess.run(
        ["make", "-n", "setup", f"VENV={tmp_path / 'venv'}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    installs = [k for k, line in enumerate(planned) if " -m pip install" in line]
    assert len(installs) == 3, planned
    for k in installs:
        said = planned[k - 1]
        assert said.startswith("echo "), (said, planned[k])
        assert re.search(r"\d+ (s|seconds?|min|minutes?)\b", said), said  # roughly how long
    torch, project = planned[installs[1] - 1], planned[installs[2] - 1]
    assert "torch" in torch and "dailybrief" in project and "requirements.lock" in project


def test_a_first_model_load_is_said_on_the_spinner_and_in_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_RememberingEmbedder, "_models", {})  # this process has loaded no model yet
    terminal = io.StringIO()
    status = Console(file=terminal, force_terminal=True, width=80).status("running the daily brief …")
    texts: list[str | None] = []

    def loading(text: str | None) -> None:
        texts.append(text)
        saying(status, "running the daily brief …")(text)
        status._live.refresh()  # drawn now, as the spinner's refresh thread would

    log = RunLog(tmp_path / "run.log", str(tmp_path / "run.log"))
    status.start()
    with run_output(log, lambda line: None, loading=loading):
        model = SentenceTransformerEmbedder()
        model.encode(["a first sentence"])
        model.encode(["a second sentence, the model loaded already"])
    status.stop()
    said = "loading the embedding model all-MiniLM-L6-v2 (first time, ~40 s) …"
    assert texts == [said, None]  # once, then back to what the run is doing
    assert said in terminal.getvalue()
    assert said in log.local.read_text()
