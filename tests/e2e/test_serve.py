"""`brief serve`: one command gives a local server with the scheduled deployments; Ctrl-C stops it all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest import REPO


def test_serve_starts_schedules_and_stops_cleanly(tmp_path: Path) -> None:
    config = tmp_path / "brief.toml"
    config.write_text(
        'timezone = "Europe/Amsterdam"\nschedule = "30 6 * * 1-5"\n[storage]\nroot = "store"\n'
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
    )
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "home")}
    env.pop("PREFECT_API_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "serve", "--config", str(config)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    ui = None
    lines = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("Prefect UI: "):
            ui = line.split()[2]
        if "serving deployments" in line:
            break
    assert ui, "".join(lines)
    try:
        deployments = []
        for _ in range(60):
            deployments = httpx.post(f"{ui}/api/deployments/filter", json={}, timeout=10).json()
            if {d["name"] for d in deployments} >= {"daily-brief", "backfill"}:
                break
            time.sleep(1)
        daily = next(d for d in deployments if d["name"] == "daily-brief")
        schedule = daily["schedules"][0]["schedule"]
        assert (schedule["cron"], schedule["timezone"]) == ("30 6 * * 1-5", "Europe/Amsterdam")
        assert httpx.get(ui, timeout=10).status_code == 200  # the UI is served
    finally:
        proc.send_signal(signal.SIGINT)
        output, _ = proc.communicate(timeout=60)
    assert "local Prefect server stopped" in output
    assert proc.returncode in (0, 130, -signal.SIGINT)
    try:
        httpx.get(f"{ui}/api/health", timeout=3)
        raise AssertionError("the server still answers after Ctrl-C")
    except httpx.HTTPError:
        pass
