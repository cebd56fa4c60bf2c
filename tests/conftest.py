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
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.pop("BRIEF_CONFIG", None)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("BRIEF_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """``../shared/data`` (real feeds, labels, corpora); tests that need it skip without it."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data folder {SHARED_DATA} is absent (expected ../shared/data beside the repo)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server for the whole session (flows run against it)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield
