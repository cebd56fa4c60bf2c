"""``brief check``, in this process, against feeds and a webhook on 127.0.0.1: the sample passes; a
bad feed URL, a missing variable, a channel Apprise refuses and an unknown setting each fail with
a line that says what is wrong and how to fix it; nothing is sent unless ``--send-test``."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli import Completed, brief
from tests.conftest import REPO
from tests.delivery_servers import Webhook

TOKEN = "check-token-5be1d0c4a9"


def rss(published: datetime) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Local</title>'
        "<item><title>A model launch</title><link>http://127.0.0.1/a</link>"
        f"<pubDate>{format_datetime(published)}</pubDate><description>A story.</description></item>"
        "</channel></rss>"
    ).encode()


class Feeds(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        pages = {
            "/feed.xml": rss(datetime.now(UTC)),
            "/stale.xml": rss(datetime(2019, 3, 1, 9, 0, tzinfo=UTC)),
            "/page.html": b"<!doctype html><html><body>Our news</body></html>",
            "/empty.xml": b'<?xml version="1.0"?><rss version="2.0"><channel><title>Quiet</title></channel></rss>',
        }
        body = pages.get(self.path)
        self.send_response(200 if body else 404)
        self.end_headers()
        self.wfile.write(body or b"not here")


@pytest.fixture(scope="module")
def feeds() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Feeds)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def hook() -> Iterator[Webhook]:
    server = Webhook().start()
    yield server
    server.stop()


def sample(tmp_path: Path, extra: str = "") -> Path:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text() + extra)
    return config


def check(config: Path, *args: str, env: dict[str, str] | None = None) -> Completed:
    return brief("check", "--config", str(config), *args, env={"COLUMNS": "80", **(env or {})})


def fits(done: Completed) -> bool:
    """Every line in 80 columns but one that is a single word (a path, a URL), printed whole."""
    return all(len(line) <= 80 or " " not in line.strip() for line in done.stdout.splitlines())


def rows(done: Completed) -> dict[str, tuple[str, str]]:
    """``{check: (status, detail)}`` from the table, each cell's folded lines joined by spaces; or
    from the entries it prints instead when a detail's word (a long path) does not fit a column."""
    found: dict[str, list[list[str]]] = {}
    last = None
    entries = not any(line.startswith("│") for line in done.stdout.splitlines())
    for line in done.stdout.splitlines():
        if entries and (head := re.match(r"^(ok|warn|FAIL) (.+)$", line)):
            last = head.group(2)
            found[last] = [[last], [head.group(1)], []]
            continue
        if entries and last is not None and line.startswith("  "):
            found[last][2].append(line.strip())
            continue
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.strip("│").split("│")]
        if cells[0] and cells[1]:
            last = cells[0]
            found[last] = [[c] for c in cells]
        elif last is not None:
            for parts, cell in zip(found[last], cells, strict=True):
                parts.append(cell)
    return {
        " ".join(p for p in cells[0] if p): (" ".join(cells[1]).strip(), " ".join(p for p in cells[2] if p))
        for cells in found.values()
    }


def test_the_sample_passes_in_one_table_of_80_columns(tmp_path: Path) -> None:
    done = check(sample(tmp_path), "--date", "2025-08-06")
    assert done.returncode == 0, done.stdout + done.stderr
    assert fits(done), done.stdout
    table = rows(done)
    assert list(table) == ["config", "storage", "source labnotes", "source techwire"], table
    assert str(tmp_path / "var" / "sample-store") in table["storage"][1].split()[0], table  # whole
    for source, items in (("labnotes", 4), ("techwire", 5)):
        status, detail = table[f"source {source}"]
        assert status == "ok" and detail.startswith(
            f"archive of 2025-08-06: {items} items, newest 2025-08-06"
        )
    assert "all 4 checks passed" in done.stdout and done.stderr == ""
    assert not (tmp_path / "var").exists()  # nothing written: the store is not even created


def test_a_pair_model_fitted_under_other_embedding_models_is_said_to_leave_the_stories_to_the_rules(
    tmp_path: Path,
) -> None:
    done = check(sample(tmp_path, '[embedding]\nmodel = "paraphrase-MiniLM-L3-v2"\n'), "--date", "2025-08-06")
    assert done.returncode == 0, done.stdout + done.stderr
    status, detail = rows(done)["story model"]
    assert status == "warn" and detail.startswith("the rules decide: builtin:stories needs"), detail
    # one short line: the setting that differs, the value the model needs, what to do
    [line] = done.stderr.strip().splitlines()
    assert line == (
        'warning: story model: the rules decide: builtin:stories needs [embedding] model = "all-MiniLM-L6-v2"; '
        "set it or refit: brief learn"
    ), line
    assert len(line) <= 130, len(line)
    both = check(
        sample(tmp_path / "both", '[embedding]\nmodel = "paraphrase-MiniLM-L3-v2"\nmultilingual = ""\n'),
        "--date",
        "2025-08-06",
    )
    [line] = both.stderr.strip().splitlines()
    assert line.endswith(
        'needs [embedding] model = "all-MiniLM-L6-v2", multilingual = "use-multilingual-v3"; set them or refit: '
        "brief learn"
    ), line


def test_the_pair_model_checked_is_the_adopted_policy_s(tmp_path: Path) -> None:
    """An adopted policy's pair model decides the stories, not the config's: it is the one checked."""
    config = sample(tmp_path)
    assert brief("collect", "--config", str(config), "--date", "2025-08-06").returncode == 0
    folder = tmp_path / "candidate"
    folder.mkdir()
    model = json.loads((REPO / "tasks" / "models" / "stories.pairs.json").read_text())
    model["card"]["embedding"]["english"] = "paraphrase-MiniLM-L3-v2"  # fitted under another model
    (folder / "c.pairs.json").write_text(json.dumps(model))
    (folder / "c.toml").write_text('[policy]\nstory_model = "c.pairs.json"\n')
    adopted = brief("policy", "adopt", str(folder / "c.toml"), "--reason", "r", "--config", str(config))
    assert adopted.returncode == 0, adopted.stderr
    (folder / "c.pairs.json").unlink()  # the adoption keeps its own copy
    done = check(config, "--date", "2025-08-06")
    assert done.returncode == 0, done.stdout + done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line == (
        "warning: story model: the rules decide: the adopted pair model needs [embedding] model = "
        '"paraphrase-MiniLM-L3-v2"; set it or refit: brief learn'
    ), line


def test_an_adopted_policy_that_cannot_be_restored_fails_the_check_as_the_run_would(tmp_path: Path) -> None:
    """The store opens but a file the adopted policy keeps is gone: 'brief run' refuses, and so does
    'brief check', in one line that names the file, rather than checking the config's policy."""
    import shutil as files

    config = sample(tmp_path)
    assert brief("collect", "--config", str(config), "--date", "2025-08-06").returncode == 0
    folder = tmp_path / "candidate"
    folder.mkdir()
    files.copy(REPO / "tasks" / "models" / "stories.pairs.json", folder / "c.pairs.json")
    (folder / "c.toml").write_text('[policy]\nstory_model = "c.pairs.json"\n')
    adopted = brief("policy", "adopt", str(folder / "c.toml"), "--reason", "r", "--config", str(config))
    assert adopted.returncode == 0, adopted.stderr
    model = (folder / "c.pairs.json").read_bytes()
    [kept] = [p for p in tmp_path.rglob("policies/blobs/*.json") if p.read_bytes() == model]
    kept.unlink()
    done = check(config, "--date", "2025-08-06")
    assert done.returncode != 0, done.stdout + done.stderr
    [line] = [x for x in done.stderr.strip().splitlines() if "policy" in x]
    assert f"policies/blobs/{kept.name} is missing from the store" in line, line


def test_a_bad_feed_url_fails_and_says_how_to_fix_it(tmp_path: Path, feeds: str) -> None:
    config = sample(
        tmp_path,
        f'[[sources]]\nname = "live"\nurl = "{feeds}/feed.xml"\n'
        f'[[sources]]\nname = "gone"\nurl = "{feeds}/moved-away.xml"\n'
        f'[[sources]]\nname = "page"\nurl = "{feeds}/page.html"\n'
        f'[[sources]]\nname = "stale"\nurl = "{feeds}/stale.xml"\n'
        f'[[sources]]\nname = "empty"\nurl = "{feeds}/empty.xml"\n',
    )
    done = check(config, "--date", "2025-08-06")
    assert done.returncode == 1 and "2 of 9 checks failed" in done.stdout, done.stdout + done.stderr
    assert fits(done), done.stdout
    errors = done.stderr.splitlines()
    assert any(
        e.startswith("error: source gone: HTTP_404") and "find the site's current feed and fix url" in e
        for e in errors
    ), errors
    assert any(e.startswith("error: source page: NOT_A_FEED") and "RSS or Atom link" in e for e in errors)
    assert any(e.startswith("warning: source stale:") and "stopped updating" in e for e in errors)
    assert any(e.startswith("warning: source empty:") and "holds no items" in e for e in errors)
    table = rows(done)
    assert [table[f"source {s}"][0] for s in ("live", "gone", "page", "stale")] == [
        "ok",
        "FAIL",
        "FAIL",
        "warn",
    ]
    assert table["source live"][1].startswith("live feed, now: 1 item, newest"), table


def test_a_missing_variable_fails_and_nothing_is_sent_unless_asked(tmp_path: Path, hook: Webhook) -> None:
    config = sample(
        tmp_path, f'[[delivery]]\nname = "hook"\nurl = "{hook.url("/in/${BRIEF_CHECK_TOKEN}")}"\n'
    )
    missing = check(config, "--date", "2025-08-06", env={"BRIEF_CHECK_TOKEN": ""})
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "error: channel hook: $BRIEF_CHECK_TOKEN not set; export BRIEF_CHECK_TOKEN=…" in missing.stderr

    quiet = check(config, "--date", "2025-08-06", env={"BRIEF_CHECK_TOKEN": TOKEN})
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert rows(quiet)["channel hook"] == (
        "ok",
        f"json://127.0.0.1:{hook.port}; $BRIEF_CHECK_TOKEN set; not sent (--send-test sends one)",
    )
    assert hook.posts == []

    sent = check(config, "--date", "2025-08-06", "--send-test", env={"BRIEF_CHECK_TOKEN": TOKEN})
    assert sent.returncode == 0 and rows(sent)["channel hook"][1].endswith("test message sent"), sent.stdout
    [(path, posted)] = hook.posts
    assert path == f"/in/{TOKEN}" and "brief check" in posted["message"]

    hook.status = 500
    refused = check(config, "--date", "2025-08-06", "--send-test", env={"BRIEF_CHECK_TOKEN": TOKEN})
    assert refused.returncode == 1 and "the test message failed" in refused.stderr
    for done in (missing, quiet, sent, refused):
        assert TOKEN not in done.stdout + done.stderr


def test_a_url_apprise_refuses_fails_without_sending(tmp_path: Path) -> None:
    config = sample(
        tmp_path, '[[delivery]]\nname = "chat"\nurl = "slack://${BRIEF_CHECK_A}/${BRIEF_CHECK_B}"\n'
    )
    done = check(
        config, "--date", "2025-08-06", env={"BRIEF_CHECK_A": "T1JJ3T3L2", "BRIEF_CHECK_B": "A1BRTD4JD"}
    )
    assert done.returncode == 1
    assert "error: channel chat: Apprise does not accept this URL (scheme 'slack')" in done.stderr
    assert "apprise/wiki" in done.stderr and "T1JJ3T3L2" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ('colour = "red"\n', "unknown key 'colour' in [[sources]]"),
        (
            '[[delivery]]\nname = "tg"\nurl = "tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/42"\n',
            "carries a secret written out (bot_token of tgram://)",
        ),
    ],
)
def test_a_mistake_in_the_config_is_one_failed_row_and_exit_2(tmp_path: Path, extra: str, said: str) -> None:
    done = check(sample(tmp_path, extra), "--date", "2025-08-06")
    assert done.returncode == 2, done.stdout + done.stderr
    [error] = done.stderr.splitlines()
    assert error.startswith("error: config: ") and said in error, error
    assert list(rows(done)) == ["config"] and rows(done)["config"][0] == "FAIL"  # nothing else can be checked
    assert "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw" not in done.stdout + done.stderr


def test_an_alert_channel_is_checked_as_a_delivery_channel_is(tmp_path: Path, hook: Webhook) -> None:
    config = sample(tmp_path, f'[[alerts]]\nname = "ops"\nurl = "{hook.url("/ops/${BRIEF_CHECK_TOKEN}")}"\n')
    missing = check(config, "--date", "2025-08-06", env={"BRIEF_CHECK_TOKEN": ""})
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "error: alert ops: $BRIEF_CHECK_TOKEN not set; export BRIEF_CHECK_TOKEN=…" in missing.stderr
    sent = check(config, "--date", "2025-08-06", "--send-test", env={"BRIEF_CHECK_TOKEN": TOKEN})
    assert sent.returncode == 0 and rows(sent)["alert ops"][1].endswith("test message sent"), sent.stdout
    [(path, posted)] = hook.posts
    assert path == f"/ops/{TOKEN}" and "to the alert 'ops'" in posted["message"] and fits(sent)
    assert all(TOKEN not in done.stdout + done.stderr for done in (missing, sent))
