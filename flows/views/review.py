"""What ``brief review`` prints: the interview's heading, each batch and question with its numbered
choices, a reply it could not take, the brief the answers re-rendered, the questions a mark
answered and the regression cases kept (``flows/review.py`` asks; this lays out what it says)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from rich.console import Console
from rich.text import Text

from flows.views.text import counted, wrap


def show_interview(out: Console, day: date, total: int, batches: int) -> None:
    """The interview's first line: how many questions, in how many batches, and the keys."""
    out.print(
        Text.assemble(
            (f"{counted(total, 'open question')} for {day}", "bold"),
            f" in {counted(batches, 'batch', 'batches')}. Enter takes the [default]; Ctrl-D stops.",
        ),
        markup=False,
    )


def show_batch(out: Console, k: int, batches: int) -> None:
    out.print(Text.assemble("\n", (f"Batch {k} of {batches}", "bold")), markup=False)


def show_question(
    out: Console, number: int, prompt: str, choices: Sequence[tuple[int, str]], default: str
) -> None:
    """A question, numbered in its batch, and its choices by their numbers, the default said."""
    out.print(f"\n{number}. {prompt}", markup=False, highlight=False)
    if choices:
        out.print(
            "   " + "   ".join(f"{n}) {c}" + (" [default]" if c == default else "") for n, c in choices),
            markup=False,
            highlight=False,
        )


def show_retry(out: Console, problem: object) -> None:
    out.print(f"   {problem}; try again", markup=False, highlight=False)


def show_answered(out: Console, recorded: Sequence[tuple[int, str]], day: date, state: str, md: str) -> None:
    """What the answers and marks did: how many were recorded, and the brief's version after them
    (its Markdown file's path whole, to be copied)."""
    said = " and ".join(counted(n, what) for n, what in recorded if n)
    line = f"{said} recorded. Brief for {day}: {state}: {md}"
    out.print("\n".join(wrap(line, out.width, "", "  ", cut=False)), soft_wrap=True, markup=False)


def show_still_open(out: Console, still: int, asks: str) -> None:
    """How many questions are left, and on a line of its own the command that asks them (whole, to
    be copied: a command wrapped in two could be pasted half)."""
    out.print(
        f"{counted(still, 'question')} still open; this asks them:\n  {asks}", soft_wrap=True, markup=False
    )


def print_settled(out: Console, outcome: Any, asked: set[str]) -> None:
    """The open questions a mark answered: the question, the story and the answer the mark gave."""
    from storage.payloads import ConfirmationResolved
    from storage.typed import payload_of

    answers = [
        payload_of(e, ConfirmationResolved) for e in outcome.events if e.event_type == "confirmation.resolved"
    ]
    for a in answers:
        if a.question_id not in asked:  # wrapped at its words, ids whole
            said = f"question {a.question_id} (is {a.subject} on the topic?) answered '{a.answer}'"
            said += " by the mark"
            out.print(Text("\n".join(wrap(said, out.width, "", "  ", cut=False))), soft_wrap=True)


def print_links(out: Console, outcome: Any, store: Any) -> None:
    """The same-story (or two-stories) links the answers made, each by its reports' headlines:
    "joined “…” and “…” into one story"."""
    from ops.changes import links_said

    for line in links_said(store, outcome.events):
        out.print(Text("\n".join(wrap(line, out.width, "  ", "    ", cut=False))), soft_wrap=True)


def print_cases(out: Console, err: Console, outcome: Any) -> None:
    """``--as-case``: the regression cases an act kept, and why any was not."""
    for why in outcome.refused:
        err.print(f"not kept as a regression case: {why}", soft_wrap=True)
    from flows.views.policy import kept_case_line

    for case in outcome.cases:
        out.print(kept_case_line(outcome.day, case))
    if not outcome.cases and not outcome.refused:
        out.print("no mark or same-story answer to keep as a regression case")
