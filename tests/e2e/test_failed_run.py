"""A run that fails says which step, why, what it wrote, and how to rerun: in the log and in Prefect."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import REPO


def test_a_failing_step_fails_the_run_with_an_explanation(tmp_path: Path, prefect_harness: None) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    from flows.daily import daily_brief
    from storage.store import ParquetEventStore
    from tasks.settings import load_settings

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n[embedding]\nmodel = "/no/such/model"\n'
        '[[sources]]\nname = "techwire"\nurl = "file://feeds/techwire/{date}.xml"\n'
    )
    state = daily_brief("2025-08-06", str(config), return_state=True)
    assert state.is_failed()
    assert "step 'dedup' failed" in state.message and "embedding.model '/no/such/model'" in state.message

    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [failed] = store.read(event_types=["run.failed"])
    assert failed.payload["step"] == "dedup" and failed.payload["error"] == "ConfigError"
    assert failed.run_id == str(state.state_details.flow_run_id)

    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=["failed-run-2025-08-06"]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]),
            )
        )
    text = artifact.data
    assert "**Step:** `dedup`" in text and "cannot be loaded offline" in text
    assert f"brief run --date 2025-08-06 --config {config}" in text
    assert "| `article.collected` | 5 |" in text  # what it wrote before it stopped


def test_a_scheduled_run_without_a_date_that_fails_speaks_of_the_day_it_resolved(
    tmp_path: Path, prefect_harness: None
) -> None:
    """A scheduled run has no date parameter: its failure page and events name the day it ran for."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, ArtifactFilterKey

    from flows.daily import daily_brief
    from storage.store import ParquetEventStore
    from tasks.settings import load_settings
    from tasks.steps import today

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        '[[sources]]\nname = "techwire"\nurl = "file://feeds/techwire/2025-08-06.xml"\n'  # a live feed
    )
    settings = load_settings(str(config))
    (Path(settings.storage.root)).mkdir(parents=True)
    (Path(settings.storage.root) / "briefs").write_text("a file where the briefs folder should be")
    state = daily_brief(config=str(config), return_state=True)  # no date, as a schedule runs it
    assert state.is_failed() and "step 'publish' failed" in state.message
    day = today(settings)

    store = ParquetEventStore(settings.storage.root)
    [failed] = store.read(event_types=["run.failed"])
    assert failed.brief_date == day and failed.payload["step"] == "publish"
    [started] = store.read(event_types=["run.started"])
    assert started.run_id == failed.run_id and started.brief_date == day
    with get_client(sync_client=True) as client:
        [artifact] = client.read_artifacts(
            artifact_filter=ArtifactFilter(
                key=ArtifactFilterKey(any_=[f"failed-run-{day.isoformat()}"]),
                flow_run_id=ArtifactFilterFlowRunId(any_=[state.state_details.flow_run_id]),
            )
        )
        assert not client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["failed-run-today"]))
        )
    assert f"# Daily brief of {day.isoformat()} failed" in artifact.data
    assert f"brief run --date {day.isoformat()}" in artifact.data


def test_the_flow_refuses_a_date_after_tomorrow_before_it_writes_anything(
    tmp_path: Path, prefect_harness: None
) -> None:
    from datetime import UTC, datetime, timedelta

    from flows.daily import daily_brief

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n[[sources]]\nname = "techwire"\nurl = "file://feeds/techwire/{date}.xml"\n'
    )
    later = (datetime.now(UTC).date() + timedelta(days=3)).isoformat()
    state = daily_brief(later, str(config), return_state=True)
    assert state.is_failed()
    assert f"date {later} is after tomorrow" in state.message, state.message
    store = tmp_path / "store"
    assert not store.exists() or not [p for p in store.rglob("*") if p.is_file()], list(store.rglob("*"))
