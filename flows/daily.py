"""The ``daily_brief`` flow: collect → dedup → analyze → write → publish, one task per source or batch.

The flow body only sequences tasks; every decision lives in ``tasks/``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import get_run_context
from prefect.utilities.annotations import opaque

from flows.alerting import alert_safely
from flows.interrupt import STOP, how_stopped, mark_cancelled
from ops.runs import RunResult
from ops.shadow import Shadow, shadow_day, shadow_of
from ops.workspace import Resources, resources_of
from storage.brief import Brief
from tasks import steps
from tasks.nouns import counted
from tasks.settings import Settings, load_settings

T = TypeVar("T")


def unwalked(value: T) -> T:
    """A task argument that Prefect passes without walking its contents (``opaque``), typed as
    the value itself."""
    return opaque(value)  # type: ignore[return-value]


@task(name="collect-source", task_run_name="collect {source_name}", cache_policy=NO_CACHE)
def collect_source_task(ctx: steps.RunContext, source_name: str) -> steps.SourceOutcome:
    return steps.fetch_one(ctx, source_name)


def collect_all(ctx: steps.RunContext) -> list[steps.SourceOutcome]:
    """One collect task per source, all at once; what they collected is appended in the order of
    the sources, and their counts join the run's, once all are done.

    Each task works through its own fork of the context (``fetch_one``), so the context they
    share does not change while they run: Prefect walked it as it handed it to each task, and
    a walk that met a dict growing under it failed the run now and then ("dictionary changed
    size during iteration"). ``unwalked`` also spares that walk's time.
    """
    futures = [collect_source_task.submit(unwalked(ctx), s.name) for s in ctx.settings.sources]
    return steps.absorb(ctx, [f.result() for f in futures])


@task(name="stage", cache_policy=NO_CACHE)
def stage_task(ctx: steps.RunContext, stage: steps.Stage, day: steps.Day) -> str:
    """One stage of ``steps.STAGES`` (named after it): it fills its part of ``day``, says what it did."""
    return stage.run(ctx, day)


def shadow_stage(shadow: Shadow) -> steps.Stage:
    """The day decided again under the ``[policy.shadow]`` candidate, unpublished; never fails the run."""

    def decide(ctx: steps.RunContext, day: steps.Day) -> str:
        decided = shadow_day(ctx, shadow, day.deduped(), day.scores)
        if decided.error:
            get_run_logger().warning(f"shadow: candidate {shadow.version} failed: {decided.error}")
        return decided.line

    return steps.Stage("shadow", decide)


def gate_artifact(ctx: steps.RunContext, day: steps.Day) -> None:
    """What the gate's suites found, as a table in the Prefect UI."""
    create_table_artifact(
        key=f"validation-{ctx.day.isoformat()}",
        table=[
            {
                "suite": r.suite,
                "mode": r.mode,
                "success": r.success,
                "rows": r.rows,
                "failures": "; ".join(f.describe() for f in r.failures) or "-",
                "quarantined": len(r.quarantined),
            }
            for r in day.gates
        ],
        description=f"Great Expectations gates of {ctx.day.isoformat()}",
    )


@task(name="publish", cache_policy=NO_CACHE)
def publish_task(ctx: steps.RunContext, document: Brief) -> steps.Published:
    # an act recorded since the run composed its brief has it composed again, under the day's lock
    published = steps.publish(ctx, document, recompose=lambda: steps.recompose(ctx))
    create_markdown_artifact(
        key=f"brief-{ctx.day.isoformat()}",
        markdown=published.markdown,
        description=f"Brief of {ctx.day.isoformat()}, version {published.version}",
    )
    return published


@task(name="deliver", cache_policy=NO_CACHE)
def deliver_task(ctx: steps.RunContext) -> steps.DeliveryOutcome:
    """Each configured channel gets the day's brief once; a channel that is down never fails the run."""
    outcome = steps.deliver_day(ctx)
    log = get_run_logger()
    for sent in outcome.sent:
        if sent.ok:
            log.info(
                f"delivered {sent.kind} v{sent.version} to "
                f"{sent.channel} ({counted(sent.attempts, 'attempt')})"
            )
        else:
            log.warning(
                f"delivery to {sent.channel} failed after "
                f"{counted(sent.attempts, 'attempt')}: {sent.reason}; "
                f"resend with: brief deliver --date {ctx.day} --channel {sent.channel}"
                f"{ctx.settings.config_option}"
            )
    if outcome.waiting:
        log.info(f"{outcome.waiting}")
    return outcome


@task(name="alerts", cache_policy=NO_CACHE)
def alerts_task(ctx: steps.RunContext) -> list[tuple[str, str]]:
    """The day's alerts (a gate quarantine, a failed delivery, a failing or silent source), each
    sent once; an alert channel that is down never fails the run."""
    outcome = alert_safely(ctx.settings, ctx.resources, ctx.day, get_run_logger().warning, run_id=ctx.run_id)
    return outcome.sent if outcome else []


@task(name="compact", cache_policy=NO_CACHE)
def compact_task(ctx: steps.RunContext) -> tuple[int, int]:
    """Fold the segments of the days the run wrote into one zstd Parquet file per day, which other
    engines read as it is; delete temporary files crashed writers left there over an hour ago.
    Only those days: the work does not grow with the log."""
    days = sorted(ctx.written_days | {ctx.day})
    merged = sum(ctx.store.compact(d).files_before for d in days if ctx.store.needs_compaction(d))
    stale = sum(ctx.store.remove_stale_temporaries(d) for d in days)
    return merged, stale


def current_run_id() -> str:
    """The Prefect flow run's id: every event a run writes carries it (there is always one in a flow)."""
    context = get_run_context()
    flow_run = getattr(context, "flow_run", None)
    if flow_run is None:
        raise RuntimeError("current_run_id() is called outside a flow run; call it from a Prefect flow")
    return str(flow_run.id)


def hook_resources(flow_run) -> tuple[Settings, Resources]:
    """The settings a run was given, for its hooks (they run in its process, in its context while
    it ends); else, a crash seen from outside, its config parsed again. With the resources a hook
    records and decides with (the store, the clock), built once for the hook."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    same = context is not None and context.flow_run is not None and context.flow_run.id == flow_run.id
    given = (context.parameters or {}).get("settings") if same and context is not None else None
    if not isinstance(given, Settings):
        given = load_settings((flow_run.parameters or {}).get("config"))
    return given, resources_of(given, must_exist=False)


def on_daily_failure(flow, flow_run, state) -> None:
    """Record ``run.failed``, leave a keyed Markdown artifact that says what failed and how to rerun,
    and send the day's alerts. A step that failed after this process was told to stop (Ctrl-C,
    SIGTERM: Prefect's task machinery may fail as it unwinds) is the stop's, not a failure."""
    from ops.failure import explain_failure

    if STOP.server_gone:  # a step failed as the server stopped: the server's outcome
        on_daily_crash(flow, flow_run, state)
        return
    if STOP.how is not None:
        on_daily_cancelled(flow, flow_run, state)
        return
    params = flow_run.parameters or {}
    settings, resources = hook_resources(flow_run)
    markdown, day = explain_failure(
        settings, resources, params.get("date_"), str(flow_run.id), state.message or ""
    )
    # keyed by the day the run was for (a scheduled run records it when it starts), so each
    # day's failure has its own artifact history in the UI
    key = f"failed-run-{day.isoformat()}" if day else f"failed-run-unresolved-{flow_run.name}"
    create_markdown_artifact(key=key, markdown=markdown, description="Why this run failed")
    alert_safely(settings, resources, day, get_run_logger().warning, run_id=str(flow_run.id))


def on_daily_crash(flow, flow_run, state) -> None:
    """A crash Prefect saw (a signal, the runner finding the process dead): ``run.crashed`` and an alert.

    A process killed with nobody watching leaves no such hook: ``flows/alerting.py:check`` finds it.
    """
    from ops.failure import record_crash, record_server_gone

    params = flow_run.parameters or {}
    if STOP.server_gone:  # the kept Prefect server stopped under the run: no alert, nobody to tell it
        settings, resources = hook_resources(flow_run)
        record_server_gone(settings, resources, params.get("date_"), str(flow_run.id), STOP.server_gone)
        return
    if how_stopped(state.message or "") is not None:  # Ctrl-C, SIGTERM or the UI: stopped on purpose
        on_daily_cancelled(flow, flow_run, state)
        return
    settings, resources = hook_resources(flow_run)
    day = record_crash(settings, resources, params.get("date_"), str(flow_run.id), state.message or "")
    alert_safely(settings, resources, day, get_run_logger().warning, run_id=str(flow_run.id))


def on_daily_cancelled(flow, flow_run, state) -> None:
    """A run stopped on purpose (Ctrl-C, SIGTERM, a cancellation from the UI): ``run.cancelled``,
    the flow run marked Cancelled, no alert (someone meant it)."""
    from ops.failure import record_cancel

    params = flow_run.parameters or {}
    how = how_stopped(state.message or "") or "prefect-ui"  # Prefect's runner cancelled it
    settings, resources = hook_resources(flow_run)
    record_cancel(
        settings, resources, params.get("date_"), str(flow_run.id), how, STOP.after, state.message or ""
    )
    if not state.is_cancelled():
        mark_cancelled(flow_run.id, f"stopped by {how}")


STEP_LINE = "brief_step"  # a log record with this attribute is a step's line (``brief run`` prints it)


def step_logger() -> Callable[[str], None]:
    """Log a step's line to the flow run's log, marked as one (``STEP_LINE``)."""
    log = get_run_logger()
    return lambda line: log.info(line, extra={STEP_LINE: True})


@flow(
    name="daily-brief",
    log_prints=True,
    on_failure=[on_daily_failure],
    on_crashed=[on_daily_crash],
    on_cancellation=[on_daily_cancelled],
)
def daily_brief(
    date_: str | None = None,
    config: str | None = None,
    after_runs: list[str] | None = None,
    deliver: bool = True,
    settings: Settings | None = None,
) -> RunResult:
    """One day's brief, said as an ``ops.runs.RunResult`` (a frozen dataclass: Prefect persists no
    flow result here, and would pickle it if it did). ``date_`` is YYYY-MM-DD (default: today in the
    configured timezone).

    ``deliver``: send the brief to the ``[[delivery]]`` channels (a backfill turns it off).

    ``after_runs``: flow run ids of earlier dates of a fanned-out backfill (``flows/fanout.py``);
    after collecting and embedding, the run waits for them to end before it decides anything.

    ``settings``: the config already parsed (``brief run``, a backfill); else ``config`` is parsed
    here (a deployment's run, in its worker's process).
    """
    from ops.policy import governed_context

    configured = settings if settings is not None else load_settings(config)
    # the process's resources (the composition root): one store (on S3, one check of the bucket)
    # for the adopted policy and the run, its models and its clock; a backfill's dates share them
    resources = resources_of(configured, must_exist=False)
    clock = resources.clock  # the day is refused before anything is written
    day = steps.refuse_future(steps.resolve_day(date_, configured, clock), configured, clock=clock)
    ctx, policy = governed_context(configured, day, current_run_id(), resources)
    shadow = shadow_of(configured, ctx.settings)  # None without [policy.shadow]
    report = steps.RunReport(ctx, step_logger())
    get_run_logger().info(policy.line)  # in the run's log and the Prefect UI; run.started records it
    report.start()
    collect_stage(ctx, report)
    if after_runs:
        wait_stage(ctx, report, after_runs)
    outcome, document = draft_stage(ctx, report, shadow)
    withheld = steps.withhold_if_unfit(ctx, document, report.sources)
    if withheld is not None:
        steps.record_inputs(ctx, withheld=str(withheld))  # what a backfill finds unchanged next time
        compact_task(unwalked(ctx))
        create_table_artifact(
            key=f"run-report-{ctx.day.isoformat()}", table=report.table(), description=str(withheld)
        )
        with report.step("publish"):
            raise withheld
    published = publish_stage(ctx, report, document, deliver)
    report.finish(outcome, published)
    finish_stage(ctx, report, published)
    return run_result(ctx, report, published, policy.line)


# unwalked, here and below: Prefect passes the value without walking its contents (the context,
# outcomes and documents hold thousands of objects; the walk was about a tenth of a run)


def collect_stage(ctx: steps.RunContext, report: steps.RunReport) -> None:
    """Collect every source; the report keeps their outcomes (what the withholding decision reads)."""
    with report.step("collect"):
        outcomes = collect_all(ctx)
        report.sources = outcomes
        report.say(report.collected())
        for skipped in (o for o in outcomes if o.skipped):
            get_run_logger().info(f"{skipped.source} not fetched: {skipped.skipped}")


def wait_stage(ctx: steps.RunContext, report: steps.RunReport, after_runs: list[str]) -> None:
    """Embed the window's texts, then wait for the earlier dates of a fanned-out backfill to end."""
    from flows.fanout import wait_for_runs

    log = get_run_logger().info
    with report.step("wait"):
        embedded = steps.embed_window(ctx)
        log(
            f"{counted(embedded, 'text')} embedded; waiting for "
            f"{counted(len(after_runs), 'earlier date')} of the backfill"
        )
        wait_for_runs(after_runs, log, poll_s=0.5)
        report.say(f"{counted(embedded, 'text')} embedded, {counted(len(after_runs), 'earlier date')} ended")


def draft_stage(
    ctx: steps.RunContext, report: steps.RunReport, shadow: Shadow | None
) -> tuple[steps.DedupOutcome, Brief]:
    """``steps.STAGES`` in order, each a task (and the shadow policy's decisions after the scores):
    the day's outcome and its gated document, not yet published."""
    stages = list(steps.STAGES)
    if shadow is not None:
        stages.insert([s.name for s in stages].index("score") + 1, shadow_stage(shadow))
    day = steps.Day()
    for stage in stages:
        with report.step(stage.name):
            line = stage_task.with_options(name=stage.name)(unwalked(ctx), stage, unwalked(day))
            report.say(line)
        if stage.name == "score":
            report.off_topic = day.off_topic
            if report.left_out_hint():
                get_run_logger().info(report.left_out_hint())
        elif stage.name == "questions":
            report.asked = day.asked["asked"]
        elif stage.name == "gate":
            gate_artifact(ctx, day)
    return day.deduped(), day.drafted()


def publish_stage(
    ctx: steps.RunContext, report: steps.RunReport, document: Brief, deliver: bool
) -> steps.Published:
    """Publish the gated document as the day's next version; deliver it when asked and configured."""
    with report.step("publish"):
        published = publish_task(unwalked(ctx), unwalked(document))
        report.say(
            f"brief v{published.version}: {counted(published.items, 'item')}"
            + ("" if published.changed else ", unchanged")
        )
    if deliver and ctx.settings.delivery.channels:
        with report.step("deliver"):
            report.delivery = deliver_task(unwalked(ctx))
            report.say(report.delivery.line())
    return published


def finish_stage(ctx: steps.RunContext, report: steps.RunReport, published: steps.Published) -> None:
    """The day's alerts (when configured), what the run read and how it ended (``run.inputs``: a
    backfill finds the day unchanged by it), compaction of the days written, and the run's report."""
    if ctx.settings.alerts:
        with report.step("alerts"):
            sent = alerts_task(unwalked(ctx))
            report.say(f"{counted(len(sent), 'alert')} sent")
    steps.record_inputs(ctx, version=published.version, items=published.items)
    with report.step("compact"):
        merged, stale = compact_task(unwalked(ctx))
        report.say(f"{counted(merged, 'file')} merged, {counted(stale, 'stale temporary file')} removed")
    create_table_artifact(
        key=f"run-report-{ctx.day.isoformat()}", table=report.table(), description=report.summary()
    )


def run_result(
    ctx: steps.RunContext, report: steps.RunReport, published: steps.Published, policy: str
) -> RunResult:
    """What ``daily_brief`` returns: the version published, its files, what was delivered."""
    delivery = report.delivery
    return RunResult(
        day=ctx.day,
        run_id=ctx.run_id,
        version=published.version,
        files=published.files,
        items=published.items,
        changed=published.changed,
        skipped={o.source: o.skipped for o in report.sources if o.skipped},
        delivered=tuple(s.channel for s in delivery.sent if s.ok) if delivery else (),
        delivery_failed=tuple(s.channel for s in delivery.failed) if delivery else (),
        seconds=round(time.perf_counter() - report.started, 2),
        policy=policy,  # which policy the run ran under, as the person running it reads it
        left_out=report.left_out_hint(),  # where an operator reads why stories were left out
        review=report.review_hint(),  # the command that asks the run's questions
    )
