"""``brief policy show`` and ``brief policy diff`` keep to 80 columns: a long list, a long reason,
a long value are wrapped between words under a hanging indent and shown whole, never cut."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

from tests.cli import brief
from tests.conftest import REPO

TERMS = ["open-source", "model weights", "fine-tuning", "reasoning", "agentic coding", "inference"] * 4
REASON = "keywords the editors asked for after the week of open-source releases " * 3


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def candidate(folder: Path, keywords: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tasks" / "models" / "ai.json", folder / "model.json")
    text = f'[policy]\neditorial_model = "model.json"\n[policy.topic]\nkeywords = {json.dumps(keywords)}\n'
    (folder / "candidate.toml").write_text(text)
    return folder / "candidate.toml"


def test_policy_show_and_diff_wrap_long_values_at_words_within_80_columns(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = str(tmp_path / "samples" / "brief.toml")
    (tmp_path / "var" / "sample-store").mkdir(parents=True)  # the sample's root, nothing collected
    for n, keywords in enumerate((TERMS, [*TERMS, "MiniMax发布M2.7模型，支持多模态推理"])):
        done = brief(
            "policy", "adopt", str(candidate(tmp_path / f"c{n}", keywords)),
            "--by", "ana", "--reason", REASON, "--config", config,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    shown = brief("policy", "show", "--all", "--config", config)
    short = brief("policy", "show", "--config", config)
    assert short.returncode == 0 and len(short.stdout.splitlines()) < len(shown.stdout.splitlines()) / 2
    assert "changed from the policy before it:" in short.stdout and "policy.topic.keywords: [" in short.stdout
    assert "settings and files in all; 'brief policy show --all' lists each" in short.stdout
    assert max(map(cells, short.stdout.splitlines())) <= 80
    diff = brief("policy", "diff", "1", "2", "--config", config)
    for done in (shown, diff):
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert max(map(cells, lines)) <= 80, max(lines, key=cells)
    lines = shown.stdout.splitlines()
    # the list is shown whole, each term on one line, the lines after the first under a hanging indent
    [start] = [k for k, line in enumerate(lines) if line.startswith("    policy.topic.keywords = [")]
    end = next(k for k in range(start, len(lines)) if lines[k].endswith('"]'))
    assert end > start and all(line.startswith("        ") for line in lines[start + 1 : end + 1])
    value = " ".join(line.strip() for line in lines[start : end + 1]).split(" = ", 1)[1]
    assert json.loads(value) == [*TERMS, "MiniMax发布M2.7模型，支持多模态推理"]
    for line in lines[start : end + 1]:
        assert not line.rstrip().endswith(("-", '"open')), line  # no term cut at its end of line
    why = next(k for k, line in enumerate(lines) if line.startswith("  why: "))
    until = next(k for k in range(why, len(lines)) if lines[k].startswith("  from:"))
    assert until - why >= 3 and all(line.startswith("      ") for line in lines[why + 1 : until])
    assert " ".join(lines[why:until]).split() == ["why:", *REASON.split()]  # whole, no word cut
    changed = [line for line in diff.stdout.splitlines() if line.strip()]
    assert changed[1].startswith("  policy.topic.keywords: [") and changed[2].startswith("      ")
    assert '"MiniMax发布M2.7模型，支持多模态推理"]' in diff.stdout


def test_policy_history_shows_each_version_whole_within_80_columns(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = str(tmp_path / "samples" / "brief.toml")
    (tmp_path / "var" / "sample-store").mkdir(parents=True)
    for n, keywords in enumerate((TERMS, TERMS[:3])):
        done = brief(
            "policy", "adopt", str(candidate(tmp_path / f"c{n}", keywords)),
            "--by", "anastasia.kowalczyk-rodrigues", "--reason", REASON, "--config", config,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    adopted = brief("events", "--type", "policy.adopted", "--format", "jsonl", "--config", config)
    events = [json.loads(line) for line in adopted.stdout.splitlines()]
    versions = [e["payload"]["version"] for e in events]
    assert len(versions) == 2, adopted.stdout
    shown = brief("policy", "history", "--config", config, env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(cells(line) <= 80 for line in lines), shown.stdout
    for version in versions:  # a hash on one line, to be copied, never split across two
        assert any(version in line for line in lines), (version, shown.stdout)
    for e in events:  # and the moment of each adoption
        moment = e["occurred_at"][:16].replace("T", " ")
        assert any(moment in line for line in lines), (moment, shown.stdout)
