"""Against one real Prefect stack set up here for the module: the session's server, the
deployments of ``prefect.yaml`` and three process workers of the ``dailybrief`` pool (one run
at a time each).

- The deployments run through the API; a failing run's page in the Prefect UI, rendered by
  headless Chromium, carries the failure explanation.
- The ``backfill`` deployment, run through the API, fans real days out to the workers on an S3
  store (moto), and it gives the same facts and briefs as a one-process backfill. ``make test`` runs two dates
  (2025-07-08..09: one per worker, the second waiting for the first); ``make test-slow`` runs two
  weeks (``BRIEF_TEST_WORKER_DAYS=14``, 2025-07-01..14, about 20 s a date fanned out on two cores),
  where most dates also wait for a free worker. The backfill flow creates one
  ``daily-brief`` flow run per date; each date waits for the earlier dates its window reaches
  (``flows/fanout.py``), so whatever order the runs finish in, the decisions are those of the
  one-process backfill, compared event by event and file by file.
- ``brief serve`` against the stack's server serves the deployments on the configured schedule;
  Ctrl-C stops it. It runs last: its served deployments replace the stack's of the same names.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from flows.backfill import date_range
from flows.serve import LocalServer, free_port
from tasks.settings import load_settings
from tests.conftest import REPO
from tests.real_days import archive_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PREFECT = str(Path(sys.executable).parent / "prefect")
SOURCES = ("arstechnica", "techcrunch", "tweakers", "wired")
DAYS = int(os.environ.get("BRIEF_TEST_WORKER_DAYS", "2"))
START, END = {
    14: ("2025-07-01", "2025-07-14"),
    7: ("2025-07-07", "2025-07-13"),
    3: ("2025-07-08", "2025-07-10"),
}.get(DAYS, ("2025-07-08", "2025-07-09"))
WORKERS = 3  # one holds a fanned-out backfill's own run while two run its dates
FACTS = ("article.collected", "feed.fetched")
DECISIONS = ("article.duplicate_detected", "story.clustered", "story.scored", "brief.published")


def _prefect(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PREFECT, *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, s3_server: str, prefect_server: LocalServer
) -> Iterator[dict]:
    """The pool, ``prefect deploy --all`` and three workers on the session's server, once for the module.

    The deployments' default config is the sample's (labnotes, a local store); the workers
    inherit the S3 server's credentials (``s3_server``) for the runs that name an S3 config.
    """
    work = tmp_path_factory.mktemp("server")
    shutil.copytree(REPO / "samples" / "feeds", work / "feeds")
    good, bad = work / "brief.toml", work / "broken.toml"
    sources = '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
    good.write_text('[storage]\nroot = "store"\n' + sources)
    bad.write_text('[storage]\nroot = "store-broken"\n[embedding]\nmodel = "/no/such/model"\n' + sources)
    server = prefect_server
    env = {
        **os.environ,
        "PREFECT_API_URL": server.api_url,
        "PREFECT_HOME": str(work / "client-home"),
        "BRIEF_HOME": str(REPO),
        "BRIEF_CONFIG": str(good),
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "INFO",
    }
    workers: list[subprocess.Popen[bytes]] = []
    logs: list[Path] = []
    try:
        from prefect.workers.process import ProcessWorker

        pool = {
            "name": "dailybrief",
            "type": "process",
            "base_job_template": ProcessWorker.get_default_base_job_template(),
        }
        created = httpx.post(f"{server.api_url}/work_pools/", json=pool, timeout=30)
        assert created.status_code == 201, created.text
        deployed = _prefect(env, "--no-prompt", "deploy", "--all")
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        for k in range(WORKERS):
            logs.append(work / f"worker-{k}.log")
            with open(logs[-1], "wb") as log:
                workers.append(
                    subprocess.Popen(
                        [
                            PREFECT,
                            "worker",
                            "start",
                            "--pool",
                            "dailybrief",
                            "--limit",
                            "1",
                            "--name",
                            f"worker-{k}",
                        ],
                        env=env,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                    )
                )
        found = {"server": server, "good": good, "bad": bad, "work": work, "logs": logs, "s3": s3_server}
        # the day's run of the sample and a failing run start together, on two of the workers
        found["daily"] = _submit(found, {"date_": "2025-08-06"})
        found["failing"] = _submit(found, {"date_": "2025-08-06", "config": str(bad)})
        yield found
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)  # the worker and any flow run it still has
        for worker in workers:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:  # a worker still reporting a run: stop its group
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait(timeout=30)


def _client(stack: dict):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings({PREFECT_API_URL: stack["server"].api_url}), get_client


def _run(stack: dict, name: str, parameters: dict):
    from prefect.deployments import run_deployment

    settings, _ = _client(stack)
    with settings:
        return run_deployment(name=name, parameters=parameters, timeout=600, poll_interval=0.5)


def _submit(stack: dict, parameters: dict) -> object:
    """A ``daily-brief`` flow run created through the API (a worker picks it up): its id."""
    from prefect.deployments import run_deployment

    settings, _ = _client(stack)
    with settings:
        return run_deployment(name="daily-brief/daily-brief", parameters=parameters, timeout=0).id


def _ended(stack: dict, flow_run_id: object, timeout_s: float = 600):
    """The flow run once it has ended."""
    settings, get_client = _client(stack)
    deadline = time.monotonic() + timeout_s
    with settings, get_client(sync_client=True) as client:
        while True:
            run = client.read_flow_run(flow_run_id)
            if run.state and run.state.is_final():
                return run
            assert time.monotonic() < deadline, (
                f"flow run {flow_run_id} still {run.state} after {timeout_s} s"
            )
            time.sleep(0.5)


def _artifacts(stack: dict, flow_run_id: object) -> dict[str, object]:
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    settings, get_client = _client(stack)
    with settings, get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
    return {a.key: a for a in found}


def test_deployments_from_prefect_yaml_are_registered(stack: dict) -> None:
    settings, get_client = _client(stack)
    with settings, get_client(sync_client=True) as client:
        names = {d.name for d in client.read_deployments()}
        daily = client.read_deployment_by_name("daily-brief/daily-brief")
        held = client.read_deployment_by_name("deliver-held/deliver-held")
    assert {"daily-brief", "backfill", "deliver-held"} <= names
    assert daily.schedules and daily.schedules[0].schedule.cron == "0 7 * * *"
    assert daily.parameters["config"] == str(stack["good"])
    assert held.schedules and not held.schedules[0].active  # on only when a config holds briefs


def test_daily_brief_run_through_the_api(stack: dict) -> None:
    run = _ended(stack, stack["daily"])
    assert run.state.is_completed(), run.state
    artifacts = _artifacts(stack, run.id)
    assert "Orchard Labs releases Pippin" in artifacts["brief-2025-08-06"].data
    assert "labnotes" in str(artifacts["run-report-2025-08-06"].data)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_failed_run_page_explains_the_failure(stack: dict, tmp_path: Path) -> None:
    run = _ended(stack, stack["failing"])
    assert run.state.is_failed(), run.state
    assert "step 'dedup' failed" in run.state.message
    assert "failed-run-2025-08-06" in _artifacts(stack, run.id)
    url = f"{stack['server'].url}/runs/flow-run/{run.id}?tab=Details"  # the run's state message is there
    page = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium'}",
            "--virtual-time-budget=20000",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    text = page.stdout.replace("&#39;", "'").replace("&quot;", '"')
    assert "State Message" in text, text[-2000:]
    assert "step 'dedup' failed" in text, text[-2000:]


def ran_by(log: Path) -> set[str]:
    """The flow runs a worker ran: those it submitted, less those the server had it abort
    (both workers may try the same scheduled run; the server lets one have it)."""
    import re

    text = log.read_text()
    submitted = set(re.findall(r"submitting flow run '([0-9a-f-]+)'", text))
    return submitted - set(re.findall(r"Aborted submission of flow run '([0-9a-f-]+)'", text))


def documents(store, days: list[str]) -> dict[str, dict]:
    out = {}
    for day in days:
        with store.fs.open_input_stream(f"{store.base}/briefs/{day}.json") as src:
            out[day] = json.loads(src.read())
    return out


def decisions(store) -> Counter:
    """The decisions of a log, without what names the run or the store (ids hash the run id)."""
    out: Counter = Counter()
    for e in store.read(event_types=list(DECISIONS)):
        payload = {k: v for k, v in e.payload.items() if k not in {"files", "version_files"}}
        out[(e.event_type, e.brief_date.isoformat(), e.subject_id, json.dumps(payload, sort_keys=True))] += 1
    return out


@pytest.mark.timeout(1800 if DAYS > 4 else 900)  # two weeks: about 6 minutes on two cores, quiet
def test_backfill_run_through_the_api_fans_out_to_workers_and_matches_one_process(
    stack: dict, s3_root: str, shared_data: Path, tmp_path: Path, prefect_harness: None
) -> None:
    """The ``backfill`` deployment (``fan_out: true``) run through the API on an S3 store: its own
    run waits in one worker's slot while the other two workers run the dates."""
    from flows.backfill import backfill

    feeds = shared_data / "month" / "feeds"
    if not feeds.is_dir():
        pytest.skip(f"no month of feeds at {feeds}")
    s3_config = archive_config(tmp_path / "s3", feeds, SOURCES, root=s3_root, endpoint=stack["s3"])
    # the one-process backfill first: the fanned-out dates then find every sentence vector in
    # the run's shared cache (``BRIEF_EMBEDDINGS_SHARED``) and never load the model
    local_config = archive_config(tmp_path / "local", feeds, SOURCES)
    one = backfill(START, END, str(local_config))
    assert [o.status for o in one] == ["completed"] * DAYS, one

    before = set().union(*(ran_by(log) for log in stack["logs"]))
    run = _run(stack, "backfill/backfill", {"start": START, "end": END, "config": str(s3_config)})
    assert run.state.is_completed(), run.state
    fanned = json.loads(str(_artifacts(stack, run.id)["backfill-summary"].data))
    assert [o["status"] for o in fanned] == ["completed"] * DAYS, fanned
    assert [o["date"] for o in fanned] == [str(d) for d in date_range(START, END)], fanned
    assert all(o["changed"] and o["version"] == 1 for o in fanned), fanned
    # each date ran once, in a flow run of its own, and two workers shared them
    dates = {o["flow_run_id"] for o in fanned}
    ran = [(ran_by(log) - before) & dates for log in stack["logs"]]
    assert sum(map(len, ran)) == len(set().union(*ran)) == DAYS and sum(map(bool, ran)) == 2, ran
    assert any(str(run.id) in ran_by(log) for log in stack["logs"])

    s3_store = load_settings(str(s3_config)).storage.event_store()
    local_store = load_settings(str(local_config)).storage.event_store()
    fact_ids = [
        {e.event_id for e in store.read(event_types=list(FACTS))} for store in (s3_store, local_store)
    ]
    assert fact_ids[0] == fact_ids[1] and len(fact_ids[0]) > 70 * DAYS  # every date's facts
    assert decisions(s3_store) == decisions(local_store)
    days = [str(o.day) for o in one]
    assert documents(s3_store, days) == documents(local_store, days)


def test_serve_schedules_the_deployments_and_stops_cleanly(stack: dict, tmp_path: Path) -> None:
    """``brief serve`` with PREFECT_API_URL set uses that server (the stack's; the stack itself
    is started by ``start_local_server``, which ``brief serve`` calls when none is named)."""
    config = tmp_path / "brief.toml"
    config.write_text(
        'timezone = "Europe/Amsterdam"\nschedule = "30 6 * * 1-5"\n[storage]\nroot = "store"\n'
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
    )
    api = stack["server"].api_url
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home"), "PREFECT_API_URL": api}
    desk_port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "serve", "--config", str(config), "--desk-port", str(desk_port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "serving deployments" in line or not line:
            break
    assert f"using the Prefect server at {api}" in "".join(lines), "".join(lines)
    try:
        schedule: dict = {}
        for _ in range(60):
            deployments = httpx.post(f"{api}/deployments/filter", json={}, timeout=10).json()
            daily = next(d for d in deployments if d["name"] == "daily-brief")
            schedule = daily["schedules"][0]["schedule"] if daily["schedules"] else {}
            if schedule.get("cron") == "30 6 * * 1-5":
                break
            time.sleep(1)
        assert (schedule.get("cron"), schedule.get("timezone")) == ("30 6 * * 1-5", "Europe/Amsterdam")
        assert "backfill" in {d["name"] for d in deployments}
        assert httpx.get(stack["server"].url, timeout=10).status_code == 200  # the UI is served
        assert f"the editor's desk: http://127.0.0.1:{desk_port}/" in "".join(lines)  # and the desk
        assert httpx.get(f"http://127.0.0.1:{desk_port}/sources", timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    assert "KeyboardInterrupt" in output or "stopping" in output, output[-2000:]
    assert "the desk stopped" in output, output[-2000:]
    assert proc.returncode in (0, 130, -signal.SIGINT)
    # a server it did not start, it leaves running
    assert httpx.get(f"{api}/health", timeout=5).status_code == 200
