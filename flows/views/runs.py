"""What ``brief run``, ``backfill``, ``collect``, ``check``, ``alerts``, ``reparse`` and ``purge`` print.

A path or a command to copy is printed whole (``soft_wrap``), never broken over lines.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING

import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from flows.views.console import styled
from flows.views.text import counted, wrap

if TYPE_CHECKING:  # at run time they would load pyarrow and polars before a command needs them
    from ops.alerts import Alert
    from ops.preflight import Check
    from ops.purge import PurgeResult
    from ops.reparse import Reparsed
    from ops.runs import Collected, DateOutcome, RunResult


def show_run(
    out: Console,
    err: Console,
    result: RunResult,
    log: str,
    config: str = "",
    wall: float | None = None,
) -> None:
    """A day's run: its version and items, its files and log, the policy that decided, what was left
    out or not fetched, and where it was delivered (a failed delivery on stderr, with how to resend).
    ``config``: `` --config PATH`` for the commands it prints (empty for the default config);
    ``wall``: the command's own time, said beside the steps' when Prefect and loading took more."""
    state = "new version" if result.changed else "unchanged"
    took = f"{result.seconds:.1f} s"
    if wall is not None and wall - result.seconds >= 1:
        took += f" ({wall:.1f} s in all)"  # the steps', then the command's: Prefect, loading models
    out.print(
        styled(
            (f"Brief for {result.day}", "bold"),
            f" (v{result.version}, {state}): {counted(result.items, 'item')} in {took}",
        )
    )
    for ext, path in [*result.files.items(), ("log", log)]:
        out.print(f"  {ext:<4} {path}", soft_wrap=True)  # a path is never broken: it is copied whole
    # which policy decided (ops/policy.py governing), wrapped at its words under its indent
    out.print(Text("\n".join(wrap(result.policy, out.width, "  ", "    ", cut=False))), soft_wrap=True)
    if result.left_out:
        out.print(f"  {result.left_out}", soft_wrap=True)  # the command is copied whole
    if result.review:
        out.print(f"  {result.review}", soft_wrap=True)
    if result.skipped:
        reasons = sorted(set(result.skipped.values()))
        out.print(f"  not fetched: {', '.join(result.skipped)} ({'; '.join(reasons)})")
    if result.delivered:
        out.print(f"  delivered to {', '.join(result.delivered)}")
    if result.delivery_failed:
        err.print(
            f"warning: delivery to {', '.join(result.delivery_failed)} failed; "
            f"'brief events --date {result.day} --type delivery.failed{config}' says why, "
            f"'brief deliver --date {result.day}{config}' resends",
            soft_wrap=True,  # the commands are copied whole
        )


def show_backfill(out: Console, start: str, end: str, outcomes: Sequence[DateOutcome]) -> None:
    """Each date's outcome in a narrow table (it fits 80 columns), each failed date's reason below it
    wrapped at its words, then the policy lines (one unless it changed meanwhile)."""
    table = Table(title=f"backfill {start} .. {end}", title_justify="left")
    for column in ("date", "status", "version", "items", "new", "secs"):
        table.add_column(column, no_wrap=True, justify="left" if column in ("date", "status") else "right")
    for o in outcomes:
        table.add_row(
            str(o.day),
            o.status,
            f"v{o.version}" if o.version else "",
            str(o.items),
            "yes" if o.changed else "no",
            f"{o.seconds or 0:.1f}",
        )
    out.print(table)
    for o in outcomes:
        if o.error:  # its reason under the date, each line indented (a path in it whole)
            said = wrap(f"{o.day} {o.status}: {o.error}", out.width, "  ", "    ", cut=False)
            out.print(Text("\n".join(said)), soft_wrap=True)
    for line in dict.fromkeys(o.policy for o in outcomes if o.policy):
        out.print(Text("\n".join(wrap(line, out.width, "", "  ", cut=False))), soft_wrap=True)


def show_collected(out: Console, got: Collected) -> None:
    """One source's line: its items, or why it failed."""
    status = styled(("failed", "red"), f" {got.failure}") if got.failure else Text(counted(got.items, "item"))
    out.print(Text(f"  {got.source:<20} ") + status)


MARKS = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "bold red")}


CHECK_WIDTH = 22  # the check column's widest; the mark's is 4; borders and padding take 10


def show_checks(out: Console, err: Console, title: str, checks: Sequence[Check]) -> None:
    """The pre-flight's table, when its detail column holds every word of the details whole (a
    path, a URL); else each check as an entry, its detail wrapped at its words below it. Then each
    warning and failure on stderr with how to fix it."""
    room = out.width - CHECK_WIDTH - 4 - 10
    if max((len(word) for c in checks for word in c.detail.split()), default=0) <= room:
        table = Table(title=title, title_justify="left")
        table.add_column("check", overflow="fold", max_width=CHECK_WIDTH)
        table.add_column("", no_wrap=True)
        table.add_column("detail", overflow="fold")
        for c in checks:
            table.add_row(c.what, styled(MARKS[c.status]), c.detail)
        out.print(table)
    else:
        out.print(title)
        for c in checks:
            out.print(styled(MARKS[c.status], f" {c.what}"))
            out.print("\n".join(wrap(c.detail, out.width, "  ", cut=False)), soft_wrap=True)
    for c in checks:
        if c.status != "ok":
            word = "error" if c.status == "fail" else "warning"
            said = f"{c.detail}; {c.fix}" if c.fix else c.detail  # a detail that says the fix, once
            err.print(f"{word}: {c.what}: {said}", soft_wrap=True)


def alerts_jsonl(rows: Sequence[Alert]) -> Iterator[str]:
    """``brief alerts --format jsonl``: an alert a line, its time with its offset."""
    for row in rows:
        yield orjson.dumps({**asdict(row), "at": row.at.isoformat()}).decode() + "\n"


def alerts_table(days: int, rows: Sequence[Alert]) -> Table:
    """The alerts, newest first: the brief date and when it went, the cause, the channel, what."""
    table = Table(title=f"alerts of the last {counted(days, 'day')}: {len(rows)}")
    table.add_column("date, sent", no_wrap=True)
    table.add_column("cause", overflow="fold", max_width=22)
    table.add_column("channel", overflow="fold", max_width=12)
    table.add_column("what", overflow="fold")
    for row in rows:
        what = row.what if row.status == "sent" else f"FAILED: {row.what}"
        when = f"{row.date}\n{row.at:%m-%d %H:%M}"  # the brief date, then the time it went
        table.add_row(when, row.cause, row.channel, what)
    return table


def show_reparsed(out: Console, err: Console, result: Reparsed, config: str = "") -> None:
    """The bodies a day's feeds were parsed again from, and what it appended (or what was missing)."""
    day = result.day
    for why in result.missing:
        err.print(f"  skipped {why}")
    out.print(
        f"{day}: {counted(result.fetches, 'feed body', 'feed bodies')} parsed again, "
        f"{counted(result.articles, 'article')}; "
        f"{counted(result.written, 'new event')}, {result.skipped} already in the log"
        + (f"; 'brief run --date {day}{config}' briefs the day from them" if result.written else ""),
        soft_wrap=True,
    )


def show_purged(out: Console, result: PurgeResult) -> None:
    """What a purge took out, and each brief it re-rendered."""
    out.print(
        f"Purged {result.target}: {counted(len(result.articles), 'article')}; "
        f"{counted(len(result.days), 'day')} rewritten "
        f"({counted(result.dropped, 'event')} removed), {counted(result.bodies, 'raw body', 'raw bodies')}, "
        f"{counted(result.vectors, 'cached vector')}, "
        f"{counted(result.files, 'other file')}; {result.seconds:.1f} s"
    )
    for day, versions, new in result.briefs:
        done = f"v{', v'.join(map(str, versions))} re-rendered" if versions else "no earlier version cited it"
        out.print(f"  brief {day}: {done}" + (f"; now v{new}" if new else ""))
