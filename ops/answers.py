"""An answer to a question, as a person gives it: each answer's number (the same at ``brief
review``'s prompt and at the desk's Questions page) and a typed reply read as an answer."""

from __future__ import annotations

from collections.abc import Sequence

from storage.errors import InputError
from tasks import review
from tasks.settings import DEFAULT_CATEGORIES

DEFAULT_NAMES = tuple(c.name for c in DEFAULT_CATEGORIES)

# Each answer's number, for good: the same at ``brief review``'s prompt and at the desk's Questions
# page, in every session and every batch ("3) off-topic" is 3 wherever it is offered). A category's
# number is its place in the configured categories (``[[policy.categories]]``), "other" last.
ANSWER_NUMBERS: dict[str, tuple[str, ...]] = {
    "relevance": ("core", "related", "off-topic", "lead"),
    "same_story": ("yes", "no"),
    "claim": ("keep", "remove"),
}


def answer_numbers(question: dict, categories: Sequence[str] = ()) -> dict[str, int]:
    """The question's answers and their numbers, from ``ANSWER_NUMBERS`` by its kind (a category
    question's from ``categories``, the configured names in order); an answer the table does not
    know is numbered after those, in alphabetical order, so it too keeps its number."""
    field = str(question.get("field") or "")
    kind = "claim" if field.startswith("claim:") else field
    known = (*categories, "other") if kind == "category" else ANSWER_NUMBERS.get(kind, ())
    table = list(dict.fromkeys(known))
    table += sorted(c for c in question["candidates"] or [] if c not in table)
    return {answer: n for n, answer in enumerate(table, start=1)}


def batch_numbers(questions: list[dict], categories: Sequence[str] = ()) -> dict[str, dict[str, int]]:
    """Each question's numbering (question id -> answer -> number), by ``answer_numbers``: as
    ``brief review`` asks and the desk shows them, whatever the batch or the session."""
    return {q["question_id"]: answer_numbers(q, categories) for q in questions}


def numbered_choices(question: dict, numbers: dict[str, int]) -> list[tuple[int, str]]:
    """The question's candidates as ``(number, answer)`` in the order of their numbers."""
    return sorted((numbers[c], c) for c in question["candidates"] or [])


def interpret(question: dict, reply: str, numbers: dict[str, int] | None = None) -> tuple[str, str]:
    """A reply as ``(answer, by)``: nothing takes the default, a number picks that answer (``numbers``:
    the question's ``answer_numbers``; without it, those of the default categories), any other text
    must be an answer the question accepts (InputError says why not)."""
    reply = reply.strip()
    candidates = question["candidates"] or []
    if not reply:
        return question["default"], "default"
    if reply.isascii() and reply.isdigit():
        by_number = {n: c for c, n in (numbers or answer_numbers(question, DEFAULT_NAMES)).items()}
        picked = by_number.get(int(reply))
        if picked is not None and picked in candidates:
            return picked, "human"
        offered = ", ".join(str(n) for n, c in sorted(by_number.items()) if c in candidates)
        raise InputError(f"{reply} is not an answer to this question; pick {offered}, or type the answer")
    problem = review.check_answer(question, reply)
    if problem is not None:
        raise InputError(problem)
    return reply, "human"
