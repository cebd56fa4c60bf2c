"""The ``brief`` command line.

Every command finds the store through ``--config PATH`` (or ``BRIEF_CONFIG``, or
``./brief.toml``). A mistake in what you typed prints one line on stderr that says what is
wrong and how to fix it, and exits with code 2; nothing is written.
"""

from __future__ import annotations

import sys
from datetime import UTC, date, datetime
from enum import StrEnum
from typing import Annotated

import orjson
import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from storage.errors import BriefError, InputError, StoreError

app = typer.Typer(
    name="brief",
    help="dailybrief: an event-sourced daily brief of AI news.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "[[delivery]]" stays as written
)
# No console markup: what is printed (feed titles, error reasons, config names such as
# [storage]) is text, never Rich markup; styled words are built as Text.
out = Console(highlight=False, soft_wrap=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Plain strings, and ``(text, style)`` pairs for the styled words."""
    return Text.assemble(*parts)


ConfigOption = Annotated[
    str | None, typer.Option("--config", "-c", help="Config file (default: $BRIEF_CONFIG or ./brief.toml).")
]


class Format(StrEnum):
    table = "table"
    jsonl = "jsonl"


def parse_day(text: str | None, option: str = "--date") -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{option} {text!r} is not a date; use YYYY-MM-DD, e.g. 2025-08-06") from None


def parse_time(text: str | None, option: str = "--as-of") -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{option} {text!r} is not an ISO time; use e.g. 2025-08-06T18:00:00Z") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def prefect_defaults() -> None:
    """Before Prefect is imported: no analytics, and a temporary server (started when
    PREFECT_API_URL names none) gets 90 s to come up on a busy machine instead of 20."""
    import os

    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")


def print_version(wanted: bool) -> None:
    if wanted:
        from importlib.metadata import version

        out.print(f"brief (dailybrief) {version('dailybrief')}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option("--version", help="Print the version and exit.", callback=print_version, is_eager=True),
    ] = False,
) -> None:
    """dailybrief: an event-sourced daily brief of AI news."""


def open_store(config: str | None, *, must_exist: bool = True):
    from tasks.settings import load_settings

    settings = load_settings(config)
    store = settings.storage.event_store()
    if must_exist and store.fs.get_file_info(store.base).type.name == "NotFound":
        raise StoreError(
            f"storage root {settings.storage.root!r} does not exist; run 'brief run' first "
            "or fix [storage] root in the config"
        )
    return settings, store


@app.command()
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
    import polars as pl

    from storage.registry import REGISTRY

    wanted = parse_day(day)
    for t in event_type or []:
        REGISTRY.spec(t)  # unknown types are a user mistake, said in one line
    _, store = open_store(config)
    frame = store.query(lambda: _filtered(store, wanted, event_type, run))
    if fmt is Format.jsonl:
        write = sys.stdout.write
        for row in frame.with_columns(pl.col("occurred_at").dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ")).iter_rows(
            named=True
        ):
            row["brief_date"] = row["brief_date"].isoformat()
            row["payload"] = orjson.Fragment(row["payload"])
            write(orjson.dumps(row).decode() + "\n")
        return
    from flows.views import events_view

    shown = frame if limit <= 0 else frame.tail(limit)
    title = (
        f"{frame.height} event(s)"
        + (f", last {shown.height} shown" if shown.height < frame.height else "")
        + " (UTC; --format jsonl gives every payload whole)"
    )
    out.print(events_view(list(shown.iter_rows(named=True)), title, out.width))


def _filtered(store, day, types, run):
    import polars as pl

    frame = store.scan([day] if day else None, event_types=types or None)
    if run:
        frame = frame.filter(pl.col("run_id").str.starts_with(run))
    return frame


DISPLAY_COLUMNS = {
    "articles": ["published_at", "source", "title", "language", "corrections"],
    "seen": ["kind", "key", "first_brief_date", "last_brief_date"],
    "runs": ["run_id", "flow", "status", "started_at", "duration_s", "events", "error"],
    "stories": ["story_id", "first_brief_date", "last_brief_date", "articles", "follow_up_of"],
    "questions": ["question_id", "type", "status", "answer", "by", "prompt"],
    "briefs": ["date", "version", "items", "published_at", "markdown"],
    "scores": ["story_id", "title", "outcome", "relevance", "importance", "reasons", "marked_by"],
}


@app.command()
def replay(
    day: Annotated[str, typer.Option("--date", help="Brief date whose events to fold (YYYY-MM-DD).")],
    as_of: Annotated[str | None, typer.Option("--as-of", help="Only events up to this UTC time.")] = None,
    projection: Annotated[
        str, typer.Option("--projection", help="articles, seen, runs, stories, questions, briefs or scores.")
    ] = "articles",
    fmt: Annotated[Format, typer.Option("--format")] = Format.table,
    config: ConfigOption = None,
) -> None:
    """Show a projection of one day as it stood at a time."""
    from storage.projections import get_projection, materialize

    wanted = parse_day(day)
    moment = parse_time(as_of)
    get_projection(projection)
    _, store = open_store(config)
    if wanted not in store.days():
        raise InputError(f"no events for {day}; 'brief events' lists what the log holds")
    frame = materialize(store, projection, days=[wanted] if wanted else None, as_of=moment)
    if fmt is Format.jsonl:
        for line in frame.write_ndjson().splitlines():
            sys.stdout.write(line + "\n")
        return
    title = (
        f"{projection} of {day}"
        + (f" as of {moment.isoformat()}" if moment else "")
        + f": {frame.height} row(s)"
    )
    if projection == "questions":
        from flows.views import questions_view

        out.print(questions_view(list(frame.iter_rows(named=True)), title))
        return
    if projection == "scores":
        from flows.views import scores_view

        out.print(scores_view(list(frame.iter_rows(named=True)), title))
        return
    table = Table(title=title)
    columns = [c for c in DISPLAY_COLUMNS.get(projection, frame.columns) if c in frame.columns]
    for column in columns:
        if column.endswith("_id") or column.endswith("date"):  # an id or a date is copied whole
            widest = max((len(str(v)) for v in frame[column].to_list() if v is not None), default=0)
            table.add_column(column, no_wrap=True, min_width=min(max(widest, len(column)), 22))
        else:
            table.add_column(column, overflow="fold")
    for row in frame.select(columns).iter_rows():
        table.add_row(*["" if v is None else str(v)[:90] for v in row])
    out.print(table)


@app.command()
def trace(
    day: Annotated[str, typer.Option("--date", help="Brief date of the item (YYYY-MM-DD).")],
    story: Annotated[str, typer.Option("--story", help="The item's story id (or its first characters).")],
    config: ConfigOption = None,
) -> None:
    """Where an item of a brief came from: its analysis, score, clustering, articles and feed fetches."""
    from ops.trace import render, trace

    wanted = parse_day(day)
    assert wanted is not None
    settings, store = open_store(config)
    for line in render(trace(store, settings, wanted, story), min(80, out.width)):
        out.print(line)


@app.command()
def run(
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    show: Annotated[bool, typer.Option("--show", help="Print the Markdown brief when done.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also show Prefect's, the gates' and the models' output (else in the run's log).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """The daily brief of one date: collect, dedup, analyze, write, fact-check, gate, publish.

    Prints one line per step and the brief; the rest of the run's output goes to its log file
    (under the store root, in logs/DATE/), and to the screen as well with --verbose."""

    from tasks import steps
    from tasks.settings import load_settings

    wanted = parse_day(day)
    settings = load_settings(config)  # a bad config fails here, before Prefect starts
    if wanted is not None:
        steps.refuse_future(wanted, settings, "--date")
    if not settings.sources:
        raise InputError("the config has no [[sources]]; add one with name = … and url = …")
    prefect_defaults()
    with err.status("starting Prefect and running the daily brief …"):
        from flows.daily import daily_brief
        from flows.runlog import run_log, run_output

        log = run_log(settings, wanted or steps.today(settings))
        try:
            with run_output(log, lambda line: out.print(line, soft_wrap=True), verbose=verbose):
                result = daily_brief(day, config)
        except BriefError:
            err.print(f"the run's log: {log.shown}")
            raise
    state = "new version" if result["changed"] else "unchanged"
    out.print(
        styled(
            (f"Brief for {result['date']}", "bold"),
            f" (v{result['version']}, {state}): {result['items']} items in {result['seconds']:.1f} s",
        )
    )
    for ext, path in [*result["files"].items(), ("log", log.shown)]:
        out.print(f"  {ext:<4} {path}", soft_wrap=True)  # a path is never broken: it is copied whole
    out.print(f"  {result['policy']}")  # which policy decided (ops/policy.py governing)
    if result.get("left_out"):
        out.print(f"  {result['left_out']}", soft_wrap=True)  # the command is copied whole
    if result.get("skipped"):
        reasons = sorted(set(result["skipped"].values()))
        out.print(f"  not fetched: {', '.join(result['skipped'])} ({'; '.join(reasons)})")
    if result["delivered"]:
        out.print(f"  delivered to {', '.join(result['delivered'])}")
    if result["delivery_failed"]:
        err.print(
            f"warning: delivery to {', '.join(result['delivery_failed'])} failed; "
            f"'brief events --date {result['date']} --type delivery.failed' says why, "
            f"'brief deliver --date {result['date']}' resends"
        )
    if show:
        from rich.markdown import Markdown

        _, store = open_store(config)
        with store.fs.open_input_stream(result["files"]["md"]) as src:
            out.print(Markdown(src.read().decode()))


@app.command()
def backfill(
    start: Annotated[str, typer.Option("--start", help="First brief date (YYYY-MM-DD).")],
    end: Annotated[str, typer.Option("--end", help="Last brief date, inclusive.")],
    concurrency: Annotated[int, typer.Option(help="Dates run at once.", min=1, max=8)] = 2,
    fan_out: Annotated[
        bool,
        typer.Option(
            "--fan-out",
            help="Each date a flow run of the daily-brief deployment, run by the pool's workers "
            "(needs PREFECT_API_URL and 'prefect deploy --all').",
        ),
    ] = False,
    deliver: Annotated[
        bool, typer.Option("--deliver", help="Also send each date's brief to the [[delivery]] channels.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Briefs for a range of past dates: archives collected, live feeds replayed; idempotent."""

    from flows.backfill import date_range
    from tasks import steps
    from tasks.settings import load_settings

    days = date_range(start, end)
    steps.refuse_future(days[-1], load_settings(config), "--end")
    prefect_defaults()
    with err.status(f"backfilling {len(days)} date(s), {concurrency} at a time …"):
        from flows.backfill import backfill as backfill_flow

        outcomes = backfill_flow(start, end, config, concurrency, fan_out=fan_out, deliver=deliver)
    table = Table(title=f"backfill {start} .. {end}")
    for column in ("date", "status", "version", "items", "new version", "seconds", "error"):
        table.add_column(column, overflow="fold")
    for o in outcomes:
        table.add_row(
            o["date"],
            o["status"],
            str(o["version"] or ""),
            str(o["items"]),
            "yes" if o["changed"] else "no",
            f"{o.get('seconds') or 0:.1f}",
            o["error"],
        )
    out.print(table)
    for line in dict.fromkeys(o["policy"] for o in outcomes if o.get("policy")):
        out.print(line)  # which policy decided the dates (one line unless it changed meanwhile)
    failed = [o["date"] for o in outcomes if o["status"] != "completed"]
    if failed:
        err.print(
            f"error: {len(failed)} date(s) failed: {', '.join(failed)}; rerun them with brief run --date D"
        )
        raise SystemExit(1)


@app.command()
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
    from ops.stats import daily_stats

    first, last = parse_day(start, "--start"), parse_day(end, "--end")
    if labels is not None and not shadow:
        raise InputError("--labels only applies with --shadow; add --shadow or drop --labels")
    settings, store = open_store(config)
    if shadow:
        return shadow_stats(store, first, last, labels, settings.policy.lookback_hours, fmt)
    frame = daily_stats(store, first, last)
    if fmt is Format.jsonl:
        for line in frame.write_ndjson().splitlines():
            sys.stdout.write(line + "\n")
        return
    from flows.views import stats_view

    out.print(stats_view(frame, out.width))


def shadow_stats(
    store, first: date | None, last: date | None, labels: str | None, lookback: int, fmt: Format
) -> None:
    """``brief stats --shadow``: each shadow candidate beside the live policy (``ops/shadow_stats.py``)."""
    from pathlib import Path

    from ops.evaluate import check_labels_folder
    from ops.shadow_stats import compare

    folder = Path(labels) if labels else None
    if folder is not None:
        check_labels_folder(folder)
    found = compare(store, first, last, folder, lookback)
    for comparison in found:
        if fmt is Format.jsonl:
            sys.stdout.write(orjson.dumps(comparison.record()).decode() + "\n")
            continue
        frame = comparison.table()
        days = f"{comparison.days[0]} .. {comparison.days[-1]}"
        result = Table(title=f"shadow {comparison.candidate} ({comparison.file}), {days}")
        for column in frame.columns:
            result.add_column(column)
        for row in frame.iter_rows():
            result.add_row(*row)
        out.print(result)
        out.print(comparison.line())


@app.command()
def serve(
    port: Annotated[
        int | None, typer.Option(help="Port of the local Prefect server (default: a free one).")
    ] = None,
    desk: Annotated[
        bool, typer.Option("--desk/--no-desk", help="Serve the editor's desk beside the scheduler.")
    ] = True,
    desk_host: Annotated[
        str, typer.Option("--desk-host", help="The desk's address; any but loopback needs [desk.people].")
    ] = "127.0.0.1",
    desk_port: Annotated[int, typer.Option("--desk-port", help="The desk's port.", min=1, max=65535)] = 8484,
    config: ConfigOption = None,
) -> None:
    """Local Prefect server (unless PREFECT_API_URL names one), scheduled deployments and the editor's
    desk; Ctrl-C stops."""
    import os
    from pathlib import Path

    from flows.serve import serve as serve_stack
    from tasks.settings import config_path, load_settings

    path = str(config_path(config).resolve())
    load_settings(path)
    home = Path(os.environ.get("PREFECT_HOME", Path.home() / ".prefect"))
    serve_stack(path, home, lambda line: out.print(line), port, (desk_host, desk_port) if desk else None)


@app.command()
def review(
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    answers: Annotated[
        str | None,
        typer.Option(
            "--answers",
            help='JSON file {"<question_id>": "<answer>", "marks": {"<story>": "<mark>"}}: '
            "answer without asking.",
        ),
    ] = None,
    mark: Annotated[
        list[str] | None,
        typer.Option(
            "--mark",
            help="STORY=MARK without being asked: a story id, article id or link, and off-topic, related, "
            "core or lead (repeatable).",
        ),
    ] = None,
    as_case: Annotated[
        bool,
        typer.Option(
            "--as-case",
            help="Keep each mark and same-story answer given here as a regression case (see brief regress).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Answer the questions the pipeline could not settle, a batch at a time; then re-render the brief."""
    from flows.review import answers_from_file, ask, parse_marks
    from ops import acts
    from tasks import steps
    from tasks.settings import load_settings

    settings = load_settings(config)
    wanted = steps.refuse_future(parse_day(day) or steps.today(settings), settings, "--date")
    open_store(config)  # a missing store is one clear line
    marks = parse_marks(mark or [])
    questions = steps.open_questions(acts.context(settings, wanted, "review"))
    given: list[acts.Answer] = []
    if answers:
        given, from_file = answers_from_file(questions, answers, wanted)
        marks = {**from_file, **marks}
    elif not marks:
        if questions.height == 0:
            out.print(f"No open questions for {wanted}.")
            return
        given = ask(questions, wanted, out)
    elif questions.height:  # marks given at the command line: nothing is asked meanwhile
        out.print(f"{questions.height} question(s) still open; 'brief review --date {wanted}' asks them")
    if not given and not marks:
        out.print("No answers given; the brief is unchanged.")
        return
    # answering a held brief's questions is a person's look at it: that approves it
    with err.status("re-rendering and delivering the brief …"):
        outcome = acts.answer(settings, acts.Act(wanted, acts.approver(), as_case=as_case), given, marks)
    published = outcome.published
    assert published is not None  # an act that recorded something publishes
    state = f"new version v{published.version}" if published.changed else f"unchanged (v{published.version})"
    out.print(
        f"{len(given) + len(marks)} answer(s) recorded. Brief for {wanted}: {state}: {published.files['md']}"
    )
    if outcome.delivery is not None:
        print_delivery(outcome.delivery)
    if as_case:
        print_cases(outcome)


def print_cases(outcome) -> None:
    """``--as-case``: the regression cases an act kept, and why any was not."""
    for why in outcome.refused:
        err.print(f"not kept as a regression case: {why}", soft_wrap=True)
    for case in outcome.cases:
        p = case.payload
        expected = f"{p['expect']}:{p['other_story_id']}" if p["other_story_id"] else p["expect"]
        out.print(
            f"kept as regression case {p['case_id']}: {outcome.day} {p['story_id']} expected {expected}"
        )
    if not outcome.cases and not outcome.refused:
        out.print("no mark or same-story answer to keep as a regression case")


def print_delivery(outcome) -> None:
    """One line per channel: sent, failed (and how to resend), or why not."""
    for sent in outcome.sent:
        if sent.ok:
            out.print(
                f"  {sent.channel:<16} {sent.kind} v{sent.version} delivered ({sent.attempts} attempt(s))"
            )
        else:
            out.print(
                styled(
                    f"  {sent.channel:<16} ",
                    ("failed", "red"),
                    f" after {sent.attempts} attempt(s): {sent.reason}",
                )
            )
    for name, why in outcome.skipped:
        out.print(f"  {name:<16} not sent: {why}", markup=False)
    if not outcome.sent and not outcome.skipped and outcome.waiting is None:
        out.print(f"  nothing to send: every channel has v{outcome.version} of {outcome.day}")


@app.command()
def deliver(
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    channel: Annotated[str | None, typer.Option("--channel", help="Only this [[delivery]] channel.")] = None,
    due: Annotated[
        bool, typer.Option("--due", help="Release every held brief whose hold_until has passed.")
    ] = False,
    now: Annotated[
        str | None,
        typer.Option("--now", help="With --due: judge the deadlines at this UTC time (default: now)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Send the day's brief to the channels that have not had it (after a failure, or by hand)."""
    from ops.acts import deliver as resend
    from ops.acts import release_due
    from tasks import steps
    from tasks.settings import load_settings

    moment = parse_time(now, "--now")
    if moment is not None and not due:
        raise InputError("--now only applies with --due; add --due or drop --now")
    given = parse_day(day)
    if given is not None:  # before the store is opened: a refused date is one line
        steps.refuse_future(given, load_settings(config), "--date")
    settings, _ = open_store(config)
    if not settings.delivery.channels:
        raise InputError("the config has no [[delivery]] channels; add one with name = … and url = …")
    if due:
        if day or channel:
            raise InputError("--due releases every held brief past its deadline; drop --date and --channel")
        outcomes = release_due(settings, now=moment, say=lambda line: out.print(line, markup=False))
        if not outcomes:
            out.print("No held brief is past its deadline.")
        failed = [s for o in outcomes for s in o.failed]
    else:
        wanted = given or steps.today(settings)
        with err.status(f"delivering the brief of {wanted} …"):
            outcome = resend(settings, wanted, channel)
        out.print(styled((f"Brief for {wanted}", "bold"), f" (v{outcome.version}):"))
        print_delivery(outcome)
        if outcome.waiting:
            out.print(f"  {outcome.waiting}", markup=False)
        failed = outcome.failed
    if failed:
        err.print(f"error: {len(failed)} channel(s) failed; see above, fix the channel and run this again")
        raise SystemExit(1)


@app.command()
def approve(
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="Who approves (default: $BRIEF_USER or $USER).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Approve a held brief: readers get it now (the approval is an event)."""
    from ops import acts
    from tasks import steps

    settings, _ = open_store(config)
    wanted = parse_day(day) or steps.today(settings)
    with err.status(f"approving the brief of {wanted} …"):
        outcome = acts.approve(settings, acts.Act(wanted, by or acts.approver()))
    delivery = outcome.delivery
    assert delivery is not None
    out.print(styled((f"Brief for {wanted}", "bold"), f" (v{delivery.version}) approved:"))
    print_delivery(delivery)
    if delivery.failed:
        err.print(f"error: {len(delivery.failed)} channel(s) failed; 'brief deliver --date {wanted}' resends")
        raise SystemExit(1)


def _editor_act(config: str | None, day: str | None, act) -> None:
    """A person's act on the day's brief (``act(settings, day)`` calls its ``ops.acts`` function):
    recorded, the new version published and what the channels are owed sent; then said."""
    from tasks import steps

    settings, _ = open_store(config)
    wanted = steps.refuse_future(parse_day(day) or steps.today(settings), settings, "--date")
    with err.status("re-rendering the brief …"):
        outcome = act(settings, wanted)
    published = outcome.published
    state = f"new version v{published.version}" if published.changed else f"unchanged (v{published.version})"
    out.print(f"Recorded. Brief for {wanted}: {state}: {published.files['md']}")
    if outcome.delivery is not None:
        print_delivery(outcome.delivery)


StoryArgument = Annotated[
    str, typer.Argument(help="The item's story id (the story_id of the brief's JSON file).")
]
ByOption = Annotated[str | None, typer.Option("--by", help="Who (default: $BRIEF_USER or $USER).")]


@app.command()
def correct(
    story: StoryArgument,
    title: Annotated[str | None, typer.Option("--title", help="The headline readers should see.")] = None,
    summary: Annotated[str | None, typer.Option("--summary", help="The summary readers should see.")] = None,
    note: Annotated[str, typer.Option("--note", help="What was wrong, shown in the correction line.")] = "",
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    by: ByOption = None,
    config: ConfigOption = None,
) -> None:
    """Correct an item's headline or summary: a new version shows it with a visible correction line."""
    from ops import acts

    if title is None and summary is None:
        raise InputError("give --title and/or --summary: the text readers should see")
    who = by or acts.approver()
    fields = {name: value for name, value in (("title", title), ("summary", summary)) if value is not None}
    _editor_act(
        config,
        day,
        lambda settings, wanted: acts.correct(settings, acts.Act(wanted, who), story, fields, note),
    )


@app.command()
def retract(
    story: StoryArgument,
    note: Annotated[str, typer.Option("--note", help="Why; readers see it where the item was.")],
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    by: ByOption = None,
    config: ConfigOption = None,
) -> None:
    """Retract an item: a new version leaves it out and shows the note in its place."""
    from ops import acts

    who = by or acts.approver()
    _editor_act(
        config, day, lambda settings, wanted: acts.retract(settings, acts.Act(wanted, who), story, note)
    )


@app.command()
def desk(
    host: Annotated[
        str, typer.Option("--host", help="Address to listen on; any but loopback needs [desk] people.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.", min=1, max=65535)] = 8484,
    config: ConfigOption = None,
) -> None:
    """The editor's desk in a browser: read, mark, correct, retract, answer, approve, look back."""
    from flows.desk.app import create_app, listen

    settings, _ = open_store(config)
    application = create_app(settings, host)  # refuses a non-loopback host without [desk] people
    out.print(f"The desk of {settings.storage.root} at http://{host}:{port}/ (Ctrl-C stops)")
    listen(application, host, port)


@app.command()
def alerts(
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="First find runs killed without a word (recorded crashed), a late brief, and alerts "
            "still owed, and send them.",
        ),
    ] = False,
    now: Annotated[
        str | None,
        typer.Option("--now", help="Judge at this UTC time (default: now), e.g. whether a brief is late."),
    ] = None,
    days: Annotated[int, typer.Option("--days", help="Alerts of the last N brief dates.", min=1)] = 7,
    fmt: Annotated[
        Format, typer.Option("--format", help="table for people, jsonl for scripts.")
    ] = Format.table,
    config: ConfigOption = None,
) -> None:
    """The recent alerts, newest first: what went wrong, sent where (or why not)."""
    from flows.alerting import check as check_now
    from tasks.steps.alert import recent_alerts

    moment = parse_time(now, "--now")
    settings, _ = open_store(config, must_exist=not check)
    failed = []
    if check:
        prefect_defaults()
        with err.status("checking runs and alerts …"):
            outcome = check_now(settings, now=moment, say=lambda line: err.print(line))
        failed = outcome.failed
        if not settings.alerts:
            err.print("no [[alerts]] in the config: nothing is sent (see 'Alerts' in the guide)")
        out.print(
            f"checked: {len(outcome.crashed)} crashed run(s) found, {len(outcome.sent)} alert(s) sent, "
            f"{len(failed)} failed"
        )
    rows = recent_alerts(settings, days, moment)
    if fmt is Format.jsonl:
        for row in rows:
            sys.stdout.write(orjson.dumps({**row, "at": row["at"].isoformat()}).decode() + "\n")
    else:
        table = Table(title=f"alerts of the last {days} day(s): {len(rows)}")
        table.add_column("date, sent", no_wrap=True)
        table.add_column("cause", overflow="fold", max_width=22)
        table.add_column("channel", overflow="fold", max_width=12)
        table.add_column("what", overflow="fold")
        for row in rows:
            what = row["what"] if row["status"] == "sent" else f"FAILED: {row['what']}"
            when = f"{row['date']}\n{row['at']:%m-%d %H:%M}"  # the brief date, then the time it went
            table.add_row(when, row["cause"], row["channel"], what)
        out.print(table)
    if failed:
        err.print(f"error: {len(failed)} alert(s) could not be sent; see above; the next check tries again")
        raise SystemExit(1)


def utcnow_tag() -> str:
    from storage.events import utcnow

    return utcnow().strftime("%Y%m%dT%H%M%S%f")


@app.command()
def collect(
    day: Annotated[
        str | None,
        typer.Option("--date", help="Brief date to collect (default: today in the configured timezone)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Collect every configured source for a date into the event log (the first step of a brief)."""
    from rich.progress import Progress

    from storage.events import utcnow
    from tasks import steps
    from tasks.collect import Source
    from tasks.steps.collect import collect_kept

    settings, store = open_store(config, must_exist=False)
    wanted = steps.refuse_future(parse_day(day) or steps.today(settings), settings, "--date")
    if not settings.sources:
        raise InputError("the config has no [[sources]]; add one with name = … and url = …")
    run_id = f"collect-{wanted.isoformat()}-{utcnow().strftime('%Y%m%dT%H%M%S%f')}"
    written = skipped = 0
    with Progress(console=err, transient=True) as progress:
        bar = progress.add_task("collecting", total=len(settings.sources))
        for src in settings.sources:
            progress.update(bar, description=f"collecting {src.name}")
            events = collect_kept(store, Source(src.name, src.url, src.language, src.kind), wanted, run_id)
            result = store.append(events)
            written, skipped = written + result.written, skipped + result.skipped
            failed = [e for e in events if e.event_type == "feed.failed"]
            items = sum(e.event_type == "article.collected" for e in events)
            status = (
                styled(("failed", "red"), f" {failed[0].payload['error']}: {failed[0].payload['message']}")
                if failed
                else Text(f"{items} items")
            )
            out.print(Text(f"  {src.name:<20} ") + status)
            progress.advance(bar)
    out.print(
        f"{wanted}: {written} new event(s), {skipped} already in the log; store at {settings.storage.root}"
    )


@app.command()
def check(
    day: Annotated[
        str | None,
        typer.Option(
            "--date", help="Check the dated archives of this date (default: today).", show_default=False
        ),
    ] = None,
    send_test: Annotated[
        bool, typer.Option("--send-test", help="Send one test message to every channel.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Pre-flight: the config, the store, every source fetched once, every channel; exit 1 on a failure."""
    from ops.preflight import check_config, preflight
    from tasks import steps

    given = parse_day(day)
    settings, config_check = check_config(config)
    checks = [config_check]
    if settings is not None:
        today = steps.today(settings)
        wanted = steps.refuse_future(given or today, settings, "--date")
        with err.status("fetching every source once …"):
            checks += preflight(settings, wanted, today, send_test=send_test)
    table = Table(title="brief check" + (f" of {given}" if given else ""), title_justify="left")
    table.add_column("check", overflow="fold", max_width=22)
    table.add_column("", no_wrap=True)
    table.add_column("detail", overflow="fold")
    marks = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "bold red")}
    for c in checks:
        table.add_row(c.what, styled(marks[c.status]), c.detail)
    out.print(table)
    failed = [c for c in checks if c.status == "fail"]
    for c in checks:
        if c.status != "ok":
            word = "error" if c.status == "fail" else "warning"
            err.print(f"{word}: {c.what}: {c.detail}; {c.fix}", soft_wrap=True)
    if settings is None:
        raise SystemExit(2)  # a mistake in the config, as every command says it
    if failed:
        out.print(f"{len(failed)} of {len(checks)} checks failed")
        raise SystemExit(1)
    warned = sum(c.status == "warn" for c in checks)
    out.print(f"all {len(checks)} checks passed" + (f" ({warned} with a warning)" if warned else ""))


@app.command()
def compact(
    day: Annotated[str | None, typer.Option("--date", help="Only this day (default: every day).")] = None,
    config: ConfigOption = None,
) -> None:
    """Merge each day's segments and small files into one zstd Parquet file; the events stay the same
    (but for what [retention] thins on days past its age)."""
    from storage import retention
    from tasks import steps

    wanted = parse_day(day)
    settings, store = open_store(config)
    days = [wanted] if wanted else store.days()
    if wanted and wanted not in store.days():
        raise InputError(f"no events for {day}; 'brief events' lists what the log holds")
    rules, today = retention.parse_rules(settings.retention), steps.today(settings)
    for d in days:
        thinned = retention.apply(store, d, rules, today)
        if thinned is not None:
            what = ", ".join(f"{n} {t}" for t, n in sorted(thinned.events.items())) or "no event"
            out.print(
                f"{d}: {thinned.files_before} file(s) -> 1, {thinned.events_total} events; "
                f"thinned {what}; {thinned.bodies} raw bod(ies) dropped"
            )
            continue
        result = store.compact(d)
        out.print(f"{d}: {result.files_before} file(s) -> {result.files_after}, {result.events} events")
    if rules and (frozen := retention.thin_frozen(store, rules, today)):
        out.print(f"regression set: {frozen} frozen event(s) thinned")


export_app = typer.Typer(
    help="Take the event log out: events for analysis, datasets for fine-tuning.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(export_app, name="export")


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
    from pathlib import Path

    from rich.progress import Progress

    from storage.export import export_events
    from storage.registry import REGISTRY

    first, last = parse_day(start, "--start"), parse_day(end, "--end")
    for t in event_type or []:
        REGISTRY.spec(t)
    _, store = open_store(config)
    assert first is not None and last is not None
    days = [d for d in store.days() if first <= d <= last]
    with Progress(console=err, transient=True) as progress:
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
        f"{result.events} event(s) of {len(result.counts)} day(s) -> {result.out}\n"
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
    from pathlib import Path

    from ops.finetune import build

    first, last = parse_day(start, "--start"), parse_day(end, "--end")
    _, store = open_store(config)
    days = store.days()
    if not days:
        raise InputError("the event log is empty; run 'brief run' first")
    card = build(store, task, fmt, Path(out_path), first or days[0], last or days[-1])
    out.print(f"{card['records']} record(s) ({card['human_labelled']} human-labelled) -> {out_path}")


@app.command()
def evaluate(
    policy: Annotated[
        str | None, typer.Option("--policy", help="Candidate policy: TOML with a [policy] table.")
    ] = None,
    start: Annotated[str | None, typer.Option("--start", help="First brief date (YYYY-MM-DD).")] = None,
    end: Annotated[str | None, typer.Option("--end", help="Last brief date, inclusive.")] = None,
    labels: Annotated[
        str | None, typer.Option("--labels", help="Folder of stories-<date>.json labels.")
    ] = None,
    regression: Annotated[
        bool,
        typer.Option(
            "--regression",
            help="Replay the regression set (brief regress) under the policy in force and --policy; "
            "list the failures (exit 1 when the policy evaluated fails a case).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Replay stored facts through a candidate policy beside the current one; nothing is published."""
    from pathlib import Path

    if regression and start is None and end is None:
        regress_evaluate(policy, config)
        return
    if policy is None:
        raise InputError("give --policy FILE (or --regression to replay the regression set)")
    if start is None or end is None:  # the days that hold news, as brief learn reads them
        _, stored = open_store(config)
        held = sorted({e.brief_date for e in stored.read(event_types=["feed.fetched"])})
        if not held:
            raise InputError("the store holds no collected day yet; run or backfill some dates first")
        start, end = start or held[0].isoformat(), end or held[-1].isoformat()

    from flows.backfill import date_range
    from ops.evaluate import (
        candidate_settings,
        check_labels_folder,
        evaluate_policy,
        record,
        table,
        unseen,
        verdict,
    )
    from ops.learn import seen_by
    from ops.policy import governing
    from tasks.editorial import load_model
    from tasks.settings import load_settings

    configured = load_settings(config)
    candidate = candidate_settings(policy, configured)
    _, store = open_store(config)
    settings = governing(configured, store).settings  # "current" is the policy in force
    days = [d for d in date_range(start, end) if d in set(store.days())]
    if not days:
        raise InputError(f"no stored events between {start} and {end}; run or backfill those dates first")
    folder = Path(labels) if labels else None
    if folder is not None:
        check_labels_folder(folder)
    figures = {}
    judged: dict[str, dict] = {}
    for name, chosen in (("current", settings), ("candidate", candidate)):
        version = chosen.policy_version()
        judged[name] = {}
        with err.status(f"replaying {len(days)} day(s) through the {name} policy ({version}) …"):
            figures[f"{name} {version}"] = evaluate_policy(chosen, chosen.policy, days, folder, judged[name])
    if (
        folder is not None
        and not any(k.startswith("label:") for day in judged["candidate"].values() for k in day)
        and all(f["label_f1"] is None for f in figures.values())
    ):
        raise InputError(
            f"--labels {labels!r}: none of its labels names an article of the stored days "
            f"{days[0]} .. {days[-1]}; check the folder and --start/--end"
        )
    seen_keys, seen_stories = set(), set()
    for chosen in (settings, candidate):
        keys, stories = seen_by(load_model(chosen.policy.editorial_model))
        seen_keys |= keys
        seen_stories |= stories
    per_day, left_out = unseen(judged["current"], judged["candidate"], seen_keys, seen_stories)
    decided = verdict(per_day, left_out)
    record(settings, candidate, days[0], days[-1], figures, folder, decided)
    frame = table(figures)
    result = Table(title=f"policy evaluation {days[0]} .. {days[-1]}")
    for column in frame.columns:
        result.add_column(column)
    for row in frame.iter_rows():
        result.add_row(*row)
    out.print(result)
    out.print(decided["line"])
    out.print("recorded as a policy.evaluated event")
    if regression:
        regress_evaluate(policy, config)


@app.command()
def learn(
    out_path: Annotated[
        str,
        typer.Option(
            "--out", help="Candidate policy TOML (its model JSON is written beside it), or a .json model."
        ),
    ],
    start: Annotated[
        str | None, typer.Option("--start", help="First brief date (default: the first stored).")
    ] = None,
    end: Annotated[
        str | None, typer.Option("--end", help="Last brief date, inclusive (default: the last).")
    ] = None,
    labels: Annotated[
        str | None,
        typer.Option(
            "--labels",
            help="Folder of hand labels to fit on too: relevance-*.json, <name>-YYYY-MM-DD.json (one day).",
        ),
    ] = None,
    name: Annotated[
        str | None, typer.Option("--name", help="The model's name (default: the file's).")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Fit a candidate relevance and importance model from answers and hand labels; print its card.

    The candidate is the policy in force (pinned, adopted, else the config's) with the new model;
    without --labels the model in force is the one refined."""
    from pathlib import Path

    from ops.learn import Labels, card_text, collect_examples, fit, read_labels, write
    from ops.policy import governing
    from tasks.editorial import load_model

    out_file = Path(out_path)
    if out_file.suffix not in (".toml", ".json"):
        raise InputError(f"--out {out_path!r}: give a .toml (candidate policy) or a .json (model) file name")
    given = read_labels(Path(labels)) if labels else Labels()
    if labels and not given:
        raise InputError(
            f"--labels {labels!r} holds no hand labels (relevance-*.json or <name>-YYYY-MM-DD.json); "
            "point it at the labels folder or leave it out"
        )
    config_settings, store = open_store(config)
    settings = governing(config_settings, store).settings  # the policy in force: what is refined
    stored = store.days()
    first, last = parse_day(start, "--start") or (stored[0] if stored else None), parse_day(end, "--end")
    days = [d for d in stored if (first is None or d >= first) and (last is None or d <= last)]
    if not days:
        raise InputError("no stored days in that range; run or backfill them first")

    def progress(day, n):
        err.print(f"  {day}: {n} example(s) so far")

    with err.status(f"replaying {len(days)} day(s) for examples …"):
        examples = collect_examples(settings, days, given, progress)
    if labels and not any(e.by == "label" for e in examples):
        raise InputError(
            f"--labels {labels!r}: none of its {len(given)} labels names an article of the stored days "
            f"{days[0]} .. {days[-1]}; check the folder and --start/--end"
        )
    if not examples:
        raise InputError(
            "no labelled or marked story in that range; mark stories in 'brief review' or give --labels"
        )
    base = None
    if not labels:  # people's answers refine the model in force (its training stories come along)
        base = load_model(settings.policy.editorial_model)
        if base.kind != "fitted" or not base.training:
            raise InputError(
                f"the model in force {settings.policy.editorial_model!r} keeps no training stories to "
                "refine; give --labels to fit from hand labels"
            )
    fitted = fit(
        examples,
        name or out_file.stem,
        settings.policy.topic.name,
        settings.embedding.model,
        note=f"brief learn over {days[0]} .. {days[-1]}" + (f" with labels from {labels}" if labels else ""),
        base=base,
    )
    model_path = write(fitted, out_file, settings, config_settings)
    out.print(card_text(fitted.model), markup=False, highlight=False)
    if out_file.suffix == ".toml":
        out.print(
            f"candidate written: {out_path} (model {model_path}), the policy in force with this model; "
            f"compare it with 'brief evaluate --policy {out_path} --start … --end …', "
            f"adopt it with 'brief policy adopt {out_path} --reason …'",
            markup=False,
            highlight=False,
            soft_wrap=True,  # a command to copy: not broken over lines
        )
    else:
        out.print(
            f"model written: {model_path} (card {model_path.with_suffix('.card.md')}); a model, not a "
            "policy: for a candidate to compare or adopt, run 'brief learn --out NAME.toml' "
            "(the policy in force with the new model)",
            markup=False,
            highlight=False,
            soft_wrap=True,  # a command to copy: not broken over lines
        )


policy_app = typer.Typer(
    help="The adopted policy: adopt a candidate, show it, its history, what changed, roll back.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(policy_app, name="policy")
ReasonOption = Annotated[str, typer.Option("--reason", help="Why, in a few words (recorded).")]


def _person(by: str | None) -> str:
    import re

    from flows.deliver import approver
    from tasks.settings import PERSON_NAME

    who = by or approver()
    if not re.fullmatch(PERSON_NAME, who):
        raise InputError(f"--by {who!r} is not a name: use letters, digits, '.', '_' or '-' (at most 40)")
    return who


def _print_adoption(adoption) -> None:
    from ops.policy import change_lines, describe

    for line in describe(adoption.event):
        out.print(line)
    out.print("  changes:")
    for line in change_lines(adoption.event.payload["changes"]):
        out.print(line)
    if not adoption.written:
        out.print("  (this adoption was already in the log: nothing new written)")


@policy_app.command("adopt")
def policy_adopt(
    file: Annotated[str, typer.Argument(help="The candidate policy: a TOML file with a [policy] table.")],
    reason: ReasonOption,
    by: ByOption = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Adopt even if it fails regression cases the policy in force passes (recorded)."
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Adopt a candidate policy: a policy.adopted event holds it whole; the next run uses it.

    The regression set is replayed first: a candidate that fails a case the policy in force passes
    is refused, unless --force (the cases it breaks are recorded with the adoption)."""
    from ops.policy import adopt
    from tasks import steps

    who = _person(by)
    settings, store = open_store(config)
    check = regress_gate(settings, store, file, force)
    adoption = adopt(settings, store, file, who, reason, steps.today(settings), regression=check)
    _print_adoption(adoption)
    verdict = adoption.event.payload.get("verdict")
    if verdict in ("don't", "not enough evidence"):
        err.print(
            f"warning: adopted although its evaluation ({adoption.event.payload['evaluation']}) "
            f"said {verdict!r}; 'brief policy rollback' undoes it",
            markup=False,
            highlight=False,
        )
    if settings.policy_file:
        err.print(
            f"warning: the config pins policy_file = {settings.policy_file}; "
            "runs use that file until it is removed"
        )


@policy_app.command("rollback")
def policy_rollback(reason: ReasonOption, by: ByOption = None, config: ConfigOption = None) -> None:
    """Adopt again the policy in force before the current one (one more policy.adopted)."""
    from ops.policy import rollback
    from tasks import steps

    who = _person(by)
    settings, store = open_store(config)
    _print_adoption(rollback(settings, store, who, reason, steps.today(settings)))


@policy_app.command("show")
def policy_show(
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="The policy in force at this UTC time.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """The policy in force (now, or at --as-of): who adopted it, why, its settings and files."""
    from ops.columns import WIDTH, wrap
    from ops.policy import adoptions, describe, governing, history, setting_lines

    moment = parse_time(as_of)
    settings, store = open_store(config)
    history(store)  # puts back a copy of an adoption a crash left out of policies/adopted
    found = adoptions(store, moment)
    if not found:
        when = f" at {moment.isoformat()}" if moment else ""
        out.print(f"no policy adopted{when}: runs use the config's [policy] ({settings.policy_version()})")
        return
    event = found[-1]
    for line in describe(event):
        out.print(line)
    if moment is None and settings.policy_file:
        for line in wrap(f"note: {governing(settings, store).line}", WIDTH, "  ", "      "):
            out.print(line)
    out.print("  settings:")
    for line in setting_lines(dict(event.payload)):
        out.print(line)


@policy_app.command("history")
def policy_history(config: ConfigOption = None) -> None:
    """Every adoption, oldest first: when, which version, who, why, and on which evaluation."""
    from ops.policy import history

    _, store = open_store(config)
    events = history(store)
    if not events:
        out.print("no policy adopted yet; 'brief policy adopt FILE --reason …' adopts one")
        return
    table = Table(title=f"{len(events)} adoption(s)")
    for column in ("#", "adopted (UTC)", "version", "by", "reason", "evaluation", "changes"):
        table.add_column(column, overflow="fold")
    for n, e in enumerate(events, 1):
        p = e.payload
        table.add_row(
            str(n),
            f"{e.occurred_at:%Y-%m-%d %H:%M}",
            p["version"] + (" (rollback)" if p.get("rollback_of") else ""),
            p["by"],
            p["reason"],
            (p.get("verdict") or "recorded") if p.get("evaluation") else "none",
            str(len(p["changes"])),
        )
    out.print(table)


@policy_app.command("diff")
def policy_diff(
    a: Annotated[
        str,
        typer.Argument(
            help="An adoption: its number in 'brief policy history', version or event id; or 'baseline', "
            "the config's policy of before the first adoption."
        ),
    ],
    b: Annotated[str, typer.Argument(help="Another adoption (or 'baseline'), compared with the first.")],
    config: ConfigOption = None,
) -> None:
    """What changed between two adopted policies (or the baseline), setting by setting and file by file."""
    from ops.policy import change_lines, changes, held

    _, store = open_store(config)
    first, second = held(store, a), held(store, b)
    out.print(f"{first.version} -> {second.version}:")
    for line in change_lines(changes(first.payload, second.payload)):
        out.print(line)


# --- the regression set (brief regress …, evaluate --regression, the adoption gate) ---------

regress_app = typer.Typer(
    help="The regression set: decisions frozen with their facts, which every adopted policy must keep.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(regress_app, name="regress")


@regress_app.command("add")
def regress_add(
    day: Annotated[str, typer.Option("--date", help="The story's brief date (YYYY-MM-DD).")],
    story: Annotated[
        str, typer.Option("--story", help="A story id of that day's brief, an article id or a link.")
    ],
    expect: Annotated[
        str,
        typer.Option(
            "--expect",
            help="off-topic, related, core, lead, same-as:STORY or not-same:STORY (another story).",
        ),
    ],
    note: Annotated[str, typer.Option("--note", help="Why this decision matters (recorded).")] = "",
    by: ByOption = None,
    config: ConfigOption = None,
) -> None:
    """Freeze a decision as a regression case: the facts to replay it are kept under the root."""
    from ops.policy import governing
    from ops.regress import add_case, describe, parse_expectation, replay

    wanted = parse_day(day)
    assert wanted is not None
    expectation = parse_expectation(expect)
    who = _person(by)
    settings, store = open_store(config)
    event, written = add_case(settings, store, wanted, story, expectation, who, note, via="cli")
    p = event.payload
    what = "added" if written else "already in the set (nothing new written)"
    expected = f"{p['expect']}:{p['other_story_id']}" if p["other_story_id"] else p["expect"]
    out.print(f"case {p['case_id']} {what}: {wanted} {p['story_id']} expected {expected}")
    out.print(
        f"  frozen: {p['facts']['events']} event(s) of {p['facts']['first_day']} .. {p['facts']['last_day']}"
    )
    chosen = governing(settings, store)
    [result] = replay(chosen.settings, store, [event])
    verdict = "passes" if result.passed else "FAILS"
    out.print(f"  the policy in force ({chosen.record['version']}) {verdict}: {describe(result)['got']}")


@regress_app.command("list")
def regress_list(config: ConfigOption = None) -> None:
    """Every case: its date, story, expectation, who froze it and why."""
    from ops.regress import cases, describe_case

    _, store = open_store(config)
    found = cases(store)
    if not found:
        out.print("no regression cases yet; 'brief regress add --date D --story S --expect E' adds one")
        return
    out.print(case_table(f"{len(found)} regression case(s)", [describe_case(e) for e in found]))


def case_table(title: str, rows: list[dict[str, str]]) -> Table:
    """Regression cases (``ops.regress.describe``'s rows) as a table that reads in 80 columns: a
    case's id and date, its story and expectation, one above the other and never wrapped; what a
    policy got and the note wrapped between words in what is left."""
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, show_lines=True)
    table.add_column("case / date", no_wrap=True)
    table.add_column("story / expected", no_wrap=True)
    if rows and "got" in rows[0]:
        table.add_column("got", overflow="fold", min_width=10)
    table.add_column("by: note", overflow="fold", min_width=12)
    for row in rows:
        cells = [f"{row['case']}\n{row['date']}", f"{row['story']}\n{row['expected']}"]
        cells += [row["got"]] if "got" in row else []
        table.add_row(*cells, f"{row['by']}: {row['note']}" if row["note"] else row["by"])
    return table


def regress_evaluate(policy: str | None, config: str | None) -> None:
    """``brief evaluate --regression``: every case under the policy in force, its failures listed; with
    --policy, the candidate too, and the cases it breaks that the policy in force passes (what
    ``brief policy adopt`` refuses) listed by name. Exit 1 when the policy evaluated fails a case
    (with --policy: when the candidate breaks one)."""
    from ops.evaluate import candidate_settings
    from ops.policy import governing
    from ops.regress import Gate, cases, describe, replay

    settings, store = open_store(config)
    found = cases(store)
    if not found:
        out.print("no regression cases yet; 'brief regress add' freezes one")
        return
    current = governing(settings, store).settings
    with err.status(f"replaying {len(found)} case(s) under the policy in force …"):
        now = replay(current, store, found)
    bad = [describe(r) for r in now if not r.passed]
    out.print(
        f"the policy in force ({current.policy_version()}): {len(now) - len(bad)} of {len(now)} case(s) pass"
    )
    if bad:
        out.print(case_table("failures under the policy in force", bad))
    if policy is None:
        if bad:
            raise SystemExit(1)
        return
    candidate = candidate_settings(policy, settings)
    with err.status(f"replaying {len(found)} case(s) under the candidate …"):
        check = Gate(now, replay(candidate, store, found))
    passed = sum(r.passed for r in check.candidate)
    also = sum(not a.passed and not c.passed for a, c in zip(check.current, check.candidate, strict=True))
    out.print(
        f"the candidate policy ({candidate.policy_version()}): {passed} of {len(found)} case(s) pass; "
        f"it breaks {len(check.broken)} the policy in force passes"
        + (f" (and fails {also} the policy in force fails too)" if also else "")
    )
    if check.broken:
        out.print(case_table("broken by the candidate", [describe(r) for r in check.broken]))
        raise SystemExit(1)


def regress_corrections(settings, store, day: date, run_id: str, by: str) -> None:
    """``--as-case``: the corrections a command just recorded (its run id), as regression cases."""
    from ops.regress import CORRECTIONS, cases_of_corrections

    made = [e for e in store.read([day], event_types=list(CORRECTIONS)) if e.run_id == run_id]
    refused: list[str] = []
    found = cases_of_corrections(settings, store, made, by, refused)
    for why in refused:
        err.print(f"not kept as a regression case: {why}", soft_wrap=True)
    for case in found:
        p = case.payload
        expected = f"{p['expect']}:{p['other_story_id']}" if p["other_story_id"] else p["expect"]
        out.print(f"kept as regression case {p['case_id']}: {day} {p['story_id']} expected {expected}")
    if not found and not refused:
        out.print("no mark or same-story answer to keep as a regression case")


def regress_gate(settings, store, file: str, force: bool) -> dict | None:
    """Before an adoption: the regression set under the policy in force and the candidate. A candidate
    that breaks a case is refused (one line, exit 2) unless ``force``; the check for the adoption."""
    from ops.evaluate import candidate_settings
    from ops.policy import argument, governing
    from ops.regress import gate, refusal

    candidate = candidate_settings(file, settings, argument(file))
    with err.status("replaying the regression set under the policy in force and the candidate …"):
        check = gate(governing(settings, store).settings, candidate, store)
    if check is None:
        return None
    if check.broken and not force:
        raise InputError(refusal(check))
    return check.record(forced=bool(check.broken))


# -- data you can take back: purge and reparse (ops/purge.py, ops/reparse.py) ------------------


@app.command()
def purge(
    reason: Annotated[str, typer.Option("--reason", help="Why, in a few words (recorded in the tombstone).")],
    by: Annotated[str, typer.Option("--by", help="Who asked for or made the takedown (recorded).")],
    article: Annotated[
        str | None, typer.Option("--article", help="The article id (art-…) to take out, with its copies.")
    ] = None,
    source: Annotated[
        str | None, typer.Option("--source", help="Take out every article collected from this source.")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Take an article (or a source's articles) out of the store for good: a tombstone, the day
    partitions and raw bodies rewritten without it, its briefs re-rendered as new versions."""
    from ops.purge import purge as take_out

    settings, store = open_store(config)
    result = take_out(
        settings,
        store,
        article=article,
        source=source,
        reason=reason,
        by=by,
        progress=lambda line: err.print(line),
    )
    out.print(
        f"Purged {result.target}: {len(result.articles)} article(s); {len(result.days)} day(s) rewritten "
        f"({result.dropped} event(s) removed), {result.bodies} raw bod(ies), "
        f"{result.vectors} cached vector(s), {result.files} other file(s); {result.seconds:.1f} s"
    )
    for day, versions, new in result.briefs:
        done = f"v{', v'.join(map(str, versions))} re-rendered" if versions else "no earlier version cited it"
        out.print(f"  brief {day}: {done}" + (f"; now v{new}" if new else ""))
    if source and any(s.name == source for s in settings.sources):
        err.print(
            f"note: {source} is still in [[sources]]; its new articles will be collected (remove it to stop)"
        )


@app.command()
def reparse(
    day: Annotated[str, typer.Option("--date", help="The day whose kept feed bodies to parse again.")],
    config: ConfigOption = None,
) -> None:
    """Parse again, with today's parsers, the feed bodies fetched on a day; append what changed."""
    from ops.reparse import reparse as parse_again

    wanted = parse_day(day)
    assert wanted is not None
    settings, store = open_store(config)
    result = parse_again(settings, store, wanted)
    for why in result.missing:
        err.print(f"  skipped {why}")
    out.print(
        f"{wanted}: {result.fetches} feed bod(ies) parsed again, {result.articles} article(s); "
        f"{result.written} new event(s), {result.skipped} already in the log"
        + (f"; 'brief run --date {wanted}' briefs the day from them" if result.written else "")
    )


def _command_of(exc: Exception) -> str:
    """The command a usage error is about, as the person typed it (``brief policy rollback``)."""
    names, ctx = [], getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name)
        ctx = ctx.parent
    return " ".join(["brief", *reversed(names)])


def main() -> None:
    """Console-script entry point: one clear line, and exit code 2 on a user mistake (1 when the
    day's brief was withheld)."""
    from tasks.steps.publish import BriefWithheld

    try:
        app(standalone_mode=False)
    except BriefError as exc:
        err.print(f"error: {exc}", soft_wrap=True)
        # a withheld brief is the run's outcome (exit 1, as a failed date), not a mistake in the input
        raise SystemExit(1 if isinstance(getattr(exc, "cause", exc), BriefWithheld) else 2) from None
    except typer.Abort:
        err.print("aborted")
        raise SystemExit(130) from None
    except Exception as exc:  # usage errors of the bundled click: unknown option, missing value
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            err.print(f"error: {exc.format_message()} (see '{_command_of(exc)} --help')", soft_wrap=True)
            raise SystemExit(exc.exit_code) from None
        raise


if __name__ == "__main__":
    main()
