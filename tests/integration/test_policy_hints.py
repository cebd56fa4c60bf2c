"""What `brief policy adopt` prints as the way back runs as printed, and `brief evaluate --regression
--policy` exits 1 when the candidate fails a case, as docs/commands.md says."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from flows.commands.policy import rollback_hint
from ops.improve import RegressionRun
from ops.regress import Gate, Result
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO
from tests.factories import run_event


def test_the_rollback_hint_runs_as_printed(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    (tmp_path / "samples" / "store").mkdir()
    hint = rollback_hint(load_settings(str(config)).config_option)
    command, *args = shlex.split(hint)
    assert command == "brief" and "--reason" in args and str(config) in args
    done = brief(*args)
    said = done.stdout + done.stderr
    assert "Missing option" not in said and "Usage:" not in said, said
    assert done.returncode == 2 and said.startswith("error: "), said  # the command ran: nothing to undo


def test_a_candidate_that_fails_a_case_the_policy_in_force_fails_too_is_a_failure() -> None:
    one = run_event("run.finished", "r")  # a case's event; what counts here is whether it passed
    both_fail = RegressionRun(
        "p1",
        [Result(one, False, "related")],
        "p2",
        Gate([Result(one, False, "related")], [Result(one, False, "related")]),
    )
    assert both_fail.faults == []  # it breaks nothing the policy in force passes …
    assert both_fail.evaluated_failed == both_fail.gate.candidate  # … yet it fails 1 of 1: exit 1
    fixed = RegressionRun(
        "p1",
        [Result(one, False, "related")],
        "p2",
        Gate([Result(one, False, "related")], [Result(one, True, "core")]),
    )
    assert fixed.evaluated_failed == []
    assert RegressionRun("p1", [Result(one, False, "related")]).evaluated_failed == [
        Result(one, False, "related")
    ]
