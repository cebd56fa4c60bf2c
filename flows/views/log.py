"""How ``brief events``, ``replay``, ``stats`` and ``compact`` lay out for a terminal.

Every layout reads in 80 columns: no line is wider than the console, ids are shown whole (a
run's id once, in a legend its rows refer to by number), words are never broken, and only a
payload, which ``--format jsonl`` gives whole, is cut short (with "…").

Polars and the store's types are imported only where a layout needs them (they load pyarrow),
as every module of ``flows/views`` does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import orjson
from rich import box
from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from flows.views.text import counted

if TYPE_CHECKING:  # at run time they would load pyarrow and polars before a command needs them
    from datetime import date

    import polars as pl

    from ops.history import VersionLine
    from storage.retention import Thinned
    from storage.store.base import CompactResult

INDENT = 2  # the second line of an entry


def events_jsonl(frame: pl.DataFrame) -> Iterator[str]:
    """``brief events --format jsonl``: an event a line, its time in UTC to the microsecond and its
    payload whole, as JSON."""
    import polars as pl

    when = pl.col("occurred_at").dt.to_string("%Y-%m-%dT%H:%M:%S%.6fZ")
    for row in frame.with_columns(when).iter_rows(named=True):
        row["brief_date"] = row["brief_date"].isoformat()
        row["payload"] = orjson.Fragment(row["payload"])
        yield orjson.dumps(row).decode() + "\n"


def frame_jsonl(frame: pl.DataFrame) -> Iterator[str]:
    """A frame's rows, a JSON object a line (``--format jsonl``)."""
    for line in frame.write_ndjson().splitlines():
        yield line + "\n"


def _line(text: str, width: int) -> Text:
    """``text`` flattened to one line of at most ``width`` cells, "…" where it was cut."""
    line = Text(" ".join(text.split()))
    line.truncate(width, overflow="ellipsis")
    return line


def events_view(rows: Sequence[Mapping[str, Any]], title: str, width: int) -> RenderableType:
    """The events as two-line entries: when, brief date, type and run (by its number in the legend
    above), then the subject and as much of the payload as the width holds."""
    from storage.typed import why_first  # loaded with the events the command read

    runs: dict[str, int] = {}
    for row in rows:
        runs.setdefault(row["run_id"], len(runs) + 1)
    parts: list[RenderableType] = [Text(title, style="bold")]
    if runs:
        legend = Text("runs:")
        label = len(str(len(runs)))
        for run_id, number in runs.items():
            legend.append(f"\n  {number:>{label}} = {run_id}")
        parts.append(legend)
    type_width = max((len(r["event_type"]) for r in rows), default=0)
    subject_width = max((len(r["subject_id"]) for r in rows), default=0)
    for row in rows:
        head = Text(f"{row['occurred_at']:%Y-%m-%d %H:%M:%S}  {row['brief_date']}  ", style="dim")
        head.append(f"{row['event_type']:<{type_width}}", style="bold")
        head.append(f"  run {runs[row['run_id']]}")
        subject = Text(f"{' ' * INDENT}{row['subject_id']:<{subject_width}}  ")
        room = width - subject.cell_len
        if room < 20:  # a long subject: the payload gets a line of its own
            body = Group(
                Text(subject.plain.rstrip()),
                Padding(_line(why_first(row["payload"]), width - INDENT), (0, 0, 0, INDENT)),
            )
        else:
            body = Group(subject + _line(why_first(row["payload"]), room))
        parts.append(Group(Text(""), head, body))
    return Group(*parts)


STATS_HEADERS = {
    "date": "date",
    "runs": "runs",
    "failed": "failed",
    "last_status": "status",
    "collected": "items",
    "feeds_failed": "bad\nfeeds",
    "duplicates": "dups",
    "stories": "stories",
    "versions_published": "versions",
    "off_topic": "off\ntopic",
    "last_run_s": "secs",
}
STATS_LEGEND = (
    "items: articles first collected for the day; dups: copies among them (the same link or "
    "text); articles of earlier days its feeds held again are neither ('earlier' in --format jsonl)"
)
MODEL_HEADERS = {"date": "date", "llm_calls": "calls", "llm_tokens": "tokens", "llm_cost": "cost"}


def _table(
    title: str, headers: Mapping[str, str], rows: Iterable[Sequence[Any]], width: int
) -> RenderableType:
    """A narrow table (one space between columns, headers on two lines) when its columns fit in
    ``width``; else each row as an entry, its first cell then "header value" pairs wrapped between
    them: no cell is ever cut."""
    from flows.views.text import wrap

    cells = [["" if v is None else str(v) for v in row] for row in rows]
    wide = [
        max([*(len(line) for line in header.split("\n")), *(len(row[k]) for row in cells)])
        for k, header in enumerate(headers.values())
    ]
    if sum(wide) + len(wide) - 1 > width:
        parts: list[RenderableType] = [Text(title, style="bold")]
        names = [header.replace("\n", " ") for header in headers.values()]
        for row in cells:
            facts = " · ".join(
                f"{name} {cell}" for name, cell in zip(names[1:], row[1:], strict=True) if cell
            )
            parts += [Text(row[0], style="bold"), Text("\n".join(wrap(facts, width, " " * INDENT)))]
        return Group(*parts)
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False)
    for key, header in headers.items():
        left = key in ("date", "last_status")
        table.add_column(header, no_wrap=True, justify="left" if left else "right")
    for row in cells:
        table.add_row(*row)
    return table


def stats_view(frame, width: int) -> RenderableType:
    """Runs per day in one narrow table (short headers, one space between columns), its status and
    seconds said to be the last run's; the language model's calls, tokens and cost in a second one
    when a model was used; each day's last error below them, wrapped at its words."""
    shown = [c for c in STATS_HEADERS if c in frame.columns]
    days = f"{frame.height} day" + ("" if frame.height == 1 else "s")
    parts: list[RenderableType] = [
        _table(
            f"runs per day: {days}; status and secs are of each day's last run",
            {c: STATS_HEADERS[c] for c in shown},
            frame.select(shown).iter_rows(),
            width,
        )
    ]
    if "llm_calls" in frame.columns and bool(frame["llm_calls"].sum()):
        model = [c for c in MODEL_HEADERS if c in frame.columns]
        parts += [
            Text(""),
            _table(
                "language model per day",
                {c: MODEL_HEADERS[c] for c in model},
                frame.select(model).iter_rows(),
                width,
            ),
        ]
    if "earlier" in frame.columns:
        parts.append(Padding(Text(STATS_LEGEND, style="dim"), (1, 0, 0, 0)))
    if "last_error" in frame.columns:
        errors = [(d, e) for d, e in frame.select("date", "last_error").iter_rows() if e]
        if errors:
            parts.append(Text("\nerror of each day's last run:", style="bold"))
        for day, error in errors:
            parts.append(Padding(Text(f"{day}: {error}"), (0, 0, 0, INDENT)))
    return Group(*parts)


def history_jsonl(found: Mapping[date, Sequence[VersionLine]]) -> Iterator[str]:
    """Each version a JSON object a line (``brief history --format jsonl``), newest day first."""
    for lines in found.values():
        for v in lines:
            yield orjson.dumps(dataclasses.asdict(v)).decode() + "\n"


def history_view(found: Mapping[date, Sequence[VersionLine]], width: int) -> RenderableType:
    """Each day's versions under the day, one a line: "v2 (3 items) ann: marked lead", its run ids
    shown by their first 8 characters, as the desk's History shows them; wrapped at its words."""
    from flows.views.text import short_runs, wrap

    if not found:
        return Text("no brief is published yet")
    parts: list[RenderableType] = []
    for day, lines in found.items():
        parts.append(Text(day.isoformat(), style="bold"))
        for v in lines:
            line = f"v{v.version} ({counted(v.items, 'item')})" + (f" {short_runs(v.said)}" if v.said else "")
            parts.append(Text("\n".join(wrap(line, width, " " * INDENT))))
    return Group(*parts)


def questions_view(rows: Sequence[Mapping[str, Any]], title: str) -> RenderableType:
    """Each question as an entry: its id, type and status, the default or the answer and who gave
    it, then the whole prompt wrapped at its words."""
    parts: list[RenderableType] = [Text(title, style="bold")]
    for row in rows:
        head = Text(str(row["question_id"]), style="bold")
        head.append(f"  {row.get('type') or ''}  {row.get('status') or ''}")
        if row.get("answer") is not None:
            head.append(f"  answer: {row['answer']} (by {row.get('by') or '?'})")
        elif row.get("default") is not None:
            head.append(f"  default: {row['default']}")
        prompt = Text(str(row.get("prompt") or ""))
        parts += [Text(""), head, Padding(prompt, (0, 0, 0, INDENT))]
    return Group(*parts)


def scores_view(rows: Sequence[Mapping[str, Any]], title: str) -> RenderableType:
    """Each story's score as an entry: its id whole, outcome, relevance and importance (and who
    marked it), then its title and why, wrapped at their words."""
    parts: list[RenderableType] = [Text(title, style="bold")]
    for row in rows:
        head = Text(str(row["story_id"]), style="bold")
        head.append(f"  {row.get('outcome') or ''}")
        for name in ("relevance", "importance"):
            if row.get(name) is not None:
                head.append(f"  {name} {float(row[name]):.2f}")
        if row.get("marked_by"):
            head.append(f"  marked by {row['marked_by']}")
        lines = [Text(" ".join(str(row.get("title") or "").split()))]
        if row.get("reasons"):
            lines.append(Text(f"why: {row['reasons']}", style="dim"))
        parts += [Text(""), head, Padding(Group(*lines), (0, 0, 0, INDENT))]
    return Group(*parts)


def runs_view(rows: Sequence[Mapping[str, Any]], title: str) -> RenderableType:
    """Each run as an entry: its id whole, flow and status; when it started, how long it took and
    the events it wrote; its error wrapped at its words."""
    parts: list[RenderableType] = [Text(title, style="bold")]
    for row in rows:
        head = Text(str(row["run_id"]), style="bold")
        for name in ("flow", "status"):
            if row.get(name):
                head.append(f"  {row[name]}")
        started = row.get("started_at")
        when = f"{started:%Y-%m-%d %H:%M:%S} UTC" if hasattr(started, "strftime") else str(started or "")
        facts = [f"started {when}"] if when else []
        if row.get("duration_s") is not None:
            facts.append(f"{float(row['duration_s']):.1f} s")
        if row.get("events") is not None:
            facts.append(f"{counted(row['events'], 'event')}")
        lines = [Text(", ".join(facts))]
        if row.get("error"):
            lines.append(Text(f"error: {row['error']}", style="red"))
        parts += [Text(""), head, Padding(Group(*lines), (0, 0, 0, INDENT))]
    return Group(*parts)


DISPLAY_COLUMNS = {
    "articles": ["article_id", "published_at", "source", "title", "language", "corrections"],
    "seen": ["kind", "key", "first_brief_date", "last_brief_date"],
    "runs": ["run_id", "flow", "status", "started_at", "duration_s", "events", "error"],
    "stories": ["story_id", "first_brief_date", "last_brief_date", "articles", "follow_up_of"],
    "questions": ["question_id", "type", "status", "answer", "by", "prompt"],
    "briefs": ["date", "version", "items", "published_at", "markdown"],
    "scores": ["story_id", "title", "outcome", "relevance", "importance", "reasons", "marked_by"],
}
CELL_AT_MOST = 90  # a cell longer is cut, with "…" (--format jsonl gives it whole)


def projection_view(frame, projection: str, title: str, width: int = 80) -> RenderableType:
    """A projection of a day: questions, scores and runs as entries, any other as a table of its main
    columns (``cells_view``)."""
    if projection == "questions":
        return questions_view(list(frame.iter_rows(named=True)), title)
    if projection == "scores":
        return scores_view(list(frame.iter_rows(named=True)), title)
    if projection == "runs":
        return runs_view(list(frame.iter_rows(named=True)), title)
    columns = [c for c in DISPLAY_COLUMNS.get(projection, frame.columns) if c in frame.columns]
    rows = [[_cell(v) for v in row] for row in frame.select(columns).iter_rows()]
    return cells_view(title, columns, rows, width)


def _cell(value: Any) -> str:
    text = "" if value is None else " ".join(str(value).split())
    return text if len(text) <= CELL_AT_MOST else text[: CELL_AT_MOST - 1] + "…"


def cells_view(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], width: int
) -> RenderableType:
    """A table whose every column is as wide as its longest word (or header), so that a cell wraps
    only between words; when those widths do not fit in ``width``, each row is an entry instead (its
    first cell, then a line per other column), which never breaks a word either."""
    headers = [column.replace("_", " ") for column in columns]  # a header wraps between its words
    widest = [
        max(len(word) for word in [*header.split(), *(w for row in rows for w in row[k].split())])
        for k, header in enumerate(headers)
    ]
    room = width - 3 * len(columns) - 1  # a cell's padding and border, and the last border
    if sum(widest) <= room:
        wide = [max([len(header), *(len(row[k]) for row in rows)]) for k, header in enumerate(headers)]
        while sum(wide) > room:  # the widest column that can still narrow gives a cell
            k = max((k for k in range(len(wide)) if wide[k] > widest[k]), key=lambda k: wide[k])
            wide[k] -= 1
        table = Table(title=title)
        for header, cells in zip(headers, wide, strict=True):
            table.add_column(header, width=cells, overflow="fold")
        for row in rows:
            table.add_row(*row)
        return table
    parts: list[RenderableType] = [Text(title, style="bold")]
    for row in rows:
        facts = [Text(f"{header}: {cell}") for header, cell in zip(headers[1:], row[1:], strict=True) if cell]
        parts += [Text(""), Text(row[0], style="bold"), Padding(Group(*facts), (0, 0, 0, INDENT))]
    return Group(*parts)


def shadow_jsonl(comparison) -> str:
    """A shadow comparison's record, a JSON line (``brief stats --shadow --format jsonl``)."""
    return orjson.dumps(comparison.record()).decode() + "\n"


def show_shadow(out: Console, comparison) -> None:
    """A shadow candidate beside the live policy (``ops/shadow_stats.py``'s ``Comparison``)."""
    frame = comparison.table()
    days = f"{comparison.days[0]} .. {comparison.days[-1]}"
    result = Table(title=f"shadow {comparison.candidate} ({comparison.file}), {days}")
    for column in frame.columns:
        result.add_column(column)
    for row in frame.iter_rows():
        result.add_row(*row)
    out.print(result)
    out.print(comparison.line())


def show_compacted(out: Console, done: Thinned | CompactResult) -> None:
    """A day compacted, or thinned by [retention] as it was."""
    from storage.retention import Thinned  # loaded already: the compaction imported it

    if isinstance(done, Thinned):
        what = ", ".join(f"{n} {t}" for t, n in sorted(done.events.items())) or "no event"
        out.print(
            f"{done.day}: {counted(done.files_before, 'file')} -> 1, {done.events_total} events; "
            f"thinned {what}; {counted(done.bodies, 'raw body', 'raw bodies')} dropped"
        )
        return
    out.print(f"{done.day}: {counted(done.files_before, 'file')} -> {done.files_after}, {done.events} events")
