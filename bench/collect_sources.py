"""Collecting many sources at once: 14, 50, 100 and 200 snapshot files served over local HTTP.

    python bench/collect_sources.py [--data ../shared/data] [--counts 14,50,100,200] [--hosts 8]

The files are distinct snapshots of ``aiweb/feeds/`` (the AI world's 14 feeds, about 400 days of
them), read where they are, spread evenly over the folder's sorted list. A server process
serves them from ``--hosts`` loopback addresses (127.0.0.2, 127.0.0.3, …), source k from
address k mod hosts; every tenth file is served a second time from the next address, as a
source of its own (a mirror), so the content-hash dedup of kept bodies is exercised: its body
is kept once. Each count is one collection (``tasks.steps.collect_sources``, what the flow's
collect tasks do, without Prefect) into a new store, in a process of its own, under the default
``[collect]`` limits (2 fetches of one host, 16 in all); the largest count is also collected one
fetch at a time, for comparison. Prints wall time, cost per source, events, bodies kept and the
process's peak RSS (and its RSS before the collection). Target: 200 sources in at most 5 s on 2
cores, at a flat cost per source.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MIRROR_EVERY = 10  # every tenth file is also served from a second address
TARGET_S, TARGET_N = 5.0, 200


def snapshots(aiweb: Path, n: int) -> list[Path]:
    """``n`` distinct snapshot files spread evenly over the folder's sorted list."""
    files = sorted((aiweb / "feeds").glob("*/*.xml"))
    if n > len(files):
        raise SystemExit(f"only {len(files)} snapshot files under {aiweb / 'feeds'}, {n} wanted")
    return [files[k * len(files) // n] for k in range(n)]


def routes(files: list[Path], hosts: int) -> list[tuple[str, str, Path]]:
    """(source name, host, file) of each source: the files, then their mirrors."""
    out = [(f"s{k:03d}", f"127.0.0.{2 + k % hosts}", f) for k, f in enumerate(files)]
    mirrors = [
        (f"m{k:03d}", f"127.0.0.{2 + (k + 1) % hosts}", f)
        for k, f in enumerate(files)
        if k % MIRROR_EVERY == 0
    ]
    return out + mirrors


def serve(table: str) -> None:
    """The server process: one threading server per address, ``/NAME.xml`` -> that file's bytes."""
    plan = json.loads(Path(table).read_text())
    bodies = {(host, f"/{name}.xml"): Path(path).read_bytes() for name, host, path in plan}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            body = bodies.get((self.server.server_address[0], self.path))
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    ports = {}
    for host in sorted({host for _, host, _ in plan}):
        httpd = ThreadingHTTPServer((host, 0), Handler)
        httpd.daemon_threads = True
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        ports[host] = httpd.server_address[1]
    print(json.dumps(ports), flush=True)
    sys.stdin.read()  # until the bench closes our stdin


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def collect(table: str, ports: str, root: str, per_host: int, max_fetches: int) -> None:
    """One collection of every source of the table into a new store; prints its figures as JSON."""
    from storage.store import ParquetEventStore
    from tasks import steps
    from tasks.embed import HashingEmbedder
    from tasks.settings import parse_settings
    from tasks.steps.context import Models

    plan, where = json.loads(Path(table).read_text()), json.loads(ports)
    settings = parse_settings(
        {
            "storage": {"root": root},
            "sources": [{"name": n, "url": f"http://{h}:{where[h]}/{n}.xml"} for n, h, _ in plan],
            "collect": {"per_host": per_host, "max_fetches": max_fetches},
        }
    )
    day = steps.today(settings)  # live feeds (no {date} in their URL) are fetched for today only
    store = ParquetEventStore(root)
    resources = steps.Resources(store, Models(HashingEmbedder()))
    ctx = steps.open_run(resources, settings, day, "bench-collect")
    before = rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    outcomes = steps.collect_sources(ctx)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "wall": wall,
                "cpu": cpu,
                "rss_before": before,
                "rss_peak": peak,
                "events": sum(o.new_events for o in outcomes),
                "items": sum(o.items for o in outcomes),
                "failed": sum(o.error is not None for o in outcomes),
                "bodies": len(store.tree.raw.of_day(day)),
            }
        )
    )


def run_one(table: Path, ports: dict, folder: Path, name: str, per_host: int, max_fetches: int) -> dict:
    args = [sys.executable, __file__, "--collect", str(table), json.dumps(ports), str(folder / name)]
    args += [str(per_host), str(max_fetches)]
    done = subprocess.run(
        args, capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    if done.returncode:
        raise SystemExit(f"the collection of {name} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--counts", default="14,50,100,200")
    parser.add_argument("--hosts", type=int, default=8)
    args = parser.parse_args()
    aiweb = args.data / "aiweb"
    if not (aiweb / "feeds").is_dir():
        raise SystemExit(f"no snapshots at {aiweb / 'feeds'} (give --data)")
    counts = [int(c) for c in args.counts.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-collect-") as tmp:
        folder = Path(tmp)
        plans = {n: routes(snapshots(aiweb, n), args.hosts) for n in counts}
        every = folder / "all.json"  # the server serves every plan's sources (names are per plan)
        served = [(f"n{n}-{name}", host, str(path)) for n, plan in plans.items() for name, host, path in plan]
        every.write_text(json.dumps(served))
        server = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(every)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            ports = json.loads(server.stdout.readline())
            rows = []
            runs = [(n, 2, 16) for n in counts] + [(max(counts), 1, 1)]
            for n, per_host, max_fetches in runs:
                table = folder / f"plan-{n}.json"
                table.write_text(json.dumps([(f"n{n}-{name}", h, str(p)) for name, h, p in plans[n]]))
                got = run_one(
                    table, ports, folder, f"store-{n}-{per_host}-{max_fetches}", per_host, max_fetches
                )
                rows.append((n, len(plans[n]), per_host, max_fetches, got))
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=10)
    print(
        f"# collecting many sources at once (aiweb snapshots over local HTTP, {args.hosts} loopback hosts; 2 cores)\n"
    )
    print(
        "| files | sources (with mirrors) | limits (per host / in all) | wall | per source | CPU | CPU per source | "
        "events | items | "
        "failed | bodies kept | RSS before / peak MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, sources, per_host, max_fetches, got in rows:
        print(
            f"| {n} | {sources} | {per_host} / {max_fetches} | {got['wall']:.2f} s | "
            f"{1000 * got['wall'] / sources:.1f} ms | {got['cpu']:.2f} s | {1000 * got['cpu'] / sources:.1f} ms | "
            f"{got['events']} | {got['items']} | {got['failed']} | "
            f"{got['bodies']} | {got['rss_before']:.0f} / {got['rss_peak']:.0f} |"
        )
    at_target = [got["wall"] for n, _, per_host, _, got in rows if n == TARGET_N and per_host == 2]
    if at_target:
        verdict = "met" if at_target[0] <= TARGET_S else "NOT met"
        print(f"\ntarget: {TARGET_N} files collected in <= {TARGET_S:.0f} s: {at_target[0]:.2f} s, {verdict}")
    print(
        "\nEach row is one collection in a process of its own into a new store; CPU is the collecting "
        "process's (all its threads; the server is another process), the part that does not depend on "
        "what else the machine runs. A mirror is a tenth "
        "file served again from the next address as a source of its own, its body kept once "
        "(bodies kept < sources). A snapshot that is not a feed the collector can read is a failed "
        "source, as it would be live."
    )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2])
    elif len(sys.argv) > 1 and sys.argv[1] == "--collect":
        collect(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]))
    else:
        main()
