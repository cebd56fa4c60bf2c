"""What the improvement loop's commands print: ``brief evaluate``, ``learn``, ``policy …`` and
``regress …``, each within 80 columns (ids and dates whole, notes wrapped at words)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console
from rich.table import Table

from flows.views.text import WIDTH, counted, wrap

if TYPE_CHECKING:  # at run time they would load pyarrow and polars (and the payloads: each function
    # that reads one imports them) before a command needs them
    import polars as pl

    from ops.improve import FrozenCase, InForce, Learnt, RegressionRun
    from ops.policy import Adoption
    from storage.events import Event
    from storage.payloads import PolicyTables, RegressionCaseAdded


def frame_table(title: str, frame: pl.DataFrame) -> Table:
    """A frame of strings as a table, its columns as they are."""
    table = Table(title=title)
    for column in frame.columns:
        table.add_column(column)
    for row in frame.iter_rows():
        table.add_row(*row)
    return table


def show_evaluation(out: Console, days: Sequence[date], frame: pl.DataFrame, verdict: str) -> None:
    """The figures measured on the days, a row each; the names of those measured for no policy,
    once, below; then the verdict."""
    import polars as pl

    from ops.evaluate import NOT_MEASURED  # loaded already: the command evaluated with it

    policies = [c for c in frame.columns if c != "metric"]
    unmeasured = (
        pl.all_horizontal([pl.col(c) == NOT_MEASURED for c in policies]) if policies else pl.lit(False)
    )
    measured, missing = frame.filter(~unmeasured), frame.filter(unmeasured)["metric"].to_list()
    title = f"policy evaluation {days[0]} .. {days[-1]}"
    out.print(frame_table(title, measured) if measured.height else f"{title}: nothing could be measured")
    if missing:
        said = f"not measured on these days (no labels or cases for them): {', '.join(missing)}"
        out.print("\n".join(wrap(said, out.width, hanging="  ")), soft_wrap=True)
    out.print(verdict)
    out.print("recorded as a policy.evaluated event")


def card_lines(card: str, width: int = WIDTH) -> list[str]:
    """A model's card in lines of at most ``width`` columns: a long line (its weights, its days)
    wrapped at its words, its next lines indented two more than it, so that each line of the card
    still reads as one."""
    lines: list[str] = []
    for line in card.splitlines():
        lead = line[: len(line) - len(line.lstrip())]
        lines += wrap(line.strip(), width, indent=lead, hanging=lead + "  ") if line.strip() else [""]
    return lines


def show_learnt(out: Console, learnt: Learnt, card: str, out_path: str, config: str = "") -> None:
    """The model's card, then what was written and what to do with it (a command to copy, whole,
    with ``config``: `` --config PATH`` unless the config is the default)."""
    for line in card_lines(card, out.width):
        out.print(line, markup=False, highlight=False, soft_wrap=True)
    model_path = learnt.model_path
    if learnt.stories is not None and learnt.stories_path is not None:
        fit = learnt.stories
        pooled = fit.held_out.get("pooled")
        out.print(
            f"story pair model written: {learnt.stories_path} (threshold {fit.model.threshold:.3f}; "
            f"{fit.model.card['fitted_on']['pairs']} pairs of {counted(len(fit.days), 'day')}"
            + (
                f"; blocks left out: pairs P {pooled['precision']:.2f} / R {pooled['recall']:.2f}"
                if pooled
                else "; too few blocks of days to judge it on one left out"
            )
            + ")",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    else:
        out.print(
            "story pair model kept: fewer than two blocks of days hold labelled stories or "
            "same-story answers",
            markup=False,
            highlight=False,
        )
    if learnt.out.suffix == ".toml":
        out.print(
            f"candidate written: {out_path} (model {model_path}), the policy in force with this model; "
            f"compare it with 'brief evaluate --policy {out_path} --start … --end …{config}', "
            f"adopt it with 'brief policy adopt {out_path} --reason …{config}'",
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


def show_adoption(out: Console, adoption: Adoption) -> None:
    """An adoption (or rollback) as ``adoption_lines`` says it, then what it changed."""
    from storage.payloads import PolicyAdopted
    from storage.typed import payload_of

    for line in adoption_lines(adoption.event):
        out.print(line)
    out.print("  changes:")
    for line in change_lines(
        [c.model_dump(mode="json") for c in payload_of(adoption.event, PolicyAdopted).changes]
    ):
        out.print(line)
    if not adoption.written:
        out.print("  (this adoption was already in the log: nothing new written)")


def adoption_lines(event: Event, width: int = WIDTH) -> list[str]:
    """An adoption as lines for a person, each within ``width`` columns (a long reason or list of
    cases wrapped at words, under a hanging indent)."""
    from storage.payloads import PolicyAdoptedV2
    from storage.typed import payload_of

    p = payload_of(event, PolicyAdoptedV2)
    lines = [
        f"policy {p.version} adopted {event.occurred_at:%Y-%m-%d %H:%M:%S} UTC by {p.by}"
        + (" (a rollback)" if p.rollback_of else ""),
        f"  why: {p.reason}",
        f"  from: {p.source}",
        f"  replaces: {p.previous_version or '-'}",
        "  evaluation: "
        + (f"{p.evaluation} (verdict: {p.verdict or 'none recorded'})" if p.evaluation else "none"),
        f"  event: {event.event_id} ({event.brief_date})",
    ]
    check = p.regression
    if check:
        line = f"  regression: {check.passed_candidate} of {counted(check.cases, 'case')} kept"
        if check.broken:
            forced = " (adopted with --force)" if check.forced else ""
            broken = ", ".join(check.broken)
            line += f"; broke {len(check.broken)} the policy before passed: {broken}{forced}"
        lines.insert(-1, line)
    indent = [line[: len(line) - len(line.lstrip())] for line in lines]
    return [out for line, i in zip(lines, indent, strict=True) for out in wrap(line, width, i, i + "    ")]


def _shown(value: Any) -> str:
    return "-" if value is None else json.dumps(value, ensure_ascii=False)


def change_lines(found: Sequence[dict[str, Any]], width: int = WIDTH) -> list[str]:
    """Each change on its line (``key: before -> after``), wrapped at words within ``width``."""
    lines = [
        out
        for c in found
        for out in wrap(f"{c['key']}: {_shown(c['before'])} -> {_shown(c['after'])}", width, "  ", "      ")
    ]
    return lines or ["  (no change)"]


def setting_lines(tables: PolicyTables, width: int = WIDTH) -> list[str]:
    """A policy's settings and files (``key = value``), wrapped at words within ``width``; a value is
    shown whole."""
    from ops.policy import flatten  # loaded already: the command read the policy with it

    return [
        out
        for key, value in flatten(tables).items()
        for out in wrap(f"{key} = {_shown(value)}", width, "    ", "        ")
    ]


def show_in_force(out: Console, found: InForce, moment: datetime | None, every: bool = False) -> None:
    """The adoption in force: who adopted it, why, on which evaluation; a pinned file's note; what
    it changed from the policy before it, and how many settings it has (``every``: each of its
    settings and files)."""
    from ops.policy import flatten, tables_of  # loaded already: the command read the adoption with it

    if found.adoption is None:
        when = f" at {moment.isoformat()}" if moment else ""
        out.print(f"no policy adopted{when}: runs use the config's [policy] ({found.config_version})")
        return
    for line in adoption_lines(found.adoption):
        out.print(line)
    if found.pinned:
        for line in wrap(f"note: {found.pinned}", WIDTH, "  ", "      "):
            out.print(line)
    if every:
        out.print("  settings:")
        for line in setting_lines(tables_of(found.adoption)):
            out.print(line)
        return
    from storage.payloads import PolicyAdoptedV2
    from storage.typed import payload_of

    changes = payload_of(found.adoption, PolicyAdoptedV2).changes
    out.print("  changed from the policy before it:")
    for line in change_lines([c.model_dump() for c in changes], WIDTH - 2):
        out.print(f"  {line}")
    count = len(flatten(tables_of(found.adoption)))
    out.print(f"  {count} settings and files in all; 'brief policy show --all' lists each")


def history_table(events: Sequence[Event]) -> Table:
    """Every adoption, oldest first: when, which version, who, why, on which evaluation, how many changes."""
    from storage.payloads import PolicyAdoptedV2
    from storage.typed import payload_of

    table = Table(title=f"{counted(len(events), 'adoption')}")
    for column in ("#", "adopted (UTC)", "version", "by", "reason", "evaluation", "changes"):
        # a version's hash and a moment are whole, to be copied; the words around them wrap
        whole = column in ("#", "adopted (UTC)", "version", "changes")
        table.add_column(column, overflow="fold", no_wrap=whole)
    for n, e in enumerate(events, 1):
        p = payload_of(e, PolicyAdoptedV2)
        table.add_row(
            str(n),
            f"{e.occurred_at:%Y-%m-%d %H:%M}",
            p.version + (" (rollback)" if p.rollback_of else ""),
            p.by,
            p.reason,
            (p.verdict or "recorded") if p.evaluation else "none",
            str(len(p.changes)),
        )
    return table


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


def expected(case: RegressionCaseAdded) -> str:
    """What a regression case expects, with the other story of a ``same-as`` / ``not-same``."""
    return f"{case.expect}:{case.other_story_id}" if case.other_story_id else case.expect


def kept_case_line(day: date, case: Event) -> str:
    """A regression case an act kept (``--as-case``), in one line."""
    from storage.payloads import RegressionCaseAdded
    from storage.typed import payload_of

    p = payload_of(case, RegressionCaseAdded)
    return f"kept as regression case {p.case_id}: {day} {p.story_id} expected {expected(p)}"


def show_frozen(out: Console, day: date, frozen: FrozenCase) -> None:
    """A case added (or found in the set), its frozen facts, and whether the policy in force passes it."""
    from ops.regress import describe
    from storage.payloads import RegressionCaseAdded
    from storage.typed import payload_of

    p = payload_of(frozen.event, RegressionCaseAdded)
    what = "added" if frozen.written else "already in the set (nothing new written)"
    out.print(f"case {p.case_id} {what}: {day} {p.story_id} expected {expected(p)}")
    out.print(f"  frozen: {counted(p.facts.events, 'event')} of {p.facts.first_day} .. {p.facts.last_day}")
    verdict = "passes" if frozen.result.passed else "FAILS"
    out.print(f"  the policy in force ({frozen.version}) {verdict}: {describe(frozen.result)['got']}")


def show_regression(out: Console, run: RegressionRun) -> None:
    """The set under the policy in force, its failures listed; under a candidate, the cases it breaks."""
    from ops.regress import describe

    now, bad = run.current, [describe(r) for r in run.failed]
    out.print(
        f"the policy in force ({run.current_version}): "
        f"{counted(len(now), 'case')}, {len(now) - len(bad)} pass"
    )
    if bad:
        out.print(case_table("failures under the policy in force", bad))
    if run.gate is None:
        return
    passed = sum(r.passed for r in run.gate.candidate)
    also = run.failed_by_both
    out.print(
        f"the candidate policy ({run.candidate_version}): {counted(len(now), 'case')}, {passed} pass; "
        f"it breaks {len(run.gate.broken)} the policy in force passes"
        + (f" (and fails {also} the policy in force fails too)" if also else "")
    )
    if run.gate.broken:
        out.print(case_table("broken by the candidate", [describe(r) for r in run.gate.broken]))
