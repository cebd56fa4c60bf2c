"""``brief review``: the interview, at a terminal or from a file of answers (what it prints is laid
out by ``flows/views/review.py``)."""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import polars as pl
from rich.console import Console

from flows.interrupt import Interrupted
from flows.views import review as view
from ops.acts import Answer
from ops.answers import batch_numbers, interpret, numbered_choices
from storage.errors import InputError
from tasks import review


def read_answers(path: str) -> tuple[dict[str, str], dict[str, str]]:
    """``{"<question_id>": "<answer>", …, "marks": {"<story id | article id | link>": "<mark>"}}``."""
    try:
        given = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"--answers {path!r}: no such file") from None
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, a number too long, nested too deep
        why = "nested too deeply" if isinstance(exc, RecursionError) else " ".join(str(exc).split())
        raise InputError(
            f"--answers {path!r} is not JSON ({why}); give an object of question id -> answer"
        ) from None
    if not isinstance(given, dict):
        raise InputError(f"--answers {path!r} must be a JSON object mapping question ids to answer strings")
    marks = given.pop("marks", {})
    if not isinstance(marks, dict) or not all(isinstance(v, str) for v in marks.values()):
        raise InputError(f'--answers {path!r}: "marks" must map story ids (or links) to a mark string')
    if not all(isinstance(v, str) for v in given.values()):
        raise InputError(f"--answers {path!r} must be a JSON object mapping question ids to answer strings")
    return given, marks


def parse_marks(texts: list[str]) -> dict[str, str]:
    """``--mark STORY=MARK`` options."""
    marks = {}
    for text in texts:
        story, sep, mark = text.rpartition("=")
        if not sep or not story:
            raise InputError(f"--mark {text!r}: use STORY=MARK, e.g. st-1a2b=off-topic")
        marks[story] = mark
    return marks


def answers_from_file(
    questions: pl.DataFrame, path: str, day: date, config: str = ""
) -> tuple[list[Answer], dict[str, str]]:
    """Answers (and marks) from a file, every answer checked against its open question; nothing
    is written here (``ops.acts.answer`` records them). ``config``: `` --config PATH`` for the
    command a mistake names."""
    given, marks = read_answers(path)
    by_id = {q["question_id"]: q for q in questions.iter_rows(named=True)}
    unknown = sorted(set(given) - set(by_id))
    if unknown:
        raise InputError(
            f"--answers: {unknown[0]!r} is not an open question of {day}; "
            f"'brief events --date {day} --type confirmation.requested --format jsonl{config}' lists them"
        )
    for question_id, answer in given.items():
        problem = review.check_answer(by_id[question_id], answer)
        if problem:
            raise InputError(f"--answers: question {question_id}: {problem}")
    return [Answer(qid, answer, "human") for qid, answer in given.items()], marks


def ask(questions: pl.DataFrame, day: date, out: Console, categories: Sequence[str] = ()) -> list[Answer]:
    """One batch at a time, numbered; Enter takes the default; Ctrl-D stops (answers so far are kept);
    Ctrl-C stops and keeps none (Interrupted: answers are recorded together, at the end)."""
    batches = questions.partition_by("batch_id", maintain_order=True)
    total = questions.height
    answers: list[Answer] = []
    view.show_interview(out, day, total, len(batches))
    # Python's own SIGINT handler again: the one polars installs restarts a read, so Ctrl-C at
    # the prompt would wait for Enter
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for k, batch in enumerate(batches, start=1):
        view.show_batch(out, k, len(batches))
        rows = list(batch.iter_rows(named=True))
        numbers = batch_numbers(rows, categories)
        for n, question in enumerate(rows, start=1):
            try:
                answer, by = _ask(out, n, question, numbers[question["question_id"]])
            except EOFError:  # Ctrl-D, or the end of piped input: the next line starts on its own
                out.print()
                return answers
            except KeyboardInterrupt:
                given = len(answers)
                lost = "" if not given else f", not even the {given} answer{'s' * (given > 1)} given"
                raise Interrupted(
                    f"\ninterrupted: nothing recorded{lost} (Ctrl-D stops and keeps the answers given)"
                ) from None
            answers.append(Answer(question["question_id"], answer, by))
    return answers


def _ask(out: Console, number: int, question: dict, numbers: dict[str, int]) -> tuple[str, str]:
    candidates = [c for _, c in numbered_choices(question, numbers)]
    view.show_question(
        out, number, question["prompt"], [(numbers[c], c) for c in candidates], question["default"]
    )
    while True:
        reply = input(f"   answer [{question['default']}]: ")
        try:
            return interpret(question, reply, numbers)
        except InputError as problem:
            view.show_retry(out, problem)
