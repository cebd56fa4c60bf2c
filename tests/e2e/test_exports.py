"""Exports of the real days' log: a round trip through Polars and DuckDB, fine-tuning files, policy evaluation."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest

from storage.export import export_events
from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import Completed, brief
from tests.plaintext import every_file_text
from tests.real_days import REAL_DAYS, copy_real_days

DAYS = REAL_DAYS


@pytest.fixture(scope="module")
def log(real_days: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A copy of the session's published real days, with a person's corrections added."""
    from tasks import steps

    work = tmp_path_factory.mktemp("exports")
    config, _ = copy_real_days(real_days, work / "days")
    settings = load_settings(str(config))
    # a person corrects a category the run was unsure of
    ctx = steps.make_context(settings, date.fromisoformat("2025-08-07"), "review-test")
    question = next(q for q in steps.open_questions(ctx).iter_rows(named=True) if q["field"] == "category")
    other = next(c for c in question["candidates"] if c != question["value"])
    ctx.store.append(steps.resolve(ctx, question, other, "human"))
    # and says two outlets' gpt-oss reports are one story (a pair the clustering threshold decides)
    from storage.events import new_event, utcnow
    from storage.projections import materialize

    articles = materialize(ctx.store, "articles")
    pair = [
        articles.filter(pl.col("title").str.starts_with(t))["article_id"][0]
        for t in (
            "OpenAI launches two ‘open’ AI reasoning models",
            "OpenAI announces two “gpt-oss” open AI models",
        )
    ]
    ctx.store.append(
        [
            new_event(
                "story.merged",
                {"article_ids": sorted(pair)},
                brief_date=date(2025, 8, 6),
                run_id="review-test",
                subject_id=sorted(pair)[0],
                produced_by="review@1:human",
                occurred_at=utcnow(),
            )
        ]
    )
    return {
        "config": config,
        "store": ParquetEventStore(settings.storage.root),
        "work": work,
        "corrected": (question["subject"], other),
    }


def test_round_trip_parquet_and_jsonl_through_polars_and_duckdb(log: dict) -> None:
    store = log["store"]
    expected = store.query(lambda: store.scan()).select("event_id", "event_type").sort("event_id")
    for fmt in ("parquet", "jsonl"):
        out = log["work"] / f"export-{fmt}"
        result = export_events(store, date(2025, 8, 1), date(2025, 8, 31), fmt, out)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["events"] == result.events == expected.height
        per_type = {}
        for counts in manifest["counts"].values():
            for t, n in counts.items():
                per_type[t] = per_type.get(t, 0) + n
        if fmt == "parquet":
            back = pl.scan_parquet(out / "events" / "**" / "*.parquet", hive_partitioning=True).collect()
            ducked = duckdb.sql(
                f"SELECT event_id, event_type, date FROM read_parquet('{out}/events/*/*.parquet', hive_partitioning = true)"
            ).pl()
            assert sorted(back["date"].cast(pl.String).unique().to_list()) == DAYS
        else:
            back = pl.read_ndjson(out / "events.jsonl", infer_schema_length=None)
            ducked = duckdb.sql(
                f"SELECT event_id, event_type FROM read_json('{out}/events.jsonl', format = 'newline_delimited')"
            ).pl()
            assert isinstance(back["payload"][0], dict)  # the payload is a JSON object
        for frame in (back, ducked):
            assert frame.select("event_id", "event_type").sort("event_id").equals(expected)
        assert dict(back.group_by("event_type").len().iter_rows()) == per_type


SECRETS = (
    "jane.doe@example.com",
    "+1 415 555 0132",
    "sk-abcdefghijklmnopqrstuvwx",
    "abcdefghijklmnopqrstuvwxyz",
)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl", "csv"])
def test_redaction_happens_before_writing(tmp_path: Path, fmt: str) -> None:
    """Export a log that holds secrets with --redact, then search every written byte for them."""

    from storage.events import new_event, utcnow

    store = ParquetEventStore(str(tmp_path / "store"))
    text = f"mail {SECRETS[0]} or call {SECRETS[1]}, key {SECRETS[2]}, Bearer {SECRETS[3]}"
    store.append(
        [
            new_event(
                "article.collected",
                {
                    "article_id": "art-1",
                    "source": "wire",
                    "url": "https://wire.example/1",
                    "canonical_url": "https://wire.example/1",
                    "title": f"Leak: {SECRETS[0]}",
                    "summary": text,
                    "content_hash": "h",
                },
                brief_date=date(2025, 8, 6),
                run_id="r",
                subject_id="art-1",
                produced_by="test",
                occurred_at=utcnow(),
            )
        ]
    )
    out = tmp_path / f"export-{fmt}"
    export_events(store, date(2025, 8, 6), date(2025, 8, 6), fmt, out, redacting=True)
    written = "\n".join(every_file_text(out).values())  # Parquet as its values
    for secret in SECRETS:
        assert secret not in written, secret
    assert "[REDACTED:" in written
    unredacted = tmp_path / f"plain-{fmt}"
    export_events(store, date(2025, 8, 6), date(2025, 8, 6), fmt, unredacted)
    # the same search finds them when nothing is redacted: it could fail
    assert all(secret in "\n".join(every_file_text(unredacted).values()) for secret in SECRETS)


def _validate_chat(path: Path, task: str) -> list[dict]:
    from ops.finetune import OUTPUT_MODELS

    records = []
    for line in path.read_text().splitlines():
        record = json.loads(line)
        roles = [m["role"] for m in record["messages"]]
        assert roles == ["system", "user", "assistant"]
        for message in record["messages"]:
            assert (
                set(message) == {"role", "content"}
                and isinstance(message["content"], str)
                and message["content"]
            )
        OUTPUT_MODELS[task].model_validate_json(record["messages"][2]["content"])
        assert record["metadata"]["event_ids"] and record["metadata"]["split"] in ("train", "validation")
        records.append(record)
    return records


def brief_cli(*args: str) -> Completed:
    return brief(*args, env={"COLUMNS": "200"})


def test_finetune_chat_files_pass_the_chat_format_validator(log: dict) -> None:
    for task in ("classify", "extract", "summarize", "dedup"):
        out = log["work"] / f"{task}.jsonl"
        done = brief_cli(
            "export", "finetune", "--config", str(log["config"]), "--task", task, "--out", str(out)
        )
        assert done.returncode == 0, done.stderr
        records = _validate_chat(out, task)
        assert records, task
        card = json.loads(out.with_suffix(".card.json").read_text())
        assert card["records"] == len(records) and card["dates"]
        keys = [json.dumps(r["messages"], sort_keys=True) for r in records]
        assert len(keys) == len(set(keys))  # no duplicates
    classify = [json.loads(line) for line in (log["work"] / "classify.jsonl").read_text().splitlines()]
    _, category = log["corrected"]
    human = [r for r in classify if r["metadata"]["human_labelled"]]
    assert human and json.loads(human[0]["messages"][2]["content"]) == {"category": category}


def test_preference_export_pairs_the_human_correction_with_the_machine_output(log: dict) -> None:
    out = log["work"] / "classify-preference.jsonl"
    done = brief_cli(
        "export",
        "finetune",
        "--config",
        str(log["config"]),
        "--task",
        "classify",
        "--format",
        "preference",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    chosen = json.loads(record["preferred_output"][0]["content"])
    rejected = json.loads(record["non_preferred_output"][0]["content"])
    assert chosen == {"category": log["corrected"][1]} and chosen != rejected
    assert [m["role"] for m in record["input"]["messages"]] == ["system", "user"]


def test_evaluate_two_policies_prints_different_figures_and_records_both(
    log: dict, shared_data: Path
) -> None:
    outputs = []
    for threshold in ("0.50", "0.75"):
        policy = log["work"] / f"policy-{threshold}.toml"
        # two thresholds of the rules (the pair model, the default, has none a policy sets)
        policy.write_text(f'[policy]\nstory_model = "rules"\nnear_duplicate_threshold = {threshold}\n')
        done = brief_cli(
            "evaluate",
            "--config",
            str(log["config"]),
            "--policy",
            str(policy),
            "--start",
            DAYS[0],
            "--end",
            DAYS[-1],
            "--labels",
            str(shared_data / "labels"),
        )
        assert done.returncode == 0, done.stderr
        assert "label_f1" in done.stdout and "recorded as a policy.evaluated event" in done.stdout
        outputs.append(done.stdout)
    evaluated = log["store"].read(event_types=["policy.evaluated"])
    assert len(evaluated) == 2
    candidates = [
        next(v for k, v in e.payload["figures"].items() if k.startswith("candidate")) for e in evaluated
    ]
    assert candidates[0]["label_f1"] != candidates[1]["label_f1"]
    # people's answers are held out of the replay, so their figures move with the policy too
    assert all(c["human_pairs"] == 1 for c in candidates)
    assert {c["human_recall"] for c in candidates} == {0.0, 1.0}
    current = [next(v for k, v in e.payload["figures"].items() if k.startswith("current")) for e in evaluated]
    assert current[0] == current[1]  # the same current policy gives the same figures
