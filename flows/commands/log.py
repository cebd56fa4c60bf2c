"""The event log at the command line: ``brief events``, ``replay``, ``trace``, ``stats``, ``compact``
and ``export …``.

The services (``ops/``, ``storage/``) are imported inside each command: they load polars and
pyarrow, which ``brief --help`` does not need.
"""

from __future__ import annotations

import re
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from flows.commands.options import ConfigOption, Format, open_store, parse_time
from flows.views.console import err, out
from flows.views.text import counted
from storage.errors import InputError
from tasks.dates import given_day, parse_date


def events(
    day: Annotated[str | None, typer.Option("--date", help="Only this brief date (YYYY-MM-DD).")] = None,
    event_type: Annotated[
        list[str] | None, typer.Option("--type", help="Only this event type (repeatable), e.g. feed.failed.")
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", help="Only events written by this run id (or its first characters)."),
    ] = None,
    fmt: Annotated[
        Format, typer.Option("--format", help="table for people, jsonl for scripts.")
    ] = Format.table,
    limit: Annotated[int, typer.Option(help="At most this many events in a table (0: all).")] = 50,
    config: ConfigOption = None,
) -> None:
    """Browse the event log, oldest first."""
    from flows.views.log import events_jsonl, events_view
    from ops import browse

    wanted = parse_date(day)
    browse.check_types(event_type)
    _, store = open_store(config)
    frame = browse.events(store, wanted, event_type, run)
    if fmt is Format.jsonl:
        sys.stdout.writelines(events_jsonl(frame))
        return
    shown = frame if limit <= 0 else frame.tail(limit)
    title = (
        f"{counted(frame.height, 'event')}"
        + (f", last {shown.height} shown" if shown.height < frame.height else "")
        + " (UTC; --format jsonl gives every payload whole)"
    )
    out.print(events_view(list(shown.iter_rows(named=True)), title, out.width))


def replay(
    day: Annotated[str, typer.Option("--date", help="Brief date whose events to fold (YYYY-MM-DD).")],
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="Only events written up to this UTC time, or up to when version N of the brief was "
            "published (vN).",
        ),
    ] = None,
    projection: Annotated[
        str, typer.Option("--projection", help="articles, seen, runs, stories, questions, briefs or scores.")
    ] = "articles",
    fmt: Annotated[Format, typer.Option("--format")] = Format.table,
    config: ConfigOption = None,
) -> None:
    """Show a projection of one day as it stood at a time."""
    from flows.views.log import frame_jsonl, projection_view
    from ops import browse

    wanted = given_day(day)
    version = re.fullmatch(r"v([1-9][0-9]{0,5})", as_of or "")
    moment = None if version else parse_time(as_of)
    browse.check_projection(projection)
    _, store = open_store(config)
    if version:
        moment = browse.version_published(store, wanted, int(version.group(1)))
    frame = browse.projection(store, projection, wanted, moment)
    if fmt is Format.jsonl:
        sys.stdout.writelines(frame_jsonl(frame))
        return
    title = (
        f"{projection} of {day}"
        + (f" as of {moment.isoformat()}" if moment else "")
        + (f" (v{version.group(1)} published)" if version else "")
        + f": {counted(frame.height, 'row')}"
    )
    if frame.height:
        out.print(projection_view(frame, projection, title, out.width))
    else:  # no empty table: the title says 0 rows
        out.print(title, soft_wrap=True)
    first = browse.first_recorded(store, wanted) if moment and frame.height == 0 else None
    if moment and first and first > moment:
        out.print(
            f"Nothing of {day} was written by then: its first event was written at "
            f"{first:%Y-%m-%d %H:%M:%S} UTC. --as-of is when events were written, not the brief date; "
            f"'--as-of v1' is when its brief's first version was published.",
            soft_wrap=False,
        )


def trace(
    day: Annotated[str, typer.Option("--date", help="Brief date of the item (YYYY-MM-DD).")],
    story: Annotated[str, typer.Option("--story", help="The item's story id (or its first characters).")],
    config: ConfigOption = None,
) -> None:
    """Where an item of a brief came from: its analysis, score, clustering, articles and feed fetches."""
    from flows.views.trace import render
    from ops.trace import trace

    wanted = given_day(day)
    settings, store = open_store(config)
    for line in render(trace(store, settings, wanted, story), min(80, out.width)):
        out.print(line)


def history(
    day: Annotated[str | None, typer.Option("--date", help="Only this brief date (YYYY-MM-DD).")] = None,
    fmt: Annotated[
        Format, typer.Option("--format", help="table for people, jsonl for scripts.")
    ] = Format.table,
    config: ConfigOption = None,
) -> None:
    """Every published version of each day, newest day first, each in a line: the people's acts it
    carried, or the run that published it (the desk's History)."""
    from flows.views.log import history_jsonl, history_view
    from ops.history import history as every_version

    wanted = parse_date(day)
    _, store = open_store(config)
    found = every_version(store, [wanted] if wanted else None)
    if fmt is Format.jsonl:
        sys.stdout.writelines(history_jsonl(found))
    else:
        out.print(history_view(found, out.width))


def stats(
    start: Annotated[
        str | None, typer.Option("--start", help="First brief date, YYYY-MM-DD (default: the first stored).")
    ] = None,
    end: Annotated[
        str | None, typer.Option("--end", help="Last brief date, inclusive (default: the last stored).")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format")] = Format.table,
    shadow: Annotated[
        bool, typer.Option("--shadow", help="Compare the [policy.shadow] candidate with the live policy.")
    ] = False,
    labels: Annotated[
        str | None,
        typer.Option("--labels", help="With --shadow: a folder of hand labels, as evaluate takes."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Per-day run metrics from the runs projection: runs, status, news, stories, items, timings."""
    from flows.views.log import frame_jsonl, shadow_jsonl, show_shadow, stats_view
    from ops.evaluate import check_labels_folder
    from ops.shadow_stats import compare
    from ops.stats import daily_stats

    first, last = parse_date(start, "--start"), parse_date(end, "--end")
    if labels is not None and not shadow:
        raise InputError("--labels only applies with --shadow; add --shadow or drop --labels")
    settings, store = open_store(config)
    if not shadow:
        frame = daily_stats(store, first, last)
        if fmt is Format.jsonl:
            sys.stdout.writelines(frame_jsonl(frame))
        else:
            out.print(stats_view(frame, out.width))
        return
    folder = Path(labels) if labels else None
    if folder is not None:
        check_labels_folder(folder)
    for comparison in compare(store, first, last, folder, settings.policy.lookback_hours):
        if fmt is Format.jsonl:
            sys.stdout.write(shadow_jsonl(comparison))
        else:
            show_shadow(out, comparison)


def compact(
    day: Annotated[str | None, typer.Option("--date", help="Only this day (default: every day).")] = None,
    config: ConfigOption = None,
) -> None:
    """Merge each day's segments and small files into one zstd Parquet file; the events stay the same
    (but for what [retention] thins on days past its age)."""
    from flows.views.log import show_compacted
    from ops.compact import compact

    wanted = parse_date(day)
    settings, store = open_store(config)
    done = compact(settings, store, wanted, lambda outcome: show_compacted(out, outcome))
    if done.frozen:
        out.print(f"regression set: {counted(done.frozen, 'frozen event')} thinned")


export_app = typer.Typer(
    help="Take the event log out: events for analysis, datasets for fine-tuning.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


class ExportFormat(StrEnum):
    parquet = "parquet"
    jsonl = "jsonl"
    csv = "csv"


@export_app.command("events")
def export_events_command(
    start: Annotated[str, typer.Option("--start", help="First brief date (YYYY-MM-DD).")],
    end: Annotated[str, typer.Option("--end", help="Last brief date, inclusive.")],
    out_path: Annotated[str, typer.Option("--out", help="New folder to write (never overwritten).")],
    fmt: Annotated[ExportFormat, typer.Option("--format")] = ExportFormat.parquet,
    event_type: Annotated[
        list[str] | None, typer.Option("--type", help="Only these event types (repeatable).")
    ] = None,
    run: Annotated[str | None, typer.Option("--run", help="Only events of this run id.")] = None,
    redact: Annotated[
        bool, typer.Option("--redact", help="Mask emails, phone numbers, API keys and tokens.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Events of a date range, streamed a day at a time, with a manifest (counts per type and day)."""
    from ops import browse
    from storage.export import export_events

    first, last = given_day(start, "--start"), given_day(end, "--end")
    browse.check_types(event_type)
    _, store = open_store(config)
    days = [d for d in store.days() if first <= d <= last]
    with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:
        bar = progress.add_task("exporting", total=max(len(days), 1))
        result = export_events(
            store,
            first,
            last,
            fmt.value,
            Path(out_path),
            types=event_type,
            run=run,
            redacting=redact,
            progress=lambda day, n: progress.update(bar, advance=1, description=f"exported {day}"),
        )
    out.print(
        f"{counted(result.events, 'event')} of {counted(len(result.counts), 'day')} -> {result.out}\n"
        f"manifest: {result.manifest}"
    )


@export_app.command("finetune")
def export_finetune_command(
    task: Annotated[
        str,
        typer.Option(
            "--task", help="classify, extract, summarize, dedup, relevance or llm (recorded model calls)."
        ),
    ],
    out_path: Annotated[
        str, typer.Option("--out", help="The JSONL file to write (a dataset card goes beside it).")
    ],
    fmt: Annotated[
        str, typer.Option("--format", help="chat (OpenAI chat JSONL) or preference (pairs).")
    ] = "chat",
    start: Annotated[
        str | None, typer.Option("--start", help="First brief date (default: the first).")
    ] = None,
    end: Annotated[str | None, typer.Option("--end", help="Last brief date (default: the last).")] = None,
    config: ConfigOption = None,
) -> None:
    """A fine-tuning dataset from machine outputs and human corrections (corrections win)."""
    from ops.finetune import build, why_empty

    first, last = parse_date(start, "--start"), parse_date(end, "--end")
    _, store = open_store(config)
    days = store.days()
    if not days:
        raise InputError("the event log is empty; run 'brief run' first")
    card = build(store, task, fmt, Path(out_path), first or days[0], last or days[-1])
    out.print(f"{counted(card['records'], 'record')} ({card['human_labelled']} human-labelled) -> {out_path}")
    why = why_empty(card)
    if why:
        out.print(why, soft_wrap=True)
