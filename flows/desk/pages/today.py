"""Today: the day's brief as readers have it (or an earlier version), and the acts on its items."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import reads
from flows.desk.web import ActOf, Day, DeskOf, Form, done, page
from ops import acts
from tasks import render
from tasks.steps.publish import labels_for

router = APIRouter()


@router.get("/today")
def today(request: Request, desk: DeskOf, day: Day) -> Response:
    wanted = request.query_params.get("version")
    version = int(wanted) if wanted and wanted.isdigit() else None
    doc = reads.document(desk.store, day, version)
    return page(
        request,
        "today.html.j2",
        day=day.isoformat(),
        brief=render.view(doc, labels_for(desk.settings)),
        items=[(i.story_id, i.title) for i in doc.items],
        parts={i.story_id: i.citations for i in doc.items},
        current=version is None,
        marks=("off-topic", "related", "core", "lead"),
        done=request.query_params.get("done"),
        questions=len(reads.open_questions(desk.store, day)),
    )


@router.post("/today/mark")
def mark(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    outcome = acts.mark(desk.settings, act, {form.get("story", ""): form.get("mark", "")})
    return done(request, "mark", outcome, "/today")


@router.post("/today/correct")
def correct(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    fields = {form.get("field", ""): form.get("value", "")}
    outcome = acts.correct(desk.settings, act, form.get("story", ""), fields, form.get("note", ""))
    return done(request, "correction", outcome, "/today")


@router.post("/today/retract")
def retract(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    outcome = acts.retract(desk.settings, act, form.get("story", ""), form.get("note", ""))
    return done(request, "retraction", outcome, "/today")


@router.post("/today/same")
def same(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    outcome = acts.same_story(desk.settings, act, [form.get("story", ""), form.get("other", "")])
    return done(request, "same story", outcome, "/today")


@router.post("/today/split")
def split(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    apart = request.state.fields.get("apart", [])  # every ticked article, not the last one only
    outcome = acts.two_stories(desk.settings, act, form.get("story", ""), apart)
    return done(request, "two stories", outcome, "/today")
