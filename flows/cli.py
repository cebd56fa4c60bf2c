"""The ``brief`` command line.

Every command finds the store through ``--config PATH`` (or ``BRIEF_CONFIG``, or
``./brief.toml``). A mistake in what you typed prints one line on stderr that says what is
wrong and how to fix it, and exits with code 2; nothing is written.

This module is the root: the app, its options and its error handling, and the editor's
commands (review, deliver, approve, correct, retract, desk). The other commands live in
``flows/commands/`` (a module per group) and are registered here in the order ``--help`` lists
them; what they print is laid out in ``flows/views/``. Services and flows are imported inside
the commands: they load polars, pyarrow, Prefect and the models, which ``brief --help`` does
not need.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from flows.commands import log, policy, runs
from flows.commands.errors import command_of, error_line, refused_path
from flows.commands.options import ByOption, ConfigOption, forget_checked_config, parse_time, with_config
from flows.views.acts import show_delivery
from flows.views.console import err, out, styled
from flows.views.text import counted
from storage.errors import BriefError, InputError

if TYPE_CHECKING:
    from ops.acts import Outcome
from tasks.dates import parse_date

app = typer.Typer(
    name="brief",
    help="dailybrief: an event-sourced daily brief of AI news.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "[[delivery]]" stays as written
)


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


def register(*commands: Callable[..., None]) -> None:
    """Commands of the app, each under its function's name, listed by --help in this order."""
    for command in commands:
        app.command()(command)


register(log.events, log.replay, log.trace, runs.run, runs.backfill, log.stats, log.history, runs.serve)


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
    from flows.views.review import print_cases, print_links, print_settled, show_answered, show_still_open
    from ops import acts
    from ops.workspace import refuse_missing, resources_of
    from tasks.settings import load_settings

    settings = load_settings(config)
    resources = resources_of(settings, must_exist=False)
    wanted = acts.day_of(settings, resources.clock, parse_date(day))  # a refused date before the store
    refuse_missing(settings, resources.store)  # a missing store is one clear line
    marks = parse_marks(mark or [])
    questions = acts.open_questions(settings, resources, wanted)
    given: list[acts.Answer] = []
    if answers:
        given, from_file = answers_from_file(questions, answers, wanted, settings.config_option)
        marks = {**from_file, **marks}
    elif not marks:
        if questions.height == 0:
            acts.require_brief(resources.store, wanted)  # no brief: nothing to review (as correct says)
            out.print(f"No open questions for {wanted}.")
            return
        given = ask(questions, wanted, out, [c.name for c in settings.policy.categories])
    if not given and not marks:
        out.print("No answers given; the brief is unchanged.")
        return
    # answering a held brief's questions approves it; delivering only where there are channels
    sends = " and delivering" if settings.delivery.channels else ""
    with err.status(f"re-rendering{sends} the brief …"):
        act = acts.Act(wanted, acts.approver(), as_case=as_case)
        outcome = acts.answer(settings, resources, act, given, marks)
    published = outcome.published
    assert published is not None  # an act that recorded something publishes
    state = f"new version v{published.version}" if published.changed else f"unchanged (v{published.version})"
    show_answered(out, [(len(given), "answer"), (len(marks), "mark")], wanted, state, published.files["md"])
    print_links(out, outcome, resources.store)  # the stories an answer joined (or parted), by headline
    if marks:
        print_settled(out, outcome, {a.question_id for a in given})
    if marks or answers:  # not asked here: say what is left for a plain brief review
        still = acts.open_questions(settings, resources, wanted).height
        if still:
            asks = f"brief review --date {wanted}{settings.config_option}"
            show_still_open(out, still, asks)
    if outcome.delivery is not None:
        show_delivery(out, outcome.delivery)
    if as_case:
        print_cases(out, err, outcome)


@app.command()
def deliver(
    day: Annotated[
        str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
    ] = None,
    channel: Annotated[str | None, typer.Option("--channel", help="Only this [[delivery]] channel.")] = None,
    due: Annotated[
        bool,
        typer.Option(
            "--due",
            help="Release every held brief whose hold_until has passed, and every update whose"
            " [delivery] update_after window has closed.",
        ),
    ] = False,
    now: Annotated[
        str | None,
        typer.Option("--now", help="With --due: judge the deadlines at this UTC time (default: now)."),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Send the day's brief to the channels that have not had it (after a failure, or by hand); an
    update whose [delivery] update_after window is open waits for it (--due sends it once it closed)."""
    from ops.acts import day_of, release_due, require_channels
    from ops.acts import deliver as resend
    from ops.workspace import refuse_missing, resources_of
    from tasks.settings import load_settings

    moment = parse_time(now, "--now")
    if moment is not None and not due:
        raise InputError("--now only applies with --due; add --due or drop --now")
    given = parse_date(day)
    settings = load_settings(config)
    resources = resources_of(settings, must_exist=False)
    if given is not None:  # before the store is checked: a refused date is one line
        day_of(settings, resources.clock, given)
    refuse_missing(settings, resources.store)
    require_channels(settings)
    if due:
        if day or channel:
            raise InputError("--due releases every held brief past its deadline; drop --date and --channel")
        outcomes = release_due(settings, resources, moment, lambda line: out.print(line, markup=False))
        if not outcomes:
            out.print("No held brief is past its deadline, and no update is due.")
        failed = [s for o in outcomes for s in o.failed]
    else:
        wanted = day_of(settings, resources.clock, given)
        with err.status(f"delivering the brief of {wanted} …"):
            outcome = resend(settings, resources, wanted, channel)
        out.print(styled((f"Brief for {wanted}", "bold"), f" (v{outcome.version}):"))
        show_delivery(out, outcome)
        if outcome.waiting:
            out.print(f"  {outcome.waiting}", markup=False)
        failed = outcome.failed
    if failed:
        err.print(
            f"error: {counted(len(failed), 'channel')} failed; see above, fix the channel and run this again"
        )
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
    from flows.commands.options import open_resources
    from ops import acts

    settings, resources = open_resources(config)
    wanted = acts.day_of(settings, resources.clock, parse_date(day), future=True)
    with err.status(f"approving the brief of {wanted} …"):
        outcome = acts.approve(settings, resources, acts.Act(wanted, by or acts.approver()))
    delivery = outcome.delivery
    assert delivery is not None
    out.print(styled((f"Brief for {wanted}", "bold"), f" (v{delivery.version}) approved:"))
    show_delivery(out, delivery)
    if delivery.failed:
        resend = f"brief deliver --date {wanted}{settings.config_option}"
        err.print(
            f"error: {counted(len(delivery.failed), 'channel')} failed; '{resend}' resends", soft_wrap=True
        )
        raise SystemExit(1)


def _editor_act(config: str | None, day: str | None, story: str, act: Callable[..., Outcome]) -> None:
    """A person's act on an item of the day's brief (``act(settings, resources, day, story_id)`` calls
    its ``ops.acts`` function; ``story``: the id or its first characters): recorded, the new version
    published and what the channels are owed sent; then said."""
    from flows.commands.options import open_resources
    from ops.acts import act_story, day_of, require_brief

    settings, resources = open_resources(config)
    wanted = day_of(settings, resources.clock, parse_date(day))
    story_id = act_story(resources.store, wanted, story, dated=day is not None)
    require_brief(resources.store, wanted)  # after: a story of another day's brief is named first
    with err.status("re-rendering the brief …"):
        outcome = act(settings, resources, wanted, story_id)
    published = outcome.published
    assert published is not None  # an act that recorded something publishes
    state = f"new version v{published.version}" if published.changed else f"unchanged (v{published.version})"
    out.print(f"Recorded. Brief for {wanted}: {state}: {published.files['md']}")
    if outcome.delivery is not None:
        show_delivery(out, outcome.delivery)


StoryArgument = Annotated[
    str,
    typer.Argument(help="The item's story id (story_id in the brief's JSON), or its first characters."),
]
ActDay = Annotated[
    str | None, typer.Option("--date", help="Brief date (default: today in the configured timezone).")
]


@app.command()
def correct(
    story: StoryArgument,
    title: Annotated[str | None, typer.Option("--title", help="The headline readers should see.")] = None,
    summary: Annotated[str | None, typer.Option("--summary", help="The summary readers should see.")] = None,
    note: Annotated[str, typer.Option("--note", help="What was wrong, shown in the correction line.")] = "",
    day: ActDay = None,
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
        story,
        lambda settings, resources, wanted, story_id: acts.correct(
            settings, resources, acts.Act(wanted, who), story_id, fields, note
        ),
    )


@app.command()
def retract(
    story: StoryArgument,
    note: Annotated[
        str, typer.Option("--note", help="Why, shown where it was (--undo: why it is back).")
    ] = "",
    undo: Annotated[
        bool, typer.Option("--undo", help="Undo its retraction: a new version holds it again.")
    ] = False,
    day: ActDay = None,
    by: ByOption = None,
    config: ConfigOption = None,
) -> None:
    """Retract an item: a new version leaves it out and shows the note in its place (--undo: back)."""
    from ops import acts

    who = by or acts.approver()
    act = acts.restore if undo else acts.retract
    _editor_act(
        config,
        day,
        story,
        lambda settings, resources, wanted, story_id: act(
            settings, resources, acts.Act(wanted, who), story_id, note
        ),
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
    from flows.commands.options import open_resources
    from flows.desk.app import bind, create_app, listen

    settings, resources = open_resources(config)  # built once: every page and act of the desk uses them
    application = create_app(
        settings, host, resources=resources
    )  # refuses a non-loopback host without [desk] people
    sock = bind(host, port)  # a busy port is refused before the desk is announced
    shown = f"[{host}]" if ":" in host else host
    out.print(f"The desk of {settings.storage.root} at http://{shown}:{port}/ (Ctrl-C stops)")
    listen(application, sock, settings)


register(runs.alerts, runs.collect, runs.check, log.compact)
app.add_typer(log.export_app, name="export")
register(policy.evaluate, policy.learn)
app.add_typer(policy.policy_app, name="policy")
app.add_typer(policy.regress_app, name="regress")
register(policy.purge, runs.reparse)


def main() -> None:
    """Console-script entry point: one clear line, and exit code 2 on a user mistake (1 when the
    day's brief was withheld)."""
    from flows.interrupt import Interrupted, stop_now
    from flows.lifetime import pace_collector

    pace_collector()
    try:
        code = app(standalone_mode=False)
        if code == 130:  # typer turns a Ctrl-C it meets into this code, returned, not raised
            err.print("interrupted: nothing was started, or what was is stopped; run the command again")
        if isinstance(code, int) and code:
            raise SystemExit(code)
    except Interrupted as exc:
        err.print(str(exc), soft_wrap=True)
        stop_now(exc.code)
    except KeyboardInterrupt:  # before a run began, or between its steps' commands
        err.print("interrupted")
        raise SystemExit(130) from None
    except BriefError as exc:
        said, code = error_line(exc)
        err.print(with_config(said), soft_wrap=True)
        raise SystemExit(code) from None
    except typer.Abort:
        err.print("aborted")
        raise SystemExit(130) from None
    except OSError as exc:
        if not exc.filename:
            raise
        err.print(refused_path(exc), soft_wrap=True)
        raise SystemExit(2) from None
    except Exception as exc:  # usage errors of the bundled click: unknown option, missing value
        if type(exc).__name__ == "NoArgsIsHelpError":  # 'brief' or a group alone: its help, no mistake
            err.print(exc.format_message(), soft_wrap=True)  # type: ignore[attr-defined]
            raise SystemExit(2) from None
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            err.print(f"error: {exc.format_message()} (see '{command_of(exc)} --help')", soft_wrap=True)
            raise SystemExit(exc.exit_code) from None
        raise
    finally:
        forget_checked_config()


if __name__ == "__main__":
    main()
