"""The kept Prefect server stopped while a run reports to it (``brief serve --stop`` in another
shell): the run ends at once with one line that names the server, says the run is recorded as
crashed and how to run it again, exit 1; the log of events ends the run, and a rerun (on a new
server) publishes. Real processes, a Prefect home of the test's own (``tests/e2e/test_kept_server``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from flows.keptserver import recorded, stop_kept
from tests.cli import brief
from tests.conftest import REPO, seed_prefect_home
from tests.e2e.test_kept_server import (
    DAY,
    RUNS_JSONL,
    SlowFeed,
    env_for,
    events,
    flow_run_states,
    start_run,
    stopped_within,
)


class SlowerFeed(SlowFeed):
    """A feed that answers after 15 s: the run is still collecting when the server stops."""

    DELAY_S = 15.0


@pytest.fixture
def work(tmp_path: Path, migrated_prefect_db: Path) -> Iterator[dict]:
    """The samples and a slow third source (the run's collect lasts 15 s), a Prefect home of its own."""
    handler = type("Feed", (SlowerFeed,), {})  # its delay is this test's to change
    feed = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=feed.serve_forever, daemon=True).start()
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(
        config.read_text().replace('root = "../var/sample-store"', 'root = "store"')
        + f'\n[[sources]]\nname = "slowwire"\nurl = "http://127.0.0.1:{feed.server_port}/{{date}}.xml"\n'
    )
    home = seed_prefect_home(tmp_path / "prefect-home", migrated_prefect_db)
    yield {"config": config, "home": home, "env": env_for(home), "feed": handler}
    stop_kept(home)
    feed.shutdown()


def test_a_server_stopped_under_a_run_ends_it_with_one_line_and_a_crash_recorded(work: dict) -> None:
    process = start_run(work)
    deadline, server, running = time.monotonic() + 300, None, []
    while not running and time.monotonic() < deadline and process.poll() is None:  # collecting
        server = recorded(work["home"])
        running = [i for i, s in flow_run_states(server.api_url).items() if s == "RUNNING"] if server else []
        time.sleep(0.2)
    assert server is not None and len(running) == 1, process.communicate()
    stopper = subprocess.run(
        [sys.executable, "-m", "flows.cli", "serve", "--stop"],
        cwd=REPO,
        env=work["env"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopper.returncode == 0, stopper.stderr
    code, stderr, took = stopped_within(process, 20)
    assert code == 1, stderr
    assert "Traceback" not in stderr and "Failed to reach" not in stderr, stderr
    [crashed] = events(work["config"], "run.crashed")
    last = stderr.strip().splitlines()[-1]
    assert last == (
        f"error: the local Prefect server this run reported to ({server.url}) stopped during collect: "
        f"run {crashed.run_id} recorded as crashed, nothing published; run it again with "
        f"brief run --date {DAY} --config {work['config']} (it starts a new server)"
    ), stderr
    assert len(stderr.strip().splitlines()) == 2, stderr  # the server's start, then the end
    assert took < 20, f"ended {took:.1f} s after the stop"
    assert (
        crashed.payload["how"]
        == f"the local Prefect server it reported to ({server.url}) stopped while it ran"
    )
    assert events(work["config"], "run.cancelled") == [] and events(work["config"], "brief.published") == []
    replay = brief("replay", "--config", str(work["config"]), *RUNS_JSONL)  # reads the store only
    [run] = [json.loads(line) for line in replay.stdout.splitlines()]
    assert run["status"] == "crashed", replay.stdout

    work["feed"].DELAY_S = 0.0  # the rerun need not wait on the slow source
    again = subprocess.run(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(work["config"]), "--date", DAY],
        cwd=REPO,
        env=work["env"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Brief for {DAY} (v1, new version): " in again.stdout
    assert "a local Prefect server is kept for later commands" in again.stderr  # a new one
