"""A kept server asked to stop while it still starts (``brief serve --stop`` sends its watchdog a
SIGTERM): the watchdog gives the start up at once and stops the server process with everything it
began, rather than waiting for the start to finish while the stopper's patience runs out and it
kills the watchdog, leaving a Prefect server that nothing stops."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from flows.keptserver import LOG, STATE, stop_kept
from flows.serve import free_port
from tests.conftest import REPO
from tests.e2e.test_kept_server import env_for


def session_members(sid: int) -> list[int]:
    """The pids of the processes of session ``sid`` still alive (not zombies)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            members.append(int(entry.name))
    return members


def test_a_stop_during_the_start_stops_the_starting_server_and_everything_it_began(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"  # no database yet: its server migrates one first, a slow start
    home.mkdir()
    log = home / LOG
    server_pid = None
    with open(log, "ab") as out:  # where 'brief' sends a watchdog's output
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "flows.keptwatch", str(home), str(free_port()), "600"],
            cwd=REPO,
            env=env_for(home),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 60
        while "starting the server (pid " not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline and watchdog.poll() is None, (
                "the watchdog never started a server"
            )
            time.sleep(0.05)
        server_pid = int(log.read_text().split("starting the server (pid ", 1)[1].split(")")[0])
        assert session_members(server_pid), "the server process is not running"
        watchdog.send_signal(signal.SIGTERM)
        assert watchdog.wait(timeout=30) == 0
        said = log.read_text()
        assert "asked to stop while the server started: stopped it" in said, said
        assert "serving on" not in said, said  # it gave the start up, it did not outwait it
        deadline = time.monotonic() + 30
        while session_members(server_pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert session_members(server_pid) == [], "a process of the server outlived its stop"
    finally:  # on a failure, nothing of it is left running: the server runs in a session of its own
        watchdog.kill()
        for pid in session_members(watchdog.pid) + (session_members(server_pid) if server_pid else []):
            os.kill(pid, signal.SIGKILL)


def test_a_stop_never_signals_a_program_that_took_a_gone_watchdogs_pid(tmp_path: Path) -> None:
    """A state file left by a watchdog gone without a word (a restart) names a pid the system may
    have given another program since: ``brief serve --stop`` forgets the file and leaves it be."""
    home = tmp_path / "prefect-home"
    home.mkdir()
    other = subprocess.Popen(["sleep", "300"])
    try:
        state = {"port": free_port(), "pid": other.pid, "home": str(home), "log": str(home / LOG)}
        (home / STATE).write_text(json.dumps(state))
        assert stop_kept(home, timeout_s=5) is None
        assert other.poll() is None, "the stop signalled a program that is no watchdog"
        assert not (home / STATE).exists()
    finally:
        other.kill()
        other.wait()
