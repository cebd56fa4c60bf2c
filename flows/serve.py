"""``brief serve``: a working local stack in one command.

It starts a Prefect server on 127.0.0.1 when ``PREFECT_API_URL`` names none (the UI comes
with it), serves the ``daily-brief`` deployment on the configured cron schedule and
timezone, the ``backfill`` deployment and, when briefs are held until a time or alerts are
configured, ``deliver-held`` every five minutes (held briefs, crashed runs, a late brief), and
says where the UI is. It checks once for crashed runs and alerts owed as it starts. Ctrl-C
stops what it started: the runner, then the server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from storage.errors import BriefError, InputError

if TYPE_CHECKING:
    from ops.workspace import Resources
    from tasks.settings import Settings


class ServerError(BriefError):
    """The local Prefect server could not be started."""


class ServerCancelled(ServerError):
    """The start of a local Prefect server was given up on request (its process stopped)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalServer:
    process: subprocess.Popen[bytes]
    url: str
    log_path: Path

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def health_client(timeout: float = 2) -> httpx.Client:
    """One client for the polls of a server's health: ``httpx.get`` makes a client per call, and
    each loads the system's certificates again (about 30 ms of a core) for a plain-HTTP poll."""
    return httpx.Client(timeout=timeout)


def healthy(client: httpx.Client, api_url: str) -> bool:
    """Whether the Prefect API at ``api_url`` answers that it is healthy."""
    try:
        return client.get(f"{api_url}/health").status_code == 200
    except httpx.HTTPError:
        return False


def wait_healthy(
    process: subprocess.Popen,
    api_url: str,
    timeout_s: float,
    every: float,
    exited: str,
    cancel: threading.Event | None = None,
) -> bool:
    """Poll the API at ``api_url`` until it is healthy (True), or ``timeout_s`` passes or
    ``cancel`` is set (False); ``exited``: the error when ``process`` ends first (its exit code
    is added)."""
    deadline = time.monotonic() + timeout_s
    stop = cancel or threading.Event()  # one never set: a plain pause between polls
    with health_client() as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise ServerError(exited.format(code=process.returncode))
            if healthy(client, api_url):
                return True
            if stop.wait(every):
                return False
    return False


def start_local_server(
    home: Path,
    port: int | None = None,
    timeout_s: float = 120,
    services: bool = True,
    log_path: Path | None = None,
    cancel: threading.Event | None = None,
    started: Callable[[int], None] | None = None,
) -> LocalServer:
    """``prefect server start`` on 127.0.0.1 with its own PREFECT_HOME; returns once it answers.

    Without ``services`` it runs only the API and the UI (no scheduler: flow runs are created
    by hand or by ``run_deployment``, and workers still pick them up). ``started`` is told the
    server process's pid as soon as it exists; once ``cancel`` is set the start is given up: the
    process is stopped and a ServerCancelled raised.
    """
    port = port or free_port()
    home.mkdir(parents=True, exist_ok=True)
    log_path = log_path or home / "server.log"
    env = {
        **os.environ,
        "PREFECT_HOME": str(home),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_API_HOST": "127.0.0.1",
        "PREFECT_SERVER_API_PORT": str(port),
    }
    env.pop("PREFECT_API_URL", None)
    prefect = Path(sys.executable).parent / "prefect"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)]
            + ([] if services else ["--no-services"]),
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = LocalServer(process, f"http://127.0.0.1:{port}", log_path)
    if started is not None:
        started(process.pid)
    exited = f"the Prefect server exited at start (code {{code}}); see {log_path}"
    if wait_healthy(process, server.api_url, timeout_s, 0.5, exited, cancel):
        return server
    server.stop()
    if cancel is not None and cancel.is_set():
        raise ServerCancelled("asked to stop while the Prefect server was starting")
    raise ServerError(f"the Prefect server did not answer within {timeout_s:.0f}s; see {log_path}")


def deployments(config_path: str, settings: Settings | None = None):
    """The deployments ``brief serve`` runs, scheduled in the configured timezone (``settings``: the
    config already parsed). Each of their runs is given the config's path and parses it in its own
    process."""
    from prefect.schedules import Cron

    from flows.backfill import backfill
    from flows.daily import daily_brief
    from tasks.settings import load_settings

    settings = settings or load_settings(config_path)
    held = []
    delivery = settings.delivery
    coalesced = delivery.update_after > 0 and any(c.updates for c in delivery.readers)
    if (delivery.hold and delivery.hold_until) or coalesced or settings.alerts:
        from flows.deliver import deliver_held

        held = [
            deliver_held.to_deployment(
                name="deliver-held",
                schedules=[Cron(HELD_CRON, timezone=settings.timezone)],
                parameters={"config": config_path},
                description="Held briefs nobody approved, delivered at their deadline; updates whose "
                "[delivery] update_after window closed; crashed runs, "
                f"a brief missing at {settings.alerting.late_after} and alerts still owed",
            )
        ]
    return [
        daily_brief.to_deployment(
            name="daily-brief",
            schedules=[Cron(settings.schedule, timezone=settings.timezone)],
            parameters={"config": config_path},
            description=f"The daily brief, {settings.schedule} ({settings.timezone})",
        ),
        backfill.to_deployment(
            name="backfill",
            parameters={"config": config_path},
            description="Briefs for a range of past dates",
        ),
        *held,
    ]


HELD_CRON = "*/5 * * * *"  # how often held briefs, crashed runs and a late brief are checked


def check_once(
    config_path: str,
    say: Callable[[str], None],
    settings: Settings | None = None,
    resources: Resources | None = None,
) -> None:
    """At start: a run that died while nothing watched (the machine restarted) is recorded crashed
    and alerted, and alerts still owed are sent, before the schedules take over."""
    from flows.alerting import check
    from ops.workspace import resources_of
    from tasks.settings import load_settings

    try:
        settings = settings or load_settings(config_path)
        outcome = check(settings, resources or resources_of(settings, must_exist=False), say=say)
    except Exception as exc:  # the deliver-held deployment checks again in five minutes
        say(f"the alert check did not run ({type(exc).__name__}: {exc}); serving anyway")
        return
    for cause, channel in outcome.sent:
        say(f"alert {cause} sent to {channel}")


@dataclass
class DeskThread:
    """The editor's desk served from a thread of this process (``brief serve``)."""

    server: Any  # uvicorn.Server
    thread: threading.Thread
    url: str

    def stop(self) -> None:
        """Stop as ``brief desk`` does on Ctrl-C: the acts under way are waited for, however long
        (a Ctrl-C meanwhile stops at once), a page still being made gets a second."""
        self.server.stop()
        try:
            while self.thread.is_alive():
                self.thread.join(timeout=0.1)
        except KeyboardInterrupt:
            self.server.force_exit = True
            self.thread.join(timeout=5)


def start_desk(
    config_path: str,
    host: str,
    port: int,
    timeout_s: float = 30,
    settings: Settings | None = None,
    resources: Resources | None = None,
) -> DeskThread:
    """The desk of ``config_path`` on ``host:port`` in a thread; returns once it listens. A port
    that cannot be had is a ServerError (one line)."""
    from flows.desk.app import bind, create_app
    from flows.desk.server import desk_server
    from tasks.settings import load_settings

    settings = settings or load_settings(config_path)
    app = create_app(settings, host, resources=resources)
    listening = bind(host, port, "--desk-port")  # a taken port: one line, before anything is announced
    server = desk_server(app, settings)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listening]}, name="desk", daemon=True)
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    if not server.started:
        server.should_exit = True
        raise ServerError(f"the desk did not start on {host}:{port} within {timeout_s:.0f}s")
    return DeskThread(server, thread, f"http://{host}:{port}/")


def serve(
    config_path: str,
    home: Path,
    say: Callable[[str], None],
    port: int | None = None,
    desk: tuple[str, int] | None = None,
    settings: Settings | None = None,
) -> None:
    """Run until interrupted; everything this started is stopped on the way out. ``desk``: the
    address the editor's desk listens on beside the scheduler (None: no desk). ``settings``: the
    config already parsed (``brief serve``), else it is parsed here, once.

    Prefect reads its settings when first imported, so nothing here imports it before
    PREFECT_API_URL points at the server.
    """
    from ops.workspace import resources_of
    from tasks.settings import load_settings

    settings = settings or load_settings(config_path)
    resources = resources_of(settings, must_exist=False)  # the check's and the desk's, built once
    if desk is not None:  # a desk that must not start (no people for a shared address) starts nothing
        from flows.desk.access import access_for

        access_for(settings, desk[0], "")
    server = None
    running_desk = None
    if not os.environ.get("PREFECT_API_URL"):
        say("starting a local Prefect server …")
        server = start_local_server(home, port)
        os.environ["PREFECT_API_URL"] = server.api_url
        say(f"Prefect UI: {server.url}  (server log: {server.log_path})")
    else:
        say(f"using the Prefect server at {os.environ['PREFECT_API_URL']}")
    try:
        from prefect import serve as prefect_serve

        check_once(config_path, say, settings, resources)
        if desk is not None:
            try:
                running_desk = start_desk(config_path, *desk, settings=settings, resources=resources)
                say(f"the editor's desk: {running_desk.url}")
            except (
                ServerError,
                InputError,
            ) as exc:  # the schedules matter more than the desk: they still run
                say(f"{exc}; serving without it")
        runner_deployments = deployments(config_path, settings)
        names = ", ".join(d.name for d in runner_deployments)
        say(f"serving deployments: {names} (daily-brief on its schedule); Ctrl-C stops")
        prefect_serve(*runner_deployments, print_starting_message=False)
    except KeyboardInterrupt:
        say("stopping …")
    finally:
        if running_desk is not None:
            running_desk.stop()
            say("the desk stopped")
        if server is not None:
            server.stop()
            os.environ.pop("PREFECT_API_URL", None)
            say("local Prefect server stopped")
