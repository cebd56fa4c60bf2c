"""Two Prefect process workers, one Prefect server, one S3 store: a fanned-out backfill of real days
gives the same facts and the same briefs as a one-process backfill.

Two weeks of the shared month (2025-07-01..14, weekends included). On two cores each date
costs about 20 s fanned out (a process per date) and 9 s in one process;
``BRIEF_TEST_WORKER_DAYS=7`` runs one week (07-07..13) for a quicker check.

The backfill flow creates one ``daily-brief`` flow run per date from the deployment in
``prefect.yaml``; two workers (one run at a time each) share them. Each date waits for the
earlier dates its window reaches (``flows/fanout.py``), so whatever order the runs finish in,
the decisions are those of the one-process backfill, compared here event by event and file by file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.serve import start_local_server
from tasks.settings import load_settings
from tests.conftest import REPO

PREFECT = str(Path(sys.executable).parent / "prefect")
SOURCES = ("arstechnica", "techcrunch", "tweakers", "wired")
DAYS = int(os.environ.get("BRIEF_TEST_WORKER_DAYS", "14"))
START, END = ("2025-07-01", "2025-07-14") if DAYS == 14 else ("2025-07-07", "2025-07-13")
FACTS = ("article.collected", "feed.fetched")
DECISIONS = ("article.duplicate_detected", "story.clustered", "story.scored", "brief.published")


def config_for(folder: Path, storage: str, feeds: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "brief.toml"
    config.write_text(
        storage
        + "".join(
            f'[[sources]]\nname = "{s}"\nurl = "{(feeds / s).as_uri()}/{{date}}.xml"\n' for s in SOURCES
        )
    )
    return config


@pytest.fixture
def workers(tmp_path: Path, s3_server: str, s3_root: str, shared_data: Path) -> Iterator[dict]:
    feeds = shared_data / "month" / "feeds"
    if not feeds.is_dir():
        pytest.skip(f"no month of feeds at {feeds}")
    s3_config = config_for(
        tmp_path / "s3", f'[storage]\nroot = "{s3_root}"\nendpoint_url = "{s3_server}"\n', feeds
    )
    server = start_local_server(tmp_path / "prefect-home")
    env = {
        **os.environ,
        "PREFECT_API_URL": server.api_url,
        "PREFECT_HOME": str(tmp_path / "client-home"),
        "BRIEF_HOME": str(REPO),
        "BRIEF_CONFIG": str(s3_config),
        "PREFECT_WORKER_QUERY_SECONDS": "1",
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_LOGGING_LEVEL": "INFO",
    }
    procs, logs = [], []
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
        for k in range(2):
            logs.append(tmp_path / f"worker-{k}.log")
            with open(logs[-1], "wb") as log:
                procs.append(
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
        yield {"server": server, "config": s3_config, "feeds": feeds, "logs": logs}
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=60)
        server.stop()


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


@pytest.mark.timeout(1200)  # about 6 minutes on two cores; a noisy machine doubles it
def test_two_workers_share_a_backfill_and_match_one_process(
    workers: dict, tmp_path: Path, prefect_harness: None
) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.backfill import backfill

    with temporary_settings({PREFECT_API_URL: workers["server"].api_url}):
        fanned = backfill(START, END, str(workers["config"]), fan_out=True)
    assert [o["status"] for o in fanned] == ["completed"] * DAYS, fanned
    assert all(o["changed"] and o["version"] == 1 for o in fanned), fanned
    # both workers ran dates
    submitted = [log.read_text().count("submitting flow run") for log in workers["logs"]]
    assert all(n > 0 for n in submitted) and sum(submitted) == DAYS, submitted

    local_config = config_for(tmp_path / "local", '[storage]\nroot = "store"\n', workers["feeds"])
    one = backfill(START, END, str(local_config))
    assert [o["status"] for o in one] == ["completed"] * DAYS, one

    s3_store = load_settings(str(workers["config"])).storage.event_store()
    local_store = load_settings(str(local_config)).storage.event_store()
    fact_ids = [
        {e.event_id for e in store.read(event_types=list(FACTS))} for store in (s3_store, local_store)
    ]
    assert fact_ids[0] == fact_ids[1] and len(fact_ids[0]) > 300
    assert decisions(s3_store) == decisions(local_store)
    days = [o["date"] for o in one]
    assert documents(s3_store, days) == documents(local_store, days)
