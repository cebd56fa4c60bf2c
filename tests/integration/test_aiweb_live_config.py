"""The guide's live config of the AI world's 14 feeds (``docs/sources.md``) runs as written.

The machine has no internet, so its shape is what is tested: the same sources, kinds and
languages as the archives' config; each address the one the archived snapshots were published
at (their own ``rel="self"`` link); and ``brief check`` of the config as printed passes once
its hosts are moved to a server on 127.0.0.1 that serves, at each address, the newest snapshot
of ``../shared/data/aiweb`` (read where it lies, never copied into the repo).
"""

from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli import brief
from tests.conftest import REPO
from tests.real_days import aiweb_sources_toml

GENERATOR = "https://raw.githubusercontent.com/mibuhand/AI-News-Direct/main/feeds/"
_LINK = re.compile(r"<(?:atom:)?link\b([^>]*)>")
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def live_toml() -> str:
    """The guide's live config: its one TOML block with a ``[storage]`` table and no archive."""
    guide = (REPO / "docs" / "sources.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", guide, flags=re.DOTALL)
    [block] = [b for b in blocks if "[storage]" in b and "anthropic_news" in b and "{date}" not in b]
    return block


def self_link(snapshot: Path) -> str | None:
    """The address a feed file says it is published at (its ``rel="self"`` link)."""
    for match in _LINK.finditer(snapshot.read_text(encoding="utf-8", errors="replace")[:4000]):
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        if attributes.get("rel") == "self":
            return attributes.get("href")
    return None


def table_rows(printed: str) -> dict[str, str]:
    """``brief check``'s table as check -> detail, spaces left out of the check (a name folded over
    lines, "source" and the source's name joined)."""
    rows: list[list[str]] = []
    for line in printed.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) != 3 or cells[0] == "check":
            continue
        if rows and not cells[1]:  # the rest of the row above
            rows[-1] = [rows[-1][0] + cells[0], rows[-1][1], f"{rows[-1][2]} {cells[2]}".strip()]
        else:
            rows.append([cells[0].replace(" ", ""), cells[1], cells[2]])
    return {check: detail for check, _, detail in rows}


def newest_snapshot(aiweb: Path, name: str) -> Path:
    return sorted((aiweb / "feeds" / name).glob("*.xml"))[-1]


def test_the_live_config_is_the_archives_sources_with_live_addresses() -> None:
    live = tomllib.loads(live_toml())
    archived = tomllib.loads(aiweb_sources_toml(Path("/aiweb")))["sources"]
    assert live["storage"]["root"]
    assert [{k: v for k, v in s.items() if k != "url"} for s in live["sources"]] == [
        {k: v for k, v in s.items() if k != "url"} for s in archived
    ]
    assert len(live["sources"]) == 14
    for source in live["sources"]:
        assert source["url"].startswith("https://") and "{date}" not in source["url"], source
    generated = [s["name"] for s in live["sources"] if s["url"].startswith(GENERATOR)]
    assert [s["name"] for s in live["sources"] if s["name"] not in generated] == ["arstechnica"]
    assert all(s["url"] == f"{GENERATOR}{s['name']}.xml" for s in live["sources"] if s["name"] in generated)


def test_each_live_address_is_where_its_snapshots_were_published(shared_data: Path) -> None:
    aiweb = shared_data / "aiweb"
    wrong = {
        s["name"]: (s["url"], self_link(newest_snapshot(aiweb, s["name"])))
        for s in tomllib.loads(live_toml())["sources"]
        if self_link(newest_snapshot(aiweb, s["name"])) != s["url"]
    }
    assert not wrong, wrong


@pytest.fixture
def snapshots(shared_data: Path) -> Iterator[tuple[str, dict[str, Path], list[str]]]:
    """A server on 127.0.0.1 answering ``/<host><path>`` of each live address with the newest
    snapshot of its source: its base URL, its routes, and the paths it was asked for."""
    aiweb = shared_data / "aiweb"
    routes = {}
    for source in tomllib.loads(live_toml())["sources"]:
        parts = urlsplit(source["url"])
        routes[f"/{parts.hostname}{parts.path}"] = newest_snapshot(aiweb, source["name"])
    asked: list[str] = []

    class Snapshots(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            asked.append(self.path)
            file = routes.get(self.path)
            body = file.read_bytes() if file else b"not here"
            self.send_response(200 if file else 404)
            self.send_header("Content-Type", "application/xml" if file else "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Snapshots)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", routes, asked
    server.shutdown()
    server.server_close()


def test_brief_check_of_the_live_config_passes_against_the_snapshots(
    tmp_path: Path, snapshots: tuple[str, dict[str, Path], list[str]]
) -> None:
    base, routes, asked = snapshots
    moved = re.sub(r'"https://([^/"]+)', lambda m: f'"{base}/{m.group(1)}', live_toml())
    assert "https://" not in moved
    config = tmp_path / "brief.toml"
    config.write_text(moved, encoding="utf-8")
    done = brief("check", "--config", str(config), env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(asked) == sorted(routes)  # every feed fetched once, at its own address
    rows = {check.removeprefix("source"): detail for check, detail in table_rows(done.stdout).items()}
    items = {name: re.match(r"live feed, now: (\d+) item", detail or "") for name, detail in rows.items()}
    names = [s["name"] for s in tomllib.loads(live_toml())["sources"]]
    assert sorted(n for n in rows if n in names) == sorted(names), done.stdout
    assert all(items[n] and int(items[n].group(1)) > 0 for n in names), rows
    assert "FAIL" not in done.stdout
