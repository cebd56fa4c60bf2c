"""Story, search, sources and runs: what the log says, looked up."""

from __future__ import annotations

import time
from datetime import timedelta

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import chart
from flows.desk.prefect_ui import prefect_ui_url
from flows.desk.web import DeskOf, End, page

# every page's module imported with the desk, not on a page's first load
from ops import reads
from ops import source_health as health
from ops.recent_runs import WINDOW_DAYS, recent_runs
from ops.search import search
from ops.timeline import story_timeline
from storage.errors import InputError
from tasks.dates import FIRST_DAY, parse_date

router = APIRouter()


@router.get("/story")
def story(request: Request, desk: DeskOf) -> Response:
    story_id = request.query_params.get("id", "")
    if not story_id:
        raise InputError("name a story: /story?id=…; open one from Today or from Search")
    found = story_timeline(desk.store, story_id)
    if found is None:
        raise InputError(f"no story {story_id!r} in the log; open one from Today or from Search")
    return page(request, "story.html.j2", t=found)


@router.get("/search")
def find(request: Request, desk: DeskOf) -> Response:
    q = request.query_params.get("q", "").strip()
    latest = reads.latest_day(desk.store) or desk.today()
    end = parse_date(request.query_params.get("end") or None, "end") or latest
    start = parse_date(request.query_params.get("start") or None, "start") or end - timedelta(days=30)
    t0 = time.perf_counter()
    results = search(desk.store, q, start, end) if q else None
    ms = (time.perf_counter() - t0) * 1000
    return page(
        request, "search.html.j2", q=q, start=start.isoformat(), end=end.isoformat(), results=results, ms=ms
    )


@router.get("/sources")
def sources(request: Request, desk: DeskOf, end: End) -> Response:
    latest = reads.latest_day(desk.store) or desk.today()
    window = timedelta(days=health.WINDOW_DAYS)
    return page(
        request,
        "sources.html.j2",
        end=end.isoformat(),
        earlier=(end - window).isoformat() if end - window >= FIRST_DAY else None,
        later=min(end + window, latest).isoformat() if end < latest else None,
        window=health.WINDOW_DAYS,
        sources=health.source_health(desk.store, desk.settings, end),
        bars=chart.bars,
        chart_w=chart.CHART_W,
        chart_h=chart.CHART_H,
        axis_h=chart.AXIS_H,
        ticks=chart.axis(end),
        bar_w=chart.BAR_W,
    )


@router.get("/runs")
def runs(request: Request, desk: DeskOf, end: End) -> Response:
    ui = desk.ui_url or prefect_ui_url()  # read when shown, as Prefect reads it (flows/desk/prefect_ui.py)
    return page(
        request,
        "runs.html.j2",
        end=end.isoformat(),
        earlier=(end - timedelta(days=WINDOW_DAYS)).isoformat()
        if end - timedelta(days=WINDOW_DAYS) >= FIRST_DAY
        else None,
        window=WINDOW_DAYS,
        runs=recent_runs(desk.store, end, ui),
        ui_url=ui,
    )
