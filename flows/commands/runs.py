"""Running days at the command line: ``brief run``, ``backfill``, ``collect``, ``serve``, ``check``,
``alerts`` and ``reparse``.

Imported inside the commands, to keep ``brief --help`` and a mistyped option fast: Prefect (by
the flows, after ``prefect_defaults``), the services of ``ops/`` (they load polars and pyarrow)
and Rich's Markdown (markdown-it, for ``run --show`` only).
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress

from flows.commands.options import (
    CheckedConfigOption,
    ConfigOption,
    Format,
    checked_config,
    open_resources,
    open_store,
    parse_time,
    prefect_defaults,
    remember_config,
    with_config,
)
from flows.commands.stopped import ended_overdue, stop_error
from flows.views.console import above, err, out, saying, screen_status
from flows.views.runs import (
    alerts_jsonl,
    alerts_table,
    show_backfill,
    show_checks,
    show_collected,
    show_reparsed,
    show_run,
)
from flows.views.text import counted
from storage.errors import BriefError
from tasks.dates import given_day, parse_date

if TYPE_CHECKING:
    from ops.runs import RunPlan, RunResult
    from tasks.settings import Settings


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
    began = time.perf_counter()
    wanted = parse_date(day)
    settings = checked_config(config)  # a bad config is said before polars, Prefect and the models load
    from ops.runs import plan_run
    from storage.events import utcnow

    since = utcnow()
    plan = plan_run(settings, wanted)
    try:
        result, shown = run_day(plan, config, day, verbose)
    except KeyboardInterrupt:  # pressed before the run could take it (importing, starting Prefect)
        from flows.interrupt import STOP

        raise stop_error(plan, config, STOP, since) from None
    show_run(out, err, result, shown, plan.settings.config_option, time.perf_counter() - began)
    if show:
        from rich.markdown import Markdown

        from ops.workspace import brief_text

        out.print(Markdown(brief_text(plan.store, result.files["md"])))


def run_day(plan: RunPlan, config: str | None, day: str | None, verbose: bool) -> tuple[RunResult, str]:
    """The daily brief of the plan's day, its step lines above a spinner: its result and its log."""
    from storage.events import utcnow

    since = utcnow()
    prefect_defaults()
    from flows.interrupt import cancellable, interruptible, lose_server
    from flows.keptserver import prefect_api

    running = "starting Prefect and running the daily brief …"
    with (
        interruptible() as stop,
        screen_status(running) as status,
        prefect_api(lambda line: err.print(line, soft_wrap=True), lost=lose_server) as notes,
    ):
        from prefect.exceptions import TerminationSignal

        from flows.daily import daily_brief
        from flows.lifetime import without_heartbeats
        from flows.runlog import run_log, run_output

        above_spinner = above(status, soft_wrap=True)

        def step(line: str) -> None:
            stop.note_step(line)
            above_spinner(line)

        log = run_log(plan.settings, plan.store, plan.day)
        stop.overdue = lambda: ended_overdue(
            plan, stop, lambda: str(stop_error(plan, config, stop, since, log.shown))
        )
        try:
            with (
                run_output(log, step, verbose=verbose, loading=saying(status, running)),
                cancellable(),
                without_heartbeats(),
            ):
                for note in notes:
                    print(note, file=sys.stderr)  # to the run's log (and the screen with --verbose)
                result = daily_brief(day, config, settings=plan.settings)
        except (KeyboardInterrupt, TerminationSignal):
            raise stop_error(plan, config, stop, since, log.shown) from None
        except Exception as exc:
            # a step that failed as the stop unwound it, or Prefect's call to a server that stopped
            # under the run: the stop's outcome
            if stop.how is not None or stop.server_gone:
                raise stop_error(plan, config, stop, since, log.shown) from None
            if isinstance(exc, BriefError):
                err.print(f"the run's log: {log.shown}")
            raise
        finally:
            stop.overdue = None
    return result, log.shown


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
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help="Also show Prefect's, the gates' and the models' output (else in its log).",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Briefs for a range of past dates: archives collected, live feeds replayed; idempotent.

    Prints a table of the dates when done; everything the runs print goes to one log file (under
    the store root, in logs/START/), and to the screen as well with --verbose."""
    settings = checked_config(config)  # a bad config is said before polars, Prefect and the models load
    from ops.backfill import BackfillRequest, run_backfill
    from ops.runs import plan_backfill

    plan = plan_backfill(settings, start, end)
    request = BackfillRequest(start, end, config, concurrency, fan_out=fan_out, deliver=deliver)
    prefect_defaults()
    from flows.keptserver import prefect_api

    backfilling = f"backfilling {counted(len(plan.days), 'date')}, {concurrency} at a time …"
    with (
        screen_status(backfilling) as status,
        prefect_api(lambda line: err.print(line, soft_wrap=True)) as notes,
    ):
        from flows.backfill import PROGRESS_LINE
        from flows.backfill import backfill as backfill_flow
        from flows.runlog import run_log, run_output

        log = run_log(plan.settings, plan.store, plan.days[0], "backfill")
        try:
            # a line per date as it ends (its steps' lines would interleave: they are in the log)
            loading = saying(status, backfilling)
            with run_output(log, above(status), verbose=verbose, marker=PROGRESS_LINE, loading=loading):
                for note in notes:
                    print(note, file=sys.stderr)  # to the backfill's log (and the screen with --verbose)
                result = run_backfill(plan, request, backfill_flow)
        except BriefError:
            err.print(f"the backfill's log: {log.shown}")
            raise
    show_backfill(out, start, end, result.outcomes)
    out.print(f"the backfill's log: {log.shown}", soft_wrap=True)  # a path is copied whole
    failed = [str(day) for day in result.failed]
    withheld = [str(day) for day in result.withheld]
    if failed:
        err.print(
            f"error: {counted(len(failed), 'date')} failed: {', '.join(failed)}; rerun them with "
            f"brief run --date D{plan.settings.config_option}",
            soft_wrap=True,  # the command is copied whole
        )
    if withheld:
        err.print(
            f"{counted(len(withheld), 'date')} withheld, readers "
            f"got nothing: {', '.join(withheld)} (why: above)"
        )
    if failed or withheld:
        raise SystemExit(1)


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
    stop: Annotated[
        bool,
        typer.Option(
            "--stop",
            help="Only stop the local Prefect server that brief run and backfill keep between commands.",
        ),
    ] = False,
    config: ConfigOption = None,
) -> None:
    """Local Prefect server (unless PREFECT_API_URL names one), scheduled deployments and the editor's
    desk; Ctrl-C stops."""
    if stop:
        from flows.keptserver import stop_kept

        stopped = stop_kept()
        out.print(
            f"stopped the local Prefect server at {stopped.url} (pid {stopped.pid})"
            if stopped
            else "no local Prefect server was kept: nothing to stop"
        )
        return
    from flows.serve import serve as serve_stack
    from ops.runs import plan_serve

    plan = plan_serve(
        config, checked_config(config)
    )  # a bad config or root fails here, before the server starts
    desk_at = (desk_host, desk_port) if desk else None
    serve_stack(plan.config, plan.prefect_home, lambda line: out.print(line), port, desk_at, plan.settings)


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
    from ops.alerts import recent

    moment = parse_time(now, "--now")
    settings, resources = open_resources(config, must_exist=not check)
    failed = []
    if check:
        prefect_defaults()
        from flows.alerting import check as check_now

        with err.status("checking runs and alerts …"):
            outcome = check_now(settings, resources, now=moment, say=lambda line: err.print(line))
        failed = outcome.failed
        if not settings.alerts:
            err.print("no [[alerts]] in the config: nothing is sent (see 'Alerts' in the guide)")
        out.print(
            f"checked: {counted(len(outcome.crashed), 'crashed run')} "
            f"found, {counted(len(outcome.sent), 'alert')} sent, "
            f"{len(failed)} failed"
        )
    rows = recent(settings, resources, days, moment)
    if fmt is Format.jsonl:
        sys.stdout.writelines(alerts_jsonl(rows))
    elif rows:
        out.print(alerts_table(days, rows))
    else:
        out.print(f"no alert in the last {counted(days, 'day')}")
    if failed:
        err.print(
            f"error: {counted(len(failed), 'alert')} could not be sent; see above; the next check tries again"
        )
        raise SystemExit(1)


def collect(
    day: Annotated[
        str | None,
        typer.Option("--date", help="Brief date to collect (default: today in the configured timezone)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Collect every configured source for a date into the event log (the first step of a brief)."""
    from ops.runs import collect_sources, plan_collect

    plan = plan_collect(checked_config(config), parse_date(day))
    written = skipped = 0
    with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:
        count = len(plan.settings.sources)
        bar = progress.add_task(f"collecting {counted(count, 'source')}", total=count)
        for got in collect_sources(plan):
            written, skipped = written + got.written, skipped + got.skipped
            show_collected(out, got)
            progress.advance(bar)
    root = plan.settings.storage.root
    out.print(f"{plan.day}: {counted(written, 'new event')}, {skipped} already in the log; store at {root}")


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
    config: CheckedConfigOption = None,
) -> None:
    """Pre-flight: the config, the store, every source fetched once, every channel; exit 1 on a failure."""
    from ops.preflight import check as preflight
    from storage.errors import ConfigError
    from tasks.settings import load_settings

    given = parse_date(day)
    try:
        loaded: Settings | ConfigError = load_settings(config)
    except ConfigError as exc:  # said in the check's own table, as its first row
        loaded = exc
    report = preflight(loaded, given, send_test=send_test, stage=err.status)
    remember_config(config)
    checks = [replace(c, detail=with_config(c.detail), fix=with_config(c.fix)) for c in report.checks]
    show_checks(out, err, "brief check" + (f" of {given}" if given else ""), checks)
    if report.settings is None:
        raise SystemExit(2)  # a mistake in the config, as every command says it
    failed, warned = report.failed, report.warned
    if failed:
        out.print(f"{len(failed)} of {len(checks)} checks failed")
        raise SystemExit(1)
    out.print(f"all {len(checks)} checks passed" + (f" ({warned} with a warning)" if warned else ""))


def reparse(
    day: Annotated[str, typer.Option("--date", help="The day whose kept feed bodies to parse again.")],
    config: ConfigOption = None,
) -> None:
    """Parse again, with today's parsers, the feed bodies fetched on a day; append what changed."""
    from ops.reparse import reparse as parse_again

    wanted = given_day(day)
    settings, store = open_store(config)
    show_reparsed(out, err, parse_again(settings, store, wanted), settings.config_option)
