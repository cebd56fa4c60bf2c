"""The collector's pace in a ``brief`` process: young objects collected every 50,000, and no
collection over what is left when the process exits (``flows/lifetime.py``)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO

# an exit handler registered before the command's runs after the command's own (last in, first out)
WATCH = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('at exit:', gc.get_freeze_count() > 0, gc.get_threshold()))\n"
    "sys.argv = ['brief', '--version']\n"
    "import flows.cli\n"
    "flows.cli.main()\n"
)


def test_a_brief_command_collects_young_objects_less_often_and_none_at_its_exit() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WATCH], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "at exit: True (50000, 10, 10)"


def test_without_the_command_python_keeps_its_own_pace() -> None:
    plain = WATCH.replace("import flows.cli\nflows.cli.main()\n", "")
    done = subprocess.run(
        [sys.executable, "-c", plain], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "at exit: False (700, 10, 10)"
