"""A checkout that finds the local Prefect server another checkout started says so once on the
terminal: which checkout started it, its Prefect home, how to stop it and how to keep one of its
own. The server here is a stand-in on 127.0.0.1 that answers Prefect's health check."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from flows.keptserver import CHECKOUT, STATE, prefect_api


class Healthy(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/api/health" else 404)
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"true")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A Prefect home whose state names a server that answers, its watchdog this (live) process."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Healthy)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    home = tmp_path / "prefect-home"
    home.mkdir()
    monkeypatch.setenv("PREFECT_HOME", str(home))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("BRIEF_PREFECT_KEEP", raising=False)
    state = {"port": server.server_port, "pid": os.getpid(), "home": str(home), "log": str(home / "x.log")}
    (home / STATE).write_text(json.dumps(state))
    yield home
    server.shutdown()


def used(home: Path) -> tuple[list[str], list[str]]:
    """What one command that uses the server says on the terminal, and in its log."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    said: list[str] = []
    # a test session's own Prefect server (the harness other tests of this worker use) is not there
    with temporary_settings(restore_defaults={PREFECT_API_URL}), prefect_api(said.append) as notes:
        pass
    return said, notes


def started_by(home: Path, checkout: str) -> None:
    state = json.loads((home / STATE).read_text())
    (home / STATE).write_text(json.dumps({**state, "checkout": checkout}))


def test_a_server_of_another_checkout_is_said_once_with_its_checkout_home_and_stop(running: Path) -> None:
    started_by(running, "/home/ana/other-clone")
    said, notes = used(running)
    [line] = said
    assert "/home/ana/other-clone" in line and str(running) in line, line
    assert "'brief serve --stop' stops it" in line and "PREFECT_HOME" in line, line
    assert "of /home/ana/other-clone" in notes[0]  # the run's log says it too
    again, _ = used(running)
    assert again == []  # once per checkout


def test_a_server_this_checkout_started_is_used_without_a_word(running: Path) -> None:
    started_by(running, CHECKOUT)
    said, notes = used(running)
    assert said == [] and "kept from an earlier command" in notes[0]
