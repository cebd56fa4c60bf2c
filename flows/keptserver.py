"""The local Prefect server ``brief`` keeps between commands.

When ``PREFECT_API_URL`` names no server, a command that runs a flow (``brief run``, ``backfill``,
``review``, ``deliver``) reports to a local server that the first such command starts and the next
ones reuse: no start-up of a temporary server per run (7-9 s of a run of the sample). The server
runs in its own session, so a Ctrl-C in the terminal never reaches it, under a small watchdog
process (``python -m flows.keptwatch``) that stops it once nobody has used it for the idle time
(``BRIEF_PREFECT_IDLE_SECONDS``, 900 by default; every command that uses it pushes the deadline).
``BRIEF_PREFECT_KEEP=0`` keeps none: each command lets Prefect start a temporary server, as before.

Under ``PREFECT_HOME`` (Prefect's home, ``~/.prefect`` by default; its database is the one a
temporary server used, so earlier runs stay listed in the UI):

- ``brief-server.json``: the port, the watchdog's pid and the home of the running server, the
  checkout whose command started it, and the checkouts told that they use it;
- ``brief-server.lock``: taken while a command finds or starts the server (two at once share one);
- ``brief-server.used``: its modification time is the last use;
- ``brief-server.log``: the server's and the watchdog's output.

``brief serve --stop`` stops it now, even one still starting after its command was interrupted
(a start in progress is waited for).

One server per Prefect home, not per checkout: the home is Prefect's database, where every run of
the machine's user is listed; a server is only its API. A checkout that finds a server another one
started says so once (which checkout, which home, how to stop it, and that a ``PREFECT_HOME`` of
its own keeps one per checkout).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx

from flows.serve import (
    ServerError,
    free_port,
    health_client,
    healthy,
    wait_healthy,
)

IDLE_ENV = "BRIEF_PREFECT_IDLE_SECONDS"
KEEP_ENV = "BRIEF_PREFECT_KEEP"  # "0": a temporary server per command, as Prefect starts one
DEFAULT_IDLE_S = 900
STATE, LOCK, USED, LOG = "brief-server.json", "brief-server.lock", "brief-server.used", "brief-server.log"
START_TIMEOUT_S = 120.0
STOP_HINT = "brief serve --stop"
CHECKOUT = str(Path(__file__).resolve().parents[1])  # the folder of this copy of the project


@dataclass(frozen=True)
class KeptServer:
    port: int
    pid: int  # the watchdog's: it stops the server when it ends
    home: str
    log: str
    checkout: str = ""  # the checkout whose command started it ("" when the state does not say)
    started: bool = False  # this command started it (else it was running already)
    first_here: bool = False  # the first use by this checkout of a server another checkout started

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def elsewhere_line(self) -> str:
        """What ``brief`` says once in a checkout that uses a server another checkout started."""
        return (
            f"using the local Prefect server at {self.url} that a command of {self.checkout} started "
            f"(Prefect home {self.home}); '{STOP_HINT}' stops it, and PREFECT_HOME set to a folder of "
            "this checkout's own keeps a server for it alone"
        )

    def line(self, idle_s: float) -> str:
        """What ``brief`` says once, when it starts the server."""
        return (
            f"a local Prefect server is kept for later commands at {self.url} (stops after "
            f"{idle_s / 60:g} min unused; '{STOP_HINT}' stops it now; its log: {self.log})"
        )


def prefect_home() -> Path:
    return Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect")


def idle_seconds() -> float:
    text = os.environ.get(IDLE_ENV, "")
    try:
        return float(text) if text else DEFAULT_IDLE_S
    except ValueError:
        raise ServerError(f"{IDLE_ENV}={text!r} is not a number of seconds") from None


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[None]:
    home.mkdir(parents=True, exist_ok=True)
    with open(home / LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def recorded(home: Path) -> KeptServer | None:
    """The server the state file names, whether or not it still answers."""
    try:
        data = json.loads((home / STATE).read_text())
        checkout = str(data.get("checkout") or "")
        return KeptServer(int(data["port"]), int(data["pid"]), str(data["home"]), str(data["log"]), checkout)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def answers(server: KeptServer, client: httpx.Client | None = None) -> bool:
    """The watchdog is alive and the server says it is healthy (``client``: a poll's own, reused)."""
    try:
        os.kill(server.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # another user's process took the pid
    if client is not None:
        return healthy(client, server.api_url)
    with health_client(timeout=3) as once:
        return healthy(once, server.api_url)


def touch(home: Path) -> None:
    """A use of the server: its idle deadline starts again."""
    (home / USED).touch()


def kept_server(home: Path | None = None, timeout_s: float = START_TIMEOUT_S) -> KeptServer:
    """The kept server, started when none answers (the lock makes two commands share one).
    A ServerError when it cannot be started."""
    home = home or prefect_home()
    idle_s = idle_seconds()
    with _locked(home):
        running = recorded(home)
        if running is not None and (answers(running) or _comes_up(running, timeout_s)):
            touch(home)
            return _told_here(home, running)
        (home / STATE).unlink(missing_ok=True)
        touch(home)
        return _start(home, idle_s, timeout_s)


def _record(home: Path, server: KeptServer) -> None:
    """The kept server's state file: the next command finds it there."""
    state = {k: v for k, v in asdict(server).items() if k not in ("started", "first_here")}
    (home / STATE).write_text(json.dumps(state))


def _comes_up(server: KeptServer, timeout_s: float) -> bool:
    """Whether a recorded server that does not answer yet is one still starting (its watchdog alive,
    as after a Ctrl-C during its start) that answers within ``timeout_s``."""
    if not _is_watchdog(server.pid):
        return False
    deadline = time.monotonic() + timeout_s
    with health_client() as client:
        while time.monotonic() < deadline:
            try:
                os.kill(server.pid, 0)
            except (ProcessLookupError, PermissionError):
                return False
            if answers(server, client):
                return True
            time.sleep(0.3)
    return False


def _told_here(home: Path, server: KeptServer) -> KeptServer:
    """``server``, marked ``first_here`` when another checkout started it and this one has not been
    told yet (the state file keeps who was told; called under the lock)."""
    if not server.checkout or server.checkout == CHECKOUT:
        return server
    try:
        state = json.loads((home / STATE).read_text())
        told = list(state.get("told") or [])
        if CHECKOUT in told:
            return server
        (home / STATE).write_text(json.dumps({**state, "told": [*told, CHECKOUT]}))
    except (OSError, ValueError):
        return server
    return replace(server, first_here=True)


def _start(home: Path, idle_s: float, timeout_s: float) -> KeptServer:
    port = free_port()
    log = home / LOG
    with open(log, "ab") as out:
        watchdog = subprocess.Popen(
            [sys.executable, "-m", "flows.keptwatch", str(home), str(port), str(idle_s)],
            cwd=Path(__file__).resolve().parents[1],
            env={k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a terminal's Ctrl-C goes to its foreground group, not here
        )
    server = KeptServer(port, watchdog.pid, str(home), str(log), CHECKOUT, started=True)
    exited = f"the local Prefect server exited at start (code {{code}}); see {log}"
    try:
        if wait_healthy(watchdog, server.api_url, timeout_s, 0.3, exited):
            _record(home, server)
            return server
    except KeyboardInterrupt:
        # Ctrl-C while it starts: it is kept all the same (it stops by itself when unused), so the
        # next command uses it and 'brief serve --stop' finds it, rather than a second one starting
        _record(home, server)
        raise
    _stop_process(watchdog.pid)
    raise ServerError(f"the local Prefect server did not answer within {timeout_s:.0f}s; see {log}")


@contextlib.contextmanager
def in_use(home: Path, idle_s: float) -> Iterator[None]:
    """While a command uses the server (a backfill may outlast the idle time), it stays: its
    last use is pushed every third of the idle time, and once more at the end."""
    done = threading.Event()
    touch(home)

    def keep() -> None:
        while not done.wait(max(idle_s / 3, 0.5)):
            with contextlib.suppress(OSError):
                touch(home)

    thread = threading.Thread(target=keep, name="prefect-server-in-use", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        with contextlib.suppress(OSError):
            touch(home)


def stop_kept(home: Path | None = None, timeout_s: float = 30) -> KeptServer | None:
    """Stop the kept server now; the one stopped, or None when none ran."""
    home = home or prefect_home()
    with _locked(home):
        running = recorded(home)
        if running is not None and not _is_watchdog(running.pid):
            running = None  # a state file left by a watchdog gone (a restart): its pid is another's
        if running is not None:
            _stop_process(running.pid, timeout_s)
        (home / STATE).unlink(missing_ok=True)
        return running


def _is_watchdog(pid: int) -> bool:
    """Whether ``pid`` is a kept server's watchdog (not a program the system gave the pid since);
    without ``/proc`` (not Linux) a live pid is taken for it."""
    if not Path("/proc/self").exists():
        return True
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"flows.keptwatch" in command or b"flows.keptserver" in command  # or before its rename


def _stop_process(pid: int, timeout_s: float = 30) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == pid:  # our own child: reap it
                return
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


WATCH_EVERY_S = 0.5  # how often a command looks whether the kept server it uses is still there


@contextlib.contextmanager
def watched(server: KeptServer, lost: Callable[[str], None] | None) -> Iterator[None]:
    """While a command uses the kept server: ``lost(url)`` is called, once, if its watchdog ends
    (``brief serve --stop`` in another shell; the watchdog stops the server first)."""
    if lost is None:
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.wait(WATCH_EVERY_S):
            if not _is_watchdog(server.pid):
                lost(server.url)
                return

    thread = threading.Thread(target=watch, name="prefect-server-watch", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()


@contextlib.contextmanager
def prefect_api(say: Callable[[str], None], lost: Callable[[str], None] | None = None) -> Iterator[list[str]]:
    """While a command runs flows: Prefect's API, as configured when it names a server, else the
    kept server (``say`` tells, once, that it was started and how to stop it; ``lost`` is called
    when it stops under the command), else, when none can be started, a temporary server of
    Prefect's own, as before. Yields what the command's log should say of it."""
    from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings

    if get_current_settings().api.url:
        yield []
        return
    if os.environ.get(KEEP_ENV, "1") == "0":
        yield [f"{KEEP_ENV}=0: this run starts a temporary Prefect server"]
        return
    home = prefect_home()
    try:
        idle_s = idle_seconds()
        server: KeptServer | None = kept_server(home)
    except (ServerError, OSError) as exc:
        server, why = None, f"{exc}"
    if server is None:
        yield [f"no local Prefect server could be kept ({why}); this run starts a temporary one"]
        return
    if server.started:
        say(server.line(idle_s))
    elif server.first_here:
        say(server.elsewhere_line())
    before = os.environ.get("PREFECT_API_URL")
    os.environ["PREFECT_API_URL"] = server.api_url  # for processes the command starts
    try:
        with temporary_settings({PREFECT_API_URL: server.api_url}), in_use(home, idle_s):
            how = "started by this command" if server.started else "kept from an earlier command"
            how += f" of {server.checkout}" if server.checkout and server.checkout != CHECKOUT else ""
            try:
                with watched(server, lost):
                    yield [f"Prefect: the local server at {server.url}, {how} (its log: {server.log})"]
            finally:
                if _is_watchdog(server.pid):  # a server gone has nothing to be sent
                    _drain()  # now, to this server: at exit Prefect would no longer know where it is
    finally:
        if before is None:
            os.environ.pop("PREFECT_API_URL", None)
        else:
            os.environ["PREFECT_API_URL"] = before


def _drain(timeout_s: float = 30) -> None:
    """Send what Prefect's log and event workers still hold."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    EventsWorker.drain_all(timeout=timeout_s)
    APILogWorker.drain_all(timeout=timeout_s)
