"""Prefect flows for exports and policy evaluation (deployments in prefect.yaml)."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact


@flow(name="export-events")
def export_events_flow(
    start: str, end: str, out: str, format: str = "parquet", config: str | None = None, redact: bool = False
) -> dict:
    """Events of a date range to Parquet, JSONL or CSV with a manifest."""
    from flows.commands.options import open_store
    from storage.export import export_events

    _, store = open_store(config)
    result = export_events(
        store,
        date.fromisoformat(start),
        date.fromisoformat(end),
        format,
        Path(out),
        redacting=redact,
        command=f"export-events {start} {end} {format} {out}",
    )
    get_run_logger().info(f"{result.events} events -> {result.out}")
    return {"events": result.events, "out": str(result.out), "manifest": str(result.manifest)}


@flow(name="export-finetune")
def export_finetune_flow(
    task: str,
    out: str,
    format: str = "chat",
    start: str | None = None,
    end: str | None = None,
    config: str | None = None,
) -> dict:
    """A fine-tuning dataset (chat or preference JSONL) and its dataset card."""
    from flows.commands.options import open_store
    from ops.finetune import build

    _, store = open_store(config)
    days = store.days()
    card = build(
        store,
        task,
        format,
        Path(out),
        date.fromisoformat(start) if start else days[0],
        date.fromisoformat(end) if end else days[-1],
    )
    create_markdown_artifact(
        key=f"dataset-card-{task}-{format}", markdown=Path(out).with_suffix(".card.md").read_text()
    )
    return card


@flow(name="evaluate-policy")
def evaluate_policy_flow(
    policy: str,
    start: str | None = None,
    end: str | None = None,
    labels: str | None = None,
    config: str | None = None,
) -> dict:
    """Replay stored facts through a candidate policy beside the policy in force; record the figures
    and the verdict (``ops.improve.evaluate``, as ``brief evaluate`` does)."""
    from flows.commands.options import open_resources
    from ops.evaluate import table
    from ops.improve import evaluate

    settings, resources = open_resources(config)
    done = evaluate(settings, resources, policy, start, end, labels)
    frame = table(done.figures)
    create_markdown_artifact(
        key="policy-evaluation",
        markdown="| "
        + " | ".join(frame.columns)
        + " |\n|"
        + "---|" * len(frame.columns)
        + "\n"
        + "\n".join("| " + " | ".join(row) + " |" for row in frame.iter_rows())
        + f"\n\n{done.verdict['line']}\n",
    )
    return done.figures
