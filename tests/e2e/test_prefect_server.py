"""Against a real Prefect server started here: deploy from prefect.yaml, run through the API, read back.

A process worker runs the deployments; a failing run's page in the Prefect UI, rendered by
headless Chromium, carries the failure explanation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.serve import LocalServer, start_local_server
from tests.conftest import REPO

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PREFECT = str(Path(sys.executable).parent / "prefect")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    work = tmp_path_factory.mktemp("server")
    shutil.copytree(REPO / "samples" / "feeds", work / "feeds")
    good, bad = work / "brief.toml", work / "broken.toml"
    sources = '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
    good.write_text('[storage]\nroot = "store"\n' + sources)
    bad.write_text('[storage]\nroot = "store-broken"\n[embedding]\nmodel = "/no/such/model"\n' + sources)
    server: LocalServer = start_local_server(work / "prefect-home")
    env = {
        **os.environ,
        "PREFECT_API_URL": server.api_url,
        "PREFECT_HOME": str(work / "client-home"),
        "BRIEF_HOME": str(REPO),
        "BRIEF_CONFIG": str(good),
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    }
    worker = None
    try:
        subprocess.run(
            [PREFECT, "work-pool", "create", "dailybrief", "--type", "process"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )
        deployed = subprocess.run(
            [PREFECT, "--no-prompt", "deploy", "--all"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert deployed.returncode == 0, deployed.stdout + deployed.stderr
        with open(work / "worker.log", "wb") as log:
            worker = subprocess.Popen(
                [PREFECT, "worker", "start", "--pool", "dailybrief"],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        yield {"server": server, "good": good, "bad": bad, "work": work}
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(timeout=30)
        server.stop()


def _client(stack: dict):
    from prefect.client.orchestration import get_client
    from prefect.settings import PREFECT_API_URL, temporary_settings

    return temporary_settings({PREFECT_API_URL: stack["server"].api_url}), get_client


def _run(stack: dict, name: str, parameters: dict):
    from prefect.deployments import run_deployment

    settings, _ = _client(stack)
    with settings:
        return run_deployment(name=name, parameters=parameters, timeout=600, poll_interval=2)


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
    run = _run(stack, "daily-brief/daily-brief", {"date_": "2025-08-06"})
    assert run.state.is_completed(), run.state
    artifacts = _artifacts(stack, run.id)
    assert "Orchard Labs releases Pippin" in artifacts["brief-2025-08-06"].data
    assert "labnotes" in str(artifacts["run-report-2025-08-06"].data)


def test_backfill_run_through_the_api(stack: dict) -> None:
    run = _run(stack, "backfill/backfill", {"start": "2025-08-05", "end": "2025-08-06", "concurrency": 2})
    assert run.state.is_completed(), run.state
    summary = str(_artifacts(stack, run.id)["backfill-summary"].data)
    assert "2025-08-05" in summary and "2025-08-06" in summary and "completed" in summary


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_failed_run_page_explains_the_failure(stack: dict, tmp_path: Path) -> None:
    run = _run(stack, "daily-brief/daily-brief", {"date_": "2025-08-06", "config": str(stack["bad"])})
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
