"""The ``brief`` command, run in this process as the console script runs it.

``brief(*args)`` calls ``flows.cli.main`` (the entry point, with its one-line errors and exit
codes) inside click's test isolation: argv, stdin, stdout, stderr, the environment and the
working directory are swapped for the call and put back after. It answers like
``subprocess.run(..., capture_output=True, text=True)``, so a test reads ``returncode``,
``stdout`` and ``stderr`` either way. A handful of tests still start a real process
(``real_process``) to cover the installed entry point itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

REPO = Path(__file__).resolve().parents[1]
_LOCK = threading.Lock()  # argv, cwd and the standard streams are process-wide


@dataclass
class Completed:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def brief(
    *args: str, cwd: Path | str | None = None, env: dict[str, str] | None = None, input: str | None = None
) -> Completed:
    """Run ``brief ARGS`` in this process; never raises for a non-zero exit."""
    from flows import cli

    runner = CliRunner()
    env = {"COLUMNS": "160", **(env or {})}
    with _LOCK, runner.isolation(input=input, env=env) as (stdout, stderr, _):
        old_argv, old_cwd, old_widths = sys.argv, os.getcwd(), (cli.out._width, cli.err._width)
        sys.argv = ["brief", *args]
        # the consoles read COLUMNS once, when a process imports them: give them this call's
        cli.out.width = cli.err.width = int(env["COLUMNS"])
        if cwd is not None:
            os.chdir(cwd)
        code: int = 0
        try:
            cli.main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            sys.argv = old_argv
            os.chdir(old_cwd)
            cli.out._width, cli.err._width = old_widths
        return Completed(
            ["brief", *args],
            code,
            stdout.getvalue().decode("utf-8", "replace"),
            stderr.getvalue().decode("utf-8", "replace"),
        )


def real_process(
    *args: str, cwd: Path | str = REPO, env: dict[str, str] | None = None, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``brief ARGS`` as a new Python process (for the tests of the entry point itself)."""
    return subprocess.run(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        input=input,
        timeout=180,
        env={**os.environ, "COLUMNS": "160", **(env or {})},
    )
