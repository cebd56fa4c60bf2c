"""The improvement loop at the command line: ``brief evaluate``, ``learn``, ``policy …``,
``regress …``, and ``purge`` (data taken back for good).

Each command calls a service of ``ops/improve.py`` (or ``ops/policy.py``, ``ops/purge.py``),
imported inside it: they load polars, pyarrow and the embedding models, which ``brief --help``
does not need.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from flows.commands.options import (
    ByOption,
    ConfigOption,
    open_resources,
    open_store,
    parse_time,
    person,
    with_config,
    writable_out,
)
from flows.views.console import err, out, stage
from flows.views.policy import (
    case_table,
    change_lines,
    history_table,
    show_adoption,
    show_evaluation,
    show_frozen,
    show_in_force,
    show_learnt,
    show_regression,
)
from flows.views.runs import show_purged
from flows.views.text import counted
from storage.errors import InputError
from tasks.dates import given_day, parse_date

if TYPE_CHECKING:
    pass


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
    from ops.evaluate import table
    from ops.improve import evaluate as evaluate_candidate

    if regression and start is None and end is None:
        regress_evaluate(policy, config)
        return
    if policy is None:
        raise InputError("give --policy FILE (or --regression to replay the regression set)")
    settings, resources = open_resources(config)
    done = evaluate_candidate(settings, resources, policy, start, end, labels, stage=stage)
    show_evaluation(out, done.days, table(done.figures), done.verdict["line"])
    if regression:
        regress_evaluate(policy, config)


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
    from ops.improve import learn as learn_model
    from ops.learn import card_text

    out_file = Path(out_path)
    if out_file.suffix not in (".toml", ".json"):
        raise InputError(f"--out {out_path!r}: give a .toml (candidate policy) or a .json (model) file name")
    first, last = parse_date(start, "--start"), parse_date(end, "--end")
    writable_out(out_file)  # before the minutes of fitting, not after them
    settings, resources = open_resources(config)

    def progress(day: date, n: int) -> None:
        err.print(f"  {day}: {counted(n, 'example')} so far")

    learnt = learn_model(settings, resources, out_file, first, last, labels, name, progress, stage=stage)
    show_learnt(out, learnt, card_text(learnt.fitted.model), out_path, settings.config_option)


policy_app = typer.Typer(
    help="The adopted policy: adopt a candidate, show it, its history, what changed, roll back.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
ReasonOption = Annotated[str, typer.Option("--reason", help="Why, in a few words (recorded).")]


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
    from ops.improve import adopt_candidate
    from storage.payloads import PolicyAdoptedV2
    from storage.typed import payload_of

    who = person(by)
    settings, resources = open_resources(config)
    adoption = adopt_candidate(settings, resources, file, who, reason, force, stage=err.status)
    show_adoption(out, adoption)
    adopted = payload_of(adoption.event, PolicyAdoptedV2)
    verdict = adopted.verdict
    if verdict in ("don't", "not enough evidence"):
        err.print(
            f"warning: adopted although its evaluation ({adopted.evaluation}) "
            f"said {verdict!r}; '{rollback_hint(settings.config_option)}' undoes it",
            markup=False,
            highlight=False,
        )
    if settings.policy_file:
        err.print(
            f"warning: the config pins policy_file = {settings.policy_file}; "
            "runs use that file until it is removed"
        )


def rollback_hint(config_option: str) -> str:
    """The rollback command as a hint prints it, ready to run: its required --reason given."""
    return f'brief policy rollback --reason "the adopted policy did worse"{config_option}'


@policy_app.command("rollback")
def policy_rollback(reason: ReasonOption, by: ByOption = None, config: ConfigOption = None) -> None:
    """Adopt again the policy in force before the current one (one more policy.adopted)."""
    from ops.policy import rollback
    from ops.workspace import today

    who = person(by)
    settings, store = open_store(config)
    show_adoption(out, rollback(settings, store, who, reason, today(settings)))


@policy_app.command("show")
def policy_show(
    as_of: Annotated[
        str | None, typer.Option("--as-of", help="The policy in force at this UTC time.")
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every setting and file, not only what changed.")
    ] = False,
    config: ConfigOption = None,
) -> None:
    """The policy in force (now, or at --as-of): who adopted it, why, what it changed (--all: every
    setting and file)."""
    from ops.improve import policy_in_force

    moment = parse_time(as_of)
    settings, store = open_store(config)
    show_in_force(out, policy_in_force(settings, store, moment), moment, every)


@policy_app.command("history")
def policy_history(config: ConfigOption = None) -> None:
    """Every adoption, oldest first: when, which version, who, why, and on which evaluation."""
    from ops.policy import history

    _, store = open_store(config)
    events = history(store)
    if not events:
        out.print(with_config("no policy adopted yet; 'brief policy adopt FILE --reason …' adopts one"))
        return
    out.print(history_table(events))


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
    from ops.policy import changes, held

    _, store = open_store(config)
    first, second = held(store, a), held(store, b)
    out.print(f"{first.version} -> {second.version}:")
    for line in change_lines(changes(first.tables, second.tables)):
        out.print(line)


# --- the regression set (brief regress …, evaluate --regression, the adoption gate) ---------

regress_app = typer.Typer(
    help="The regression set: decisions frozen with their facts, which every adopted policy must keep.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


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
    from ops.improve import freeze_case
    from ops.regress import parse_expectation

    wanted = given_day(day)
    expectation = parse_expectation(expect)
    who = person(by)
    settings, resources = open_resources(config)
    show_frozen(out, wanted, freeze_case(settings, resources, wanted, story, expectation, who, note))


@regress_app.command("list")
def regress_list(config: ConfigOption = None) -> None:
    """Every case: its date, story, expectation, who froze it and why."""
    from ops.regress import cases, describe_case

    _, store = open_store(config)
    found = cases(store)
    if not found:
        out.print(
            with_config("no regression cases yet; 'brief regress add --date D --story S --expect E' adds one")
        )
        return
    out.print(case_table(f"{counted(len(found), 'regression case')}", [describe_case(e) for e in found]))


def regress_evaluate(policy: str | None, config: str | None) -> None:
    """``brief evaluate --regression``: every case under the policy in force, its failures listed; with
    --policy, the candidate too, and the cases it breaks that the policy in force passes (what
    ``brief policy adopt`` refuses) listed by name. Exit 1 when the policy evaluated fails a case
    (with --policy: when the candidate fails one, whether or not the policy in force passes it)."""
    from ops.improve import replay_regression

    settings, resources = open_resources(config)
    done = replay_regression(settings, resources, policy, stage=err.status)
    if done is None:
        out.print(with_config("no regression cases yet; 'brief regress add' freezes one"))
        return
    show_regression(out, done)
    if done.evaluated_failed:
        raise SystemExit(1)


# -- data you can take back: purge (ops/purge.py) ---------------------------------------------


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

    settings, resources = open_resources(config)
    result = take_out(
        settings,
        resources,
        article=article,
        source=source,
        reason=reason,
        by=by,
        progress=lambda line: err.print(line),
    )
    show_purged(out, result)
    if source and any(s.name == source for s in settings.sources):
        err.print(
            f"note: {source} is still in [[sources]]; its new articles will be collected (remove it to stop)"
        )
