"""Questions: the day's open questions, and a batch of answers (which approves a held brief)."""

from __future__ import annotations

from datetime import date
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk.web import ActOf, Day, Desk, DeskOf, Form, banner, done, page
from ops import acts, reads
from ops.answers import answer_numbers, batch_numbers, interpret, numbered_choices
from storage.errors import InputError

router = APIRouter()


@router.get("/questions")
def questions(request: Request, desk: DeskOf, day: Day) -> Response:
    asked, moot = reads.questions_of(desk.store, day)
    # brief review's: each answer's number is fixed for good, whatever the batch or the session
    numbering = batch_numbers(asked, [c.name for c in desk.settings.policy.categories])
    current = reads.current(desk.store, day)
    if current is None and not asked and not moot:  # no brief, nothing asked: said as Today says it
        held = reads.withheld(desk.store, day)
        if held is None:
            reads.document(desk.store, day)  # refused
        return page(request, "withheld.html.j2", day=day.isoformat(), held=held)
    return page(
        request,
        "questions.html.j2",
        day=day.isoformat(),
        seen=current.version if current is not None else "",  # answers approve what the page showed
        questions=asked,
        choices={q["question_id"]: numbered_choices(q, numbering[q["question_id"]]) for q in asked},
        about=items_asked_about(desk, day, asked),
        moot=len(moot),
        done=banner(request),
    )


def items_asked_about(desk: Desk, day: date, asked: list[dict]) -> dict[str, list[tuple[str, str, str]]]:
    """Each question's stories (link, headline, story id): an item of the day's current brief links
    to it on Today; a story not in the brief (left out, say) to its story page. A question names its
    story, or the articles whose stories it asks about (a same-story question names two)."""
    try:
        doc = reads.document(desk.store, day)
    except InputError:
        return {}
    items = {i.story_id: i.title for i in doc.items}
    left = reads.left_out(desk.store, day, set(items))
    out_of_brief = {s.story_id: s.title for s in left}
    story_of = {a: s.story_id for s in left for a in s.members}
    story_of |= {c.article_id: i.story_id for i in doc.items for c in i.citations}
    known = items | out_of_brief
    out = {}
    for q in asked:
        named = [q["subject"]] if q["subject"] in known else q["subject"].split("|")
        stories = dict.fromkeys(s for s in (n if n in known else story_of.get(n) for n in named) if s)
        out[q["question_id"]] = [
            (
                f"/today?date={day.isoformat()}&open={quote(s)}#{quote(s)}"
                if s in items
                else f"/story?id={quote(s)}",
                known[s],
                s,
            )
            for s in stories
        ]
    return out


@router.post("/questions")
def answer(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    replies = []
    for q in reads.open_questions(desk.store, act.day):
        key = f"q:{q['question_id']}"
        if key not in form:
            continue  # not on the page the person answered: left open
        reply = form[key]  # the answer itself (its number is the page's keyboard key), or typed text
        try:
            numbers = answer_numbers(q, [c.name for c in desk.settings.policy.categories])
            given, how = (
                (reply, "human") if reply in (q["candidates"] or []) else interpret(q, reply, numbers)
            )
        except InputError as problem:
            raise InputError(f"question {q['prompt']!r}: {problem}") from None
        replies.append(acts.Answer(q["question_id"], given, how))
    if not replies:
        raise InputError("none of these questions is open any more; reload the page")
    if act.seen is None and reads.current(desk.store, act.day) is not None:
        raise InputError("the form names no version of the brief (seen); reload the page")
    return done(request, "answers", acts.answer(desk.settings, desk.resources, act, replies), "/questions")
