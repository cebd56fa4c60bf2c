"""Test session set-up: a private Prefect home, no analytics, and the shared real data."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_SESSION_HOME = tempfile.mkdtemp(prefix="brief-tests-")
os.environ.setdefault("PREFECT_HOME", os.path.join(_SESSION_HOME, "prefect"))
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["GX_ANALYTICS_ENABLED"] = "false"
os.environ["HF_HUB_OFFLINE"] = "1"
# a command the tests start as a process lets Prefect start a temporary server, as before: a kept
# one would outlive the test (tests/e2e/test_kept_server.py turns it on for its own processes)
os.environ["BRIEF_PREFECT_KEEP"] = "0"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.pop("BRIEF_CONFIG", None)
# One thread per process for torch and BLAS: the two test processes and the runs they start
# share two cores, and threads spinning for a core they do not get only burn time.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Sentence vectors shared by every process of the run (xdist workers inherit this from the
# process that starts them, and pass it on to the Prefect workers and CLIs they start): a
# text is embedded once per test run, whichever store caches it (``tasks/embed.py``).
os.environ.setdefault("BRIEF_EMBEDDINGS_SHARED", os.path.join(_SESSION_HOME, "embeddings.sqlite"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BRIEF_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (real feeds, labels, corpora); tests that need it skip without it, and
    fail without it where ``CI`` is set (CI always has it beside the checkout)."""
    if not SHARED_DATA.is_dir():
        why = f"real data folder {SHARED_DATA} is absent (expected ../shared/data beside the repo)"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    return SHARED_DATA


@pytest.fixture(scope="session")
def real_days(shared_data: Path, tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The real days 2025-08-05..07 published once for the whole session (``tests/real_days.py``).

    The xdist workers share one build: the first to take the lock builds, the others wait and
    reuse it. Tests read it through ``copy_real_days``, never in place.
    """
    from filelock import FileLock

    from tests.real_days import build_real_days

    base = _run_folder(tmp_path_factory)
    built = base / "real-days"
    with FileLock(str(base / "real-days.lock")):
        if not (built / "results.json").exists():
            if built.exists():  # a build that died half-way
                import shutil

                shutil.rmtree(built)
            build_real_days(built, shared_data / "feeds")
    return built


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test run's temporary folder, shared by its xdist workers."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory):
    """A real Prefect server (API and UI, no background services) for this test process.

    Its database starts as a copy of the run's migrated template: the first xdist worker
    migrates a fresh one and copies it (SQLite's backup, consistent while the server runs);
    the other starts from the copy, skipping the migrations (about 13 s).
    """
    import shutil
    import sqlite3
    from contextlib import closing

    from filelock import FileLock

    from flows.serve import start_local_server

    base = _run_folder(tmp_path_factory)
    home = tmp_path_factory.mktemp("prefect-server")
    template = base / "prefect-template.db"
    with FileLock(str(base / "prefect-template.lock")):
        if template.exists():
            shutil.copyfile(template, home / "prefect.db")
        server = start_local_server(home, services=False)
        if not template.exists():
            with (
                closing(sqlite3.connect(home / "prefect.db")) as live,
                closing(sqlite3.connect(base / "prefect-template.partial")) as copy,
            ):
                live.backup(copy)
            (base / "prefect-template.partial").rename(template)
    yield server
    # Flush what this process sent while the server still answers, or the interpreter's
    # last drain waits on it.
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    EventsWorker.drain_all(timeout=60)
    APILogWorker.drain_all(timeout=60)
    server.stop()


@pytest.fixture(scope="session")
def migrated_prefect_db(prefect_server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's migrated Prefect database (``prefect_server`` made it): a test that starts a server
    of its own in a new ``PREFECT_HOME`` copies it there as ``prefect.db``, so that its server
    starts without migrating a database of the same schema again (about 6 s of a core each)."""
    return _run_folder(tmp_path_factory) / "prefect-template.db"


def seed_prefect_home(home: Path, migrated: Path) -> Path:
    """A new ``PREFECT_HOME`` whose database is a copy of the run's migrated one."""
    import shutil

    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(migrated, home / "prefect.db")
    return home


@pytest.fixture(scope="session")
def prefect_harness(prefect_server):
    """Flows run in this process report to the session's Prefect server, and send it no flow-run
    heartbeats, as the runs ``brief run`` and ``brief backfill`` start in their own process do
    (``flows.lifetime.without_heartbeats``): a run's heartbeat thread sleeps a second at a time,
    and each run waited for it to wake up as it ended (about half a second a run, on average).
    Runs a Prefect worker starts in a process of its own still send them."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.lifetime import without_heartbeats

    with temporary_settings({PREFECT_API_URL: prefect_server.api_url}), without_heartbeats():
        yield


@pytest.fixture(scope="session")
def s3_server() -> str:
    """A real S3-compatible server (moto's server mode) as a process on 127.0.0.1: its endpoint URL.

    The standard AWS variables give every client in the session (ours, and the processes the
    tests start) the server's throwaway credentials; nothing else points at a real AWS.
    """
    import shutil
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    if shutil.which("moto_server", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("moto[server] is not installed (pip install 'moto[server]'): the S3 tests need it")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(os.path.join(_SESSION_HOME, "moto.log"), "wb")  # noqa: SIM115 - open for the session
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.s3_server", "-H", "127.0.0.1", "-p", str(port)],
        cwd=REPO,
        stdout=log,
        stderr=log,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"moto_server did not start on {endpoint}; see {log.name}")
            time.sleep(0.2)
    os.environ.update(
        AWS_ACCESS_KEY_ID="test-key-id",
        AWS_SECRET_ACCESS_KEY="test-secret",
        AWS_DEFAULT_REGION="us-east-1",
        AWS_EC2_METADATA_DISABLED="true",
        BRIEF_TEST_S3_ENDPOINT=endpoint,
    )
    yield endpoint
    process.terminate()
    process.wait(timeout=10)
    log.close()


@pytest.fixture
def s3_root(s3_server: str) -> str:
    """A new, empty bucket on the session's S3 server: its ``s3://bucket/prefix`` root."""
    import uuid

    import boto3

    bucket = f"brief-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_server).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/store"


class ScriptedLLM:
    """The scripted chat-completions server (``tests/llm_server.py``), as a test drives it."""

    def __init__(self, url: str) -> None:
        self.url = url  # http://127.0.0.1:PORT

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _post(self, path: str, body: dict) -> dict:
        import json
        import urllib.request

        request = urllib.request.Request(
            f"{self.url}{path}", json.dumps(body).encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())

    def mode(self, mode: str, translations: dict[str, str] | None = None) -> None:
        """The server's mode (``tests/llm_server.py``), with the translations it gives for titles."""
        self._post("/mode", {"mode": mode, "translations": translations or {}})
        self._post("/reset", {})

    def stats(self) -> dict:
        import json
        import urllib.request

        with urllib.request.urlopen(f"{self.url}/stats", timeout=5) as response:
            return json.loads(response.read())


@pytest.fixture(scope="session")
def llm_server() -> ScriptedLLM:
    """The scripted OpenAI-compatible server as a process on 127.0.0.1 (one for the session)."""
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "0"], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    line = process.stdout.readline().split()
    if not line or line[0] != "ready":
        process.kill()
        pytest.fail("tests/llm_server.py did not start")
    yield ScriptedLLM(f"http://127.0.0.1:{line[1]}")
    process.terminate()
    process.wait(timeout=10)


# The test files that take longest, longest first. `make test` hands whole files to its two
# processes in collection order (--dist loadfile --no-loadscope-reorder), so starting these
# first keeps one long file from running alone at the end while the other process idles.
SLOWEST_FIRST = (
    "tests/e2e/test_prefect_stack.py",
    # no Prefect server: the other process runs it while the first migrates the server's
    # database (tests/conftest.py's prefect_server), then starts its own from the copy
    "tests/unit/test_properties.py",
    # the judgement guard: its set-up fits and briefs both guard blocks (about 95 s on CI);
    # started late, it alone would hold the end of the run
    "tests/integration/test_judgement_guard.py",
    "tests/e2e/test_backfill.py",
    "tests/e2e/test_kept_server.py",
    "tests/integration/test_story_learning.py",
    "tests/e2e/test_improvement_loop.py",
    "tests/e2e/test_llm.py",
    "tests/e2e/test_object_store.py",
    "tests/e2e/test_daily_brief.py",
    "tests/integration/test_guide.py",
    "tests/integration/test_concurrent_writers.py",
    "tests/e2e/test_delivery.py",
    "tests/e2e/test_alerts.py",
    "tests/e2e/test_review.py",
    # after the judgement guard: the sentence vectors of the labelled days it shares with it are
    # then found in the run's shared vectors (BRIEF_EMBEDDINGS_SHARED), not computed twice at once
    "tests/integration/test_story_identity_guard.py",
    "tests/e2e/test_desk.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {path: k for k, path in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


# What each xdist worker spent, printed at the end of `make test`: with --dist loadfile the run
# lasts as long as its busier worker, so the two sums say whether the files are balanced, and the
# order of a worker's files says which one ran alone at the end.
_WORKER_FILES: dict[str, dict[str, float]] = {}
_WORKER_SPAN: dict[str, tuple[float, float]] = {}  # a worker's first test's start, its last's end


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    node = getattr(report, "node", None)  # set on the reports xdist's controller receives
    if node is None:
        return
    worker = node.gateway.id
    files = _WORKER_FILES.setdefault(worker, {})
    path = report.nodeid.split("::", 1)[0]
    files[path] = files.get(path, 0.0) + report.duration
    first, _ = _WORKER_SPAN.get(worker, (report.start, report.stop))
    _WORKER_SPAN[worker] = (min(first, report.start), report.stop)


def pytest_terminal_summary(terminalreporter) -> None:
    if not _WORKER_FILES:
        return
    terminalreporter.section("seconds per worker (test set-up, call and teardown)")
    began = min(start for start, _ in _WORKER_SPAN.values())
    for worker, files in sorted(_WORKER_FILES.items()):
        longest = sorted(files.items(), key=lambda kv: -kv[1])[:5]
        last = list(files)[-3:]
        terminalreporter.write_line(
            f"{worker}: {sum(files.values()):.0f} s in {len(files)} files, its last done at "
            f"+{_WORKER_SPAN[worker][1] - began:.0f} s; longest: "
            + ", ".join(f"{Path(p).name} {s:.0f}" for p, s in longest)
            + "; last: "
            + ", ".join(f"{Path(p).name} {files[p]:.0f}" for p in last)
        )
