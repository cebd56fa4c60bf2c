"""Questions: the day's open questions, and a batch of answers (which approves a held brief)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import reads
from flows.desk.web import ActOf, Day, DeskOf, Form, banner, done, page
from ops import acts
from storage.errors import InputError

router = APIRouter()


@router.get("/questions")
def questions(request: Request, desk: DeskOf, day: Day) -> Response:
    return page(
        request,
        "questions.html.j2",
        day=day.isoformat(),
        questions=reads.open_questions(desk.store, day),
        done=banner(request),
    )


@router.post("/questions")
def answer(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    from flows.review import interpret

    replies = []
    for q in reads.open_questions(desk.store, act.day):
        key = f"q:{q['question_id']}"
        if key not in form:
            continue  # not on the page the person answered: left open
        try:
            given, how = interpret(q, form[key])
        except InputError as problem:
            raise InputError(f"question {q['prompt']!r}: {problem}") from None
        replies.append(acts.Answer(q["question_id"], given, how))
    if not replies:
        raise InputError("none of these questions is open any more; reload the page")
    return done(request, "answers", acts.answer(desk.settings, act, replies), "/questions")
