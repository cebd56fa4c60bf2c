"""The kept server's watchdog: ``python -m flows.keptwatch HOME PORT IDLE_SECONDS`` starts the local
Prefect server and stops it once unused for the idle time, or on SIGTERM (``brief serve --stop``),
even while it starts (``flows.keptserver`` starts the watchdog and says the rest)."""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from pathlib import Path

from flows.keptserver import LOG, START_TIMEOUT_S, STATE, USED, recorded, touch
from flows.serve import ServerCancelled, start_local_server


def watch(home: Path, port: int, idle_s: float) -> None:
    """Start the server, then stop it once unused for ``idle_s`` (or on SIGTERM, even while it
    starts: a stop never has to outwait a slow start); forget it on the way out."""
    say = _say
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        server = start_local_server(
            home,
            port,
            timeout_s=START_TIMEOUT_S,
            services=False,
            log_path=home / LOG,
            cancel=stopping,
            started=lambda pid: say(f"starting the server (pid {pid}) on port {port}"),
        )
    except ServerCancelled:
        say("asked to stop while the server started: stopped it")
        _forget(home)
        return
    touch(home)  # unused from now on, not from before its start (which may outlast a short idle time)
    say(f"serving on {server.url} (pid {os.getpid()}); stops after {idle_s:g} s unused")
    try:
        while not stopping.wait(min(max(idle_s / 10, 0.2), 5)):
            if server.process.poll() is not None:
                say(f"the server exited (code {server.process.returncode})")
                return
            try:
                unused = time.time() - (home / USED).stat().st_mtime
            except OSError:
                unused = idle_s + 1
            if unused > idle_s:
                say(f"unused for {unused:.0f} s: stopping")
                return
        say("asked to stop")
    finally:
        server.stop()
        _forget(home)
        say("stopped")


def _forget(home: Path) -> None:
    """Remove the state file if it names this watchdog (a later one may have replaced it)."""
    kept = recorded(home)
    if kept is not None and kept.pid == os.getpid():
        (home / STATE).unlink(missing_ok=True)


def _say(line: str) -> None:
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} brief-server: {line}", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m flows.keptwatch")
    parser.add_argument("home", type=Path)
    parser.add_argument("port", type=int)
    parser.add_argument("idle_seconds", type=float)
    args = parser.parse_args(argv)
    watch(args.home, args.port, args.idle_seconds)


if __name__ == "__main__":
    main()
