"""The guide cannot drift from the CLI: every ``brief`` command in README.md and docs/ is checked.

Each command shown in a fenced ``bash`` block must parse against the CLI (its command, its
options, their values); each ``brief …`` in inline code (the tables) must name a real command
and real options. The fenced commands that can run on the sample are run, in the order a
reader meets them (the README, then the guide's pages in the order of ``mkdocs.yml``), in
one process against a copy of ``samples/``, through the entry point's ``main``.

Conventions the pages use, each an HTML comment on the line before a fenced block:

- ``<!-- not-run: why -->``: the block's commands need what the sample lacks (a channel, a
  server, hand labels); they are parsed, not run.
- ``<!-- file: NAME -->``: the block is written to NAME in the working folder before the
  commands after it run (an answers file, say).

A command expected to fail says so in its comment: ``brief … # exit 2: why``.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.main import get_command

from flows.cli import app, main
from tests.conftest import REPO

SHELL_BLOCKS = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^(```|~~~)\s*([\w-]*)")
COMMENT = re.compile(r"^<!--\s*(not-run|file)\s*:\s*(.+?)\s*-->$")
INLINE = re.compile(r"`(brief(?: [^`]*)?)`")
EXIT = re.compile(r"#\s*exit (\d+)")
NOT_RUN_AT_MOST = 10  # what the guide shows but the sample cannot run stays a short list


@dataclass(frozen=True)
class Shown:
    """One ``brief`` command as the guide shows it."""

    where: str  # page:line
    text: str
    args: tuple[str, ...]
    fenced: bool
    not_run: str | None = None  # why it is not run
    exit_code: int = 0


@dataclass(frozen=True)
class File:
    where: str
    name: str
    text: str


def guide_pages(repo: Path = REPO) -> list[Path]:
    """README.md, then every page of mkdocs.yml's nav in its order."""

    def walk(nav) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, dict):
            return [p for v in nav.values() for p in walk(v)]
        return [p for item in nav for p in walk(item)]

    config = yaml.safe_load((repo / "mkdocs.yml").read_text(encoding="utf-8"))
    return [repo / "README.md", *[repo / "docs" / page for page in walk(config["nav"])]]


def read_page(path: Path, name: str) -> list[Shown | File]:
    """The commands and files of one page, in order."""
    found: list[Shown | File] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    marker: tuple[str, str] | None = None
    n = 0
    while n < len(lines):
        line = lines[n]
        fence = FENCE.match(line.strip())
        if fence is None:
            found += [
                Shown(f"{name}:{n + 1}", m.group(1), tuple(words(m.group(1))), fenced=False)
                for m in INLINE.finditer(line)
            ]
            comment = COMMENT.match(line.strip())
            if comment:
                marker = (comment.group(1), comment.group(2))
            elif line.strip():
                marker = None
            n += 1
            continue
        start, language, body = n + 1, fence.group(2), []
        n += 1
        while n < len(lines) and not lines[n].strip().startswith(fence.group(1)):
            body.append(lines[n])
            n += 1
        n += 1
        kind, value = marker or (None, None)
        marker = None
        if kind == "file":
            found.append(File(f"{name}:{start}", value, "\n".join(body) + "\n"))
        if language not in SHELL_BLOCKS:
            continue
        for k, command in joined(body):
            if not command.startswith("brief "):
                continue
            code = EXIT.search(command)
            found.append(
                Shown(
                    f"{name}:{start + k + 1}",
                    command,
                    tuple(shlex.split(command, comments=True)[1:]),
                    fenced=True,
                    not_run=value if kind == "not-run" else None,
                    exit_code=int(code.group(1)) if code else 0,
                )
            )
    return found


def joined(body: list[str]) -> list[tuple[int, str]]:
    """Lines with their backslash continuations joined: (index of the first line, command)."""
    out, start, parts = [], 0, []
    for k, line in enumerate(body):
        if not parts:
            start = k
        if line.rstrip().endswith("\\"):
            parts.append(line.rstrip()[:-1])
            continue
        out.append((start, " ".join([*parts, line]).strip()))
        parts = []
    return out


def words(synopsis: str) -> list[str]:
    """An inline synopsis (``brief deliver [--date D] \\| --due``) as the words that matter."""
    return synopsis.replace("\\|", " ").replace("[", " ").replace("]", " ").split()[1:]


def everything(repo: Path = REPO) -> list[Shown | File]:
    found: list[Shown | File] = []
    for path in guide_pages(repo):
        found += read_page(path, str(path.relative_to(repo)))
    return found


@functools.cache
def cli() -> Any:
    """The click command behind ``brief`` (built once: Typer builds it anew on every call)."""
    return get_command(app)


def leaf(args: tuple[str, ...]) -> tuple[Any, list[str], list[str]]:
    """The (sub)command the words name, its path, and the words left for it.

    Typer bundles its own click, so commands are recognised by what they have, not by class.
    """
    command, path, rest = cli(), [], list(args)
    while hasattr(command, "commands") and rest and rest[0] in command.commands:
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    return command, path, rest


def problem(shown: Shown) -> str | None:
    """What is wrong with a command as shown, or None."""
    command, path, rest = leaf(shown.args)
    if shown.fenced:
        if shown.exit_code:
            return None  # a documented mistake; running it checks it
        if hasattr(command, "commands"):
            return f"'brief {' '.join(path)}' needs a subcommand ({', '.join(command.commands)})"
        try:
            command.make_context(" ".join(["brief", *path]), rest)
        except Exception as exc:  # the bundled click's usage errors, or its Exit after --help
            if type(exc).__name__ == "Exit":
                return None
            if hasattr(exc, "format_message"):
                return str(exc.format_message())
            raise
        return None
    # an inline synopsis: the command exists, every option it names is one of the command's
    if rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
        return f"no command 'brief {' '.join([*path, rest[0]])}'"
    known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
    unknown = [w for w in rest if w.startswith("--") and w.split("=")[0] not in known]
    return f"'brief {' '.join(path)}' has no option {', '.join(unknown)}" if unknown else None


SHOWN = [s for s in everything() if isinstance(s, Shown)]


@pytest.mark.parametrize("shown", SHOWN, ids=[f"{s.where} {s.text}" for s in SHOWN])
def test_every_command_shown_exists(shown: Shown) -> None:
    assert problem(shown) is None, f"{shown.where}: {shown.text}: {problem(shown)}"


def test_what_is_not_run_is_a_short_list_with_reasons() -> None:
    fenced = [s for s in SHOWN if s.fenced]
    not_run = [s for s in fenced if s.not_run]
    assert len(fenced) >= 30 and len([s for s in SHOWN if not s.fenced]) >= 20
    assert len(not_run) <= NOT_RUN_AT_MOST, [s.where for s in not_run]
    assert all(len(s.not_run or "") > 10 for s in not_run)


def test_a_drifted_guide_fails(tmp_path: Path) -> None:
    """A renamed option, an unknown command or a bad value in a page is caught, fenced or inline."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "mkdocs.yml").write_text("nav:\n  - Page: page.md\n")
    (tmp_path / "README.md").write_text("`brief replay --date D [--as-off T]` and `brief rerun --date D`\n")
    (tmp_path / "docs" / "page.md").write_text(
        "```bash\n"
        "brief replay --date 2025-08-06 --projections scores\n"
        "brief events --format yaml\n"
        "brief export --out x\n"
        "brief stats \\\n  --start 2025-08-01   # fine\n"
        "```\n"
        "<!-- not-run: needs a Prefect server with the deployments -->\n"
        "```bash\nbrief backfill --start 2025-08-01 --end 2025-08-02 --fan-out\n```\n"
    )
    shown = [s for s in everything(tmp_path) if isinstance(s, Shown)]
    found = {s.text.split("   #")[0]: problem(s) for s in shown}
    assert "--as-off" in (found["brief replay --date D [--as-off T]"] or "")
    assert "rerun" in (found["brief rerun --date D"] or "")
    assert "--projections" in (found["brief replay --date 2025-08-06 --projections scores"] or "")
    assert "yaml" in (found["brief events --format yaml"] or "")
    assert "subcommand" in (found["brief export --out x"] or "")
    assert found["brief stats    --start 2025-08-01"] is None
    [fan_out] = [s for s in shown if s.not_run]
    assert fan_out.args[-1] == "--fan-out" and problem(fan_out) is None


def brief(args: tuple[str, ...], env: dict[str, str]) -> tuple[int, str]:
    """``brief ARGS`` in this process through the entry point: its exit code and its output."""
    from typer.testing import CliRunner

    runner = CliRunner()
    argv = sys.argv
    with runner.isolation(input="", env=env) as (_, _, output):
        sys.argv = ["brief", *args]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = 0 if exc.code is None else exc.code if isinstance(exc.code, int) else 1
        finally:
            sys.argv = argv
        sys.stdout.flush()
        sys.stderr.flush()
        text = output.getvalue().decode(errors="replace")
    return code, text


@pytest.mark.slow
def test_the_guide_runs_on_the_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefect_harness: None
) -> None:
    from prefect.logging.configuration import ensure_logging_setup

    ensure_logging_setup()  # Prefect's console handler keeps the real stderr, not one command's
    shutil.copytree(REPO / "samples", tmp_path / "samples")  # its store goes to tmp_path/var
    monkeypatch.chdir(tmp_path)
    env = {"BRIEF_CONFIG": str(tmp_path / "samples" / "brief.toml"), "COLUMNS": "200", "BRIEF_USER": "guide"}
    ran, failures = 0, []
    for item in everything():
        if isinstance(item, File):
            (tmp_path / item.name).write_text(item.text, encoding="utf-8")
            continue
        if not item.fenced or item.not_run:
            continue
        code, output = brief(item.args, env)
        ran += 1
        if code != item.exit_code:
            failures.append(f"{item.where}: {item.text}: exit {code}, not {item.exit_code}\n{output[-2000:]}")
        elif item.args[0] == "replay" and re.search(r": 0 rows\b", output):  # an example shows something
            failures.append(f"{item.where}: {item.text}: shows no row on the sample\n{output[-2000:]}")
    assert not failures, "\n\n".join(failures)
    assert ran >= 25
    briefs = tmp_path / "var" / "sample-store" / "briefs"
    assert (briefs / "2025-08-06.json").is_file() and (briefs / "2025-08-06" / "v2.md").is_file()
    assert (tmp_path / "candidate.model.json").is_file() and (tmp_path / "relevance.jsonl").is_file()
    # the files the guide says an export writes beside its dataset are the ones it wrote
    cards = re.findall(r"`([\w.-]+\.card\.(?:json|md))`", (REPO / "docs" / "export.md").read_text())
    assert cards and all((tmp_path / card).is_file() for card in cards), cards
    # a story id the guide shows as an example is one of the sample's
    published = {
        item["story_id"]
        for path in briefs.rglob("*.json")
        for item in json.loads(path.read_text()).get("items", [])
    }
    for page in guide_pages():
        if "benchmarks" not in page.parts:  # the benchmarks' pages name the ids of the real days
            shown = set(re.findall(r"\bst-[0-9a-f]{16}\b", page.read_text(encoding="utf-8")))
            assert shown <= published, f"{page.name}: {sorted(shown - published)} not in the sample's briefs"


def test_every_command_and_option_of_the_cli_is_in_the_guide() -> None:
    """The other way round: what the CLI offers, docs/commands.md shows (``--help`` aside)."""

    def leaves(command, path):
        if hasattr(command, "commands"):
            return [x for name, sub in command.commands.items() for x in leaves(sub, [*path, name])]
        return [(path, command)]

    page = [s for s in SHOWN if s.where.startswith("docs/commands.md") and not s.fenced]
    missing = []
    for path, command in leaves(cli(), []):
        shown = [s for s in page if leaf(s.args)[1] == path]
        words = {w.split("=")[0] for s in shown for w in s.args}
        options = {p.opts[0] for p in command.params if p.opts[0].startswith("--")} - {"--config"}
        missing += [f"brief {' '.join(path)}"] if not shown else []
        missing += [f"brief {' '.join(path)} {o}" for o in sorted(options - words)]
    assert not missing, f"docs/commands.md does not show: {', '.join(missing)}"


def test_every_file_the_guide_names_exists() -> None:
    """A path in inline code (``tasks/prompts/*.toml``, ``flows/fanout.py``) names a file of the repo."""
    named = re.compile(r"`((?:flows|tasks|storage|validations|tests|bench|samples|docs)/[^`\s]*)`")
    missing = []
    for path in guide_pages():
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for match in named.finditer(line):
                name = match.group(1).split(":")[0]
                if "<" in name or "{" in name:
                    continue  # a pattern such as tasks/<step>.py
                if not (list(REPO.glob(name)) if "*" in name else (REPO / name).exists()):
                    missing.append(f"{path.relative_to(REPO)}:{n}: {name}")
    assert not missing, "the guide names files that do not exist:\n" + "\n".join(missing)


def test_the_readme_says_how_to_reach_brief_before_its_first_command() -> None:
    """`make run` leaves ``brief`` in .venv/bin: the README says to activate it (or call it there)
    before it shows a ``brief`` command, and ``make run`` says so when it ends."""
    import subprocess

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    first = min(readme.index(f"\nbrief {word}") for word in ("run", "events", "check"))
    assert "source .venv/bin/activate" in readme[:first] and "BRIEF_CONFIG" in readme[:first]
    printed = subprocess.run(
        ["make", "-n", "run"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    ).stdout
    assert (
        "source .venv/bin/activate" in printed
        and f"export BRIEF_CONFIG={REPO / 'samples' / 'brief.toml'}" in printed
    )
