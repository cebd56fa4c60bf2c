"""Today: the day's brief as readers have it (or an earlier version), and the acts on its items."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk.web import ActOf, Day, Desk, DeskOf, Form, banner, done, page, parse_version
from ops import acts, reads
from storage.brief import Brief, Item
from storage.errors import InputError
from tasks import render

router = APIRouter()
CANDIDATES = 5  # the items offered as "same story as" under each item: the page grows linearly


@router.get("/today")
def today(request: Request, desk: DeskOf, day: Day) -> Response:
    version = parse_version(request.query_params.get("version"))
    try:
        doc = reads.document(desk.store, day, version)
    except InputError:
        held = reads.withheld(desk.store, day) if version is None else None
        if held is None:
            raise
        return page(request, "withheld.html.j2", day=day.isoformat(), held=held)  # the day has no brief
    if version is not None and reads.document(desk.store, day).version == version:
        version = None  # the current version asked for by its number is the current page
    said = banner(request)
    return page(
        request,
        "today.html.j2",
        day=day.isoformat(),
        brief=render.view(doc, desk.settings.category_labels()),
        candidates=likely_same(doc.items),
        parts=reads.story_articles(desk.store, day, {i.story_id for i in doc.items})
        if version is None
        else {},
        leads={i.story_id for i in doc.items if i.lead},
        retracted_ids=[r.story_id for r in doc.retracted or ()],
        retractions=reads.standing_retractions(desk.store, day) if version is None else {},
        opened=request.query_params.get("open"),
        standing=standing_of(desk, day) if version is None else None,
        current=version is None,
        marks=("off-topic", "related", "core", "lead"),
        done=said,
        done_at=acted_on(request.query_params.get("open"), doc) if said else None,
        questions=len(reads.open_questions(desk.store, day)),
        left_out=doc.left_out.off_topic if version is None else 0,
        pending=acts.pending_update(desk.settings, desk.resources, day) if version is None else None,
    )


@router.get("/today/left-out")
def left_out(request: Request, desk: DeskOf, day: Day) -> Response:
    """The day's stories left out of the brief as off the topic, each with the marks that bring it
    back (the same act as an item's marks on Today)."""
    doc = reads.document(desk.store, day)
    shown = {i.story_id for i in doc.items} | {r.story_id for r in doc.retracted or ()}
    return page(
        request,
        "left_out.html.j2",
        day=day.isoformat(),
        seen=doc.version,
        topic=doc.topic,
        stories=reads.left_out(desk.store, day, shown),
        marks=("core", "related", "lead"),
        done=banner(request),
    )


@router.post("/today/mark")
def mark(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    outcome = acts.mark(desk.settings, desk.resources, act, {form.get("story", ""): form.get("mark", "")})
    return done(request, "mark", outcome, "/today")


@router.post("/today/correct")
def correct(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    fields = {form.get("field", ""): form.get("value", "")}
    outcome = acts.correct(
        desk.settings, desk.resources, act, form.get("story", ""), fields, form.get("note", "")
    )
    return done(request, "correction", outcome, "/today")


@router.post("/today/retract")
def retract(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    if form.get("sure") != "1":  # the page's "yes" tick, asked of every post, not only by the browser
        raise InputError(
            'tick "yes" to retract: readers get a new version without the item, its note in its place'
        )
    outcome = acts.retract(desk.settings, desk.resources, act, form.get("story", ""), form.get("note", ""))
    return done(request, "retraction", outcome, "/today")


@router.post("/today/restore")
def restore(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    """Undo a retraction: the item comes back in the next version."""
    story, undoes = form.get("story", ""), form.get("retraction") or None  # the retraction the page showed
    outcome = acts.restore(desk.settings, desk.resources, act, story, form.get("note", ""), retraction=undoes)
    return done(request, "restored", outcome, "/today")


@router.post("/today/same")
def same(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    other = form.get("other_id", "").strip() or form.get("other", "")  # a story id typed wins
    outcome = acts.same_story(desk.settings, desk.resources, act, [form.get("story", ""), other])
    return done(request, "same", outcome, "/today")


@router.post("/today/split")
def split(request: Request, desk: DeskOf, act: ActOf, form: Form) -> Response:
    apart = request.state.fields.get("apart", [])  # every ticked article, not the last one only
    outcome = acts.two_stories(desk.settings, desk.resources, act, form.get("story", ""), apart)
    return done(request, "split", outcome, "/today")


def acted_on(story: str | None, doc: Brief) -> str | None:
    """The item an act's answer returns to (``open``), when the page has it: the act's line goes at
    the top of that item, in the flow, rather than over the item as a sticky banner would lie."""
    shown = {i.story_id for i in doc.items} | {r.story_id for r in doc.retracted or ()}
    return story if story in shown else None


def likely_same(items: Sequence[Item]) -> dict[str, list[tuple[str, str]]]:
    """For each item, the ``CANDIDATES`` other items most likely to be the same story: most title
    words in common, then the same category, then nearest in the brief."""

    def words(title: str) -> set[str]:
        return {w for w in re.findall(r"\w+", title.lower()) if len(w) > 3 or not w.isascii()}

    said = [words(i.title) for i in items]
    out = {}
    for k, item in enumerate(items):
        ranked = sorted(
            (j for j in range(len(items)) if j != k),
            key=lambda j: (
                -len(said[k] & said[j]),
                items[j].category != item.category,
                abs(j - k),
            ),
        )
        out[item.story_id] = [(items[j].story_id, items[j].title) for j in ranked[:CANDIDATES]]
    return out


def standing_of(desk: Desk, day: date) -> dict:
    """Where the day's brief stands with its readers: held, approved or released at its deadline,
    the versions they have."""
    state = reads.delivery_state(desk.store, day)
    readers = {c.name for c in desk.settings.delivery.readers}
    sent = sorted({v for (c, v, k) in state.delivered if c in readers and k != "review"})
    return {
        "held": state.holding,
        "approved": state.approved,
        "deadline": state.deadline_release,
        "sent": sent[-1] if sent else None,
        "channels": bool(desk.settings.delivery.channels),
    }
