"""``brief run`` as a person runs it, in real processes: the Prefect server it keeps between commands,
and a run stopped on purpose (Ctrl-C, SIGTERM, a cancellation from the Prefect UI).

Each test's processes get their own ``PREFECT_HOME`` and no ``PREFECT_API_URL``, as on a fresh
machine; every server a test starts is stopped before it ends. Each home starts with a copy of
the run's migrated database (``migrated_prefect_db``), so that its server does not migrate one
again (about 6 s of a core each).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from flows.keptserver import LOCK, STATE, kept_server, recorded, stop_kept
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO, seed_prefect_home

DAY = "2025-08-06"
RUNS_JSONL = ["--date", DAY, "--projection", "runs", "--format", "jsonl"]
RERUN = f"; rerun with brief run --date {DAY} --config "


def stopped_line(cancelled_run: str, how: str = "after collect") -> str:
    """What a run stopped in its steps says last: where it stopped, that it is recorded cancelled
    (and by which id) and that nothing is published, and the command that runs it again."""
    return f"interrupted {how}: run {cancelled_run} recorded as cancelled, nothing published{RERUN}"


def env_for(home: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "BRIEF_PREFECT_KEEP")}
    return {**env, "PREFECT_HOME": str(home), "PYTHONPATH": str(REPO), "COLUMNS": "100", **more}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory, migrated_prefect_db: Path) -> Iterator[dict]:
    """The sample in a fresh folder, a Prefect home of its own; its kept server stopped at the end."""
    folder = tmp_path_factory.mktemp("kept-server")
    shutil.copytree(REPO / "samples", folder / "samples")
    config = folder / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    home = seed_prefect_home(folder / "prefect-home", migrated_prefect_db)
    yield {"config": config, "home": home, "env": env_for(home)}
    stop_kept(home)


def start_run(work: dict) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(work["config"]), "--date", DAY],
        cwd=REPO,
        env=work["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def first_step(process: subprocess.Popen[str], timeout_s: float = 300) -> str:
    """The run's first step line (its collect), once it is on the screen."""
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    assert ready, "no step line in time"
    line = process.stdout.readline()
    assert line.startswith("collect "), line + (process.stderr.read() if process.stderr else "")
    return line


def stopped_within(process: subprocess.Popen[str], seconds: float) -> tuple[int, str, float]:
    sent = time.monotonic()
    try:
        _, stderr = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return process.returncode, stderr, time.monotonic() - sent


def events(config: Path, event_type: str) -> list:
    return list(load_settings(str(config)).storage.event_store().read(event_types=[event_type]))


# one client for the tests' polls of a server (``httpx.post`` loads the certificates again each call)
API = httpx.Client(timeout=10)


def flow_run_states(api_url: str) -> dict[str, str]:
    answer = API.post(f"{api_url}/flow_runs/filter", json={"limit": 50})
    return {run["id"]: run["state"]["type"] for run in answer.json()}


def test_ctrl_c_stops_the_run_recorded_and_a_rerun_publishes_on_the_kept_server(work: dict) -> None:
    process = start_run(work)
    first_step(process)
    process.send_signal(signal.SIGINT)
    code, stderr, took = stopped_within(process, 5)
    assert code == 130, stderr
    [cancelled] = events(work["config"], "run.cancelled")
    assert stderr.strip().splitlines()[-1] == stopped_line(cancelled.run_id) + str(work["config"]), stderr
    assert took < 5, f"stopped in {took:.1f} s"
    # the first command started the server, said so once, and it outlived the run
    assert "a local Prefect server is kept for later commands" in stderr
    assert "brief serve --stop" in stderr
    server = recorded(work["home"])
    assert server is not None
    assert cancelled.payload["how"] == "SIGINT" and cancelled.payload["after"] == "collect"
    assert events(work["config"], "brief.published") == []  # nothing published
    assert not (work["config"].parent / "store" / "briefs" / f"{DAY}.md").exists()
    assert flow_run_states(server.api_url)[cancelled.run_id] == "CANCELLED"
    # the runs projection ends it cancelled: the alert check does not take it for a killed run
    replay = brief("replay", "--config", str(work["config"]), *RUNS_JSONL)  # reads the store only
    [run] = [json.loads(line) for line in replay.stdout.splitlines()]
    assert run["status"] == "cancelled", replay.stdout

    started = time.monotonic()
    again = subprocess.run(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(work["config"]), "--date", DAY],
        cwd=REPO,
        env=work["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    work["rerun_s"] = time.monotonic() - started
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Brief for {DAY} (v1, new version): 5 items" in again.stdout
    assert "kept for later commands" not in again.stderr  # it reused the server: nothing started
    assert recorded(work["home"]) == server  # the same server: same port, same watchdog pid
    states = flow_run_states(server.api_url)
    assert sorted(states.values()) == ["CANCELLED", "COMPLETED"]  # both runs listed in its UI
    log = Path(again.stdout.split("  log  ")[1].split()[0]).read_text()
    assert f"Prefect: the local server at {server.url}, kept from an earlier command" in log


def test_sigterm_stops_a_run_the_same_way_and_keeps_the_published_brief(work: dict) -> None:
    brief = work["config"].parent / "store" / "briefs" / f"{DAY}.md"
    if not brief.exists():
        pytest.skip("needs the brief the rerun of the test before published")
    before, published = brief.read_bytes(), len(events(work["config"], "brief.published"))
    process = start_run(work)
    first_step(process)
    process.send_signal(signal.SIGTERM)
    code, stderr, took = stopped_within(process, 5)
    cancelled = events(work["config"], "run.cancelled")
    assert code == 130 and stderr.strip().splitlines()[-1].startswith(stopped_line(cancelled[-1].run_id)), (
        stderr
    )
    assert took < 5, f"stopped in {took:.1f} s"
    assert [e.payload["how"] for e in cancelled] == ["SIGINT", "SIGTERM"]
    assert brief.read_bytes() == before and len(events(work["config"], "brief.published")) == published


class SlowFeed(BaseHTTPRequestHandler):
    """A dated archive that answers after ``DELAY_S``: a run's collect lasts that long."""

    DELAY_S = 20.0

    def do_GET(self) -> None:
        time.sleep(self.DELAY_S)
        body = (REPO / "samples" / "feeds" / "techwire" / f"{DAY}.xml").read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/rss+xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def test_a_cancellation_from_the_prefect_ui_ends_the_run_the_same_way(work: dict, tmp_path: Path) -> None:
    server = kept_server(work["home"])  # the one the tests before started, or a new one
    feed = ThreadingHTTPServer(("127.0.0.1", 0), SlowFeed)
    threading.Thread(target=feed.serve_forever, daemon=True).start()
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(
        config.read_text().replace('root = "../var/sample-store"', 'root = "store"')
        + f'\n[[sources]]\nname = "slowwire"\nurl = "http://127.0.0.1:{feed.server_port}/{{date}}.xml"\n'
    )
    before = set(flow_run_states(server.api_url))
    try:
        process = start_run({**work, "config": config})
        deadline, running = time.monotonic() + 300, []
        while not running and time.monotonic() < deadline and process.poll() is None:
            running = [
                i
                for i, state in flow_run_states(server.api_url).items()
                if state == "RUNNING" and i not in before
            ]
            time.sleep(0.2)
        assert len(running) == 1, process.communicate()
        httpx.post(
            f"{server.api_url}/flow_runs/{running[0]}/set_state",
            json={"state": {"type": "CANCELLING", "message": "cancelled in the UI"}, "force": True},
            timeout=10,
        ).raise_for_status()
        code, stderr, took = stopped_within(process, 5)
    finally:
        feed.shutdown()
    [cancelled] = events(config, "run.cancelled")
    last = stderr.strip().splitlines()[-1]
    assert code == 130 and last.startswith(stopped_line(cancelled.run_id, "during collect")), stderr
    assert took < 5, f"stopped in {took:.1f} s"  # the slow feed still had seconds to go
    assert cancelled.run_id == running[0] and cancelled.payload["how"] == "prefect-ui"
    assert flow_run_states(server.api_url)[running[0]] == "CANCELLED"


def test_two_commands_at_once_share_one_server_which_stops_when_unused(
    tmp_path: Path, migrated_prefect_db: Path
) -> None:
    home = seed_prefect_home(tmp_path / "home", migrated_prefect_db)
    idle = {"BRIEF_PREFECT_IDLE_SECONDS": "4"}
    ask = "from flows.keptserver import kept_server; s = kept_server(); print(s.pid, s.port, s.started)"
    both = [
        subprocess.Popen(
            [sys.executable, "-c", ask],
            cwd=REPO,
            env=env_for(home, **idle),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        answers = [p.communicate(timeout=300) for p in both]
        assert [p.returncode for p in both] == [0, 0], answers
        said = sorted(out.split() for out, _ in answers)
        assert said[0][:2] == said[1][:2]  # one watchdog, one port
        assert sorted(s[2] for s in said) == ["False", "True"]  # one started it, the other found it
        assert (home / LOCK).exists()
        # unused for 4 s, it stops and forgets itself
        pid = int(said[0][0])
        deadline = time.monotonic() + 60
        while (home / STATE).exists() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not (home / STATE).exists()
        assert "unused for" in (home / "brief-server.log").read_text()
        with pytest.raises(ProcessLookupError):
            for _ in range(100):  # the watchdog is gone once it has stopped the server
                os.kill(pid, 0)
                time.sleep(0.2)
    finally:
        stop_kept(home)


IDLE_S = 1.5  # the watchdog looks every 0.2 s, a command in use pushes its last use every 0.5 s


def test_a_server_in_use_outlives_its_idle_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, migrated_prefect_db: Path
) -> None:
    from flows.keptserver import answers, in_use

    home = seed_prefect_home(tmp_path / "home", migrated_prefect_db)
    monkeypatch.setenv("BRIEF_PREFECT_IDLE_SECONDS", str(IDLE_S))
    server = kept_server(home)
    try:
        with in_use(home, IDLE_S):
            time.sleep(4 * IDLE_S)  # four idle times: each third of one, the use is pushed on
            assert answers(server)
        deadline = time.monotonic() + 60
        # it stops answering, then its watchdog forgets it: wait for both (they are moments apart)
        while (answers(server) or recorded(home) is not None) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not answers(server) and recorded(home) is None
    finally:
        stop_kept(home)


def test_ctrl_c_before_the_run_begins_is_130_and_one_line_not_a_silent_success(
    tmp_path: Path, migrated_prefect_db: Path
) -> None:
    """Pressed while the command still starts its server (or imports): nothing began, and the
    command says so and ends 130, as a script must see it (it ended 0 without a word)."""
    folder = tmp_path / "early"
    shutil.copytree(REPO / "samples", folder / "samples")
    config = folder / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    home = seed_prefect_home(folder / "prefect-home", migrated_prefect_db)
    started = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(config), "--date", DAY],
        cwd=REPO,
        env=env_for(home, BRIEF_PREFECT_IDLE_SECONDS="5"),  # the server it began stops soon, unused
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (home / "brief-server.log").exists() and time.monotonic() < deadline:
            time.sleep(0.1)  # the command is starting its server: the run has not begun
        started.send_signal(signal.SIGINT)
        out, err = started.communicate(timeout=30)
        # the server it was starting is kept, known: the next command uses it, and 'brief serve
        # --stop' stops it (it ran on unknown to both, and the next run started a second one)
        kept = recorded(home)
        assert kept is not None and kept_server(home).pid == kept.pid
        assert stop_kept(home) is not None
    finally:
        started.kill()
        stop_kept(home)
    assert started.returncode == 130, (out, err)
    assert err.strip().count("\n") == 0, err  # one line, which says exactly what happened
    said = f"interrupted before the run of {DAY} started: nothing was written; run it with brief run"
    assert err.strip().startswith(said), err
    assert "Traceback" not in err and not (folder / "samples" / "store" / "briefs").exists()
