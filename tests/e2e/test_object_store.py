"""The whole pipeline on object storage: a backfill, a daily rerun, replay and an export against a
real S3-compatible server (moto's server mode, a process the tests start), compared with the
same days published on a local disk (the session's real days, ``tests/real_days.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from tasks.settings import load_settings
from tests.cli import brief
from tests.real_days import BROKEN, REAL_DAYS, REAL_SOURCES, archive_config, copy_real_days

DAYS = tuple(REAL_DAYS[:2])


def brief_documents(store) -> dict[str, dict]:
    """Every published brief JSON of a store, by its path under the root (volatile fields dropped)."""
    out = {}
    for day in DAYS:
        with store.fs.open_input_stream(f"{store.base}/briefs/{day}.json") as src:
            document = json.loads(src.read())
        out[day] = {k: v for k, v in document.items() if k not in {"run_id", "generated_at"}}
    return out


def test_backfill_daily_run_and_export_on_s3(
    shared_data: Path, real_days: Path, s3_server: str, s3_root: str, tmp_path: Path, prefect_harness: None
) -> None:
    """The real days' sources backfilled on S3 give the briefs and facts the same days have on disk."""
    from flows.backfill import backfill
    from flows.daily import daily_brief

    feeds = shared_data / "feeds"
    s3_config = archive_config(
        tmp_path / "s3", feeds, REAL_SOURCES, root=s3_root, endpoint=s3_server, extra=BROKEN
    )
    local_config, _ = copy_real_days(real_days, tmp_path / "local")

    outcomes = backfill(*DAYS, str(s3_config), 2)
    assert [o.status for o in outcomes] == ["completed", "completed"], outcomes
    rerun = daily_brief(DAYS[1], str(s3_config))
    assert rerun.changed is False  # the same brief from the facts on S3

    s3_store = load_settings(str(s3_config)).storage.event_store()
    bucket, prefix = s3_root[len("s3://") :].split("/", 1)
    keys = [
        o["Key"]
        for page in boto3.client("s3", endpoint_url=s3_server)
        .get_paginator("list_objects_v2")
        .paginate(Bucket=bucket, Prefix=prefix)
        for o in page.get("Contents", [])
    ]
    assert f"{prefix}/briefs/{DAYS[1]}.md" in keys and any(k.endswith(".compacted.parquet") for k in keys)
    assert not any(k.endswith(".tmp") for k in keys)  # one PUT per file, no temporaries

    local_store = load_settings(str(local_config)).storage.event_store()
    assert brief_documents(s3_store) == brief_documents(local_store)  # the same briefs either way
    facts = {"article.collected", "feed.fetched", "article.duplicate_detected", "story.clustered"}

    def fact_ids(store) -> set[tuple[str, str]]:
        return {
            (e.event_type, e.subject_id)
            for e in store.read()
            if e.event_type in facts and e.brief_date.isoformat() in DAYS
        }

    assert fact_ids(s3_store) == fact_ids(local_store) and len(fact_ids(s3_store)) > 300

    out = tmp_path / "export"
    command = ["export", "events", "--start", DAYS[0], "--end", DAYS[1], "--out", str(out)]
    done = brief(*command, "--config", str(s3_config))
    assert done.returncode == 0, done.stderr
    exported = (out / "events.parquet") if (out / "events.parquet").exists() else None
    files = sorted(p.name for p in out.rglob("*") if p.is_file())
    assert "manifest.json" in files, files
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["events"] == len(s3_store.read()), manifest
    assert exported is None or exported.stat().st_size > 0


def test_a_missing_bucket_is_a_clear_error(s3_server: str, tmp_path: Path) -> None:
    config = tmp_path / "brief.toml"
    config.write_text(
        f'[storage]\nroot = "s3://no-such-bucket/store"\nendpoint_url = "{s3_server}"\n'
        '[[sources]]\nname = "x"\nurl = "https://feeds.example/x.xml"\n'
    )
    done = brief("events", "--config", str(config))
    assert done.returncode != 0
    assert "bucket 'no-such-bucket' does not exist" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize("endpoint", ["127.0.0.1:9000", "http://key:secret@127.0.0.1:9000"])
def test_a_bad_endpoint_is_refused_when_the_config_loads(tmp_path: Path, endpoint: str) -> None:
    from storage.errors import ConfigError

    config = tmp_path / "brief.toml"
    config.write_text(f'[storage]\nroot = "s3://b/p"\nendpoint_url = "{endpoint}"\n')
    with pytest.raises(ConfigError, match="endpoint_url"):
        load_settings(str(config))
