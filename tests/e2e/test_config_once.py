"""The config is parsed once per command: a backfill of three dates, a run, a review, a delivery;
the commands they print name that config."""

from __future__ import annotations

import re
import shlex
import shutil
from collections import Counter
from pathlib import Path

import pytest

from tasks.embed_multilingual import MULTILINGUAL_MODEL
from tasks.settings import config_parses, load_settings
from tests.cli import brief
from tests.conftest import REPO


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    return config


def parses_of(*args: str) -> tuple[int, str]:
    """How many times ``brief ARGS`` parsed a config file, and what it printed."""
    before = config_parses()
    done = brief(*args)
    return config_parses() - before, done.stdout + done.stderr


def test_a_backfill_parses_its_config_once(sample: Path, prefect_harness: None) -> None:
    """Three dates: one published, one withheld (its feeds failed: the failure hook explains it
    and sends its alerts), one without archives. It was 3 + 3 parses, and 2 more per failed date."""
    parses, said = parses_of(
        "backfill", "--start", "2025-08-05", "--end", "2025-08-07", "--config", str(sample)
    )
    assert "2025-08-06" in said and "completed" in said, said
    # 2025-08-07's archives are missing: its brief is withheld, its failure hooks ran
    assert "2 dates withheld, readers got nothing: 2025-08-05, 2025-08-07" in said, said
    assert parses == 1, said


def test_a_run_a_review_and_a_delivery_parse_their_config_once(sample: Path, prefect_harness: None) -> None:
    run, said = parses_of("run", "--date", "2025-08-06", "--config", str(sample))
    assert "brief v1" in said, said
    assert run == 1  # was 2: the command's check, then the flow
    # the hint it prints names the config, and runs as printed
    [hint] = re.findall(r"left out: '([^']+)' says why", said)
    assert hint.endswith(f"--projection scores --config {sample}"), hint
    replayed = brief(*shlex.split(hint)[1:])
    assert replayed.returncode == 0 and "off" in replayed.stdout.lower(), replayed.stdout + replayed.stderr
    nothing = sample.parent / "answers.json"
    nothing.write_text("{}")
    review, said = parses_of("review", "--date", "2025-08-06", "--answers", str(nothing), "-c", str(sample))
    assert "No answers given" in said, said
    assert review == 1, said  # was 2: the day, then the store
    deliver, said = parses_of("deliver", "--date", "2025-08-06", "--config", str(sample))
    assert deliver == 1, said  # was 2


def test_a_backfill_makes_each_model_once(sample: Path, prefect_harness: None) -> None:
    """Two dates in one process, one published and one withheld (its failure hook runs): the command,
    the collection of the archives, their embedding, each date's run and its hooks take the
    process's resources from the composition root, so each embedding model is made once. It was
    made for each of them: once per date, and once more for the collection, the embedding and each
    withheld date's hook."""
    from tasks.steps.context import models_made

    before = models_made()
    done = brief("backfill", "--start", "2025-08-05", "--end", "2025-08-06", "--config", str(sample))
    said = done.stdout + done.stderr
    assert "2025-08-06" in said and "completed" in said, said
    assert "withheld, readers got nothing: 2025-08-05" in said, said
    made = models_made() - before
    settings = load_settings(str(sample))
    models = {settings.embedding.model, settings.embedding.multilingual, MULTILINGUAL_MODEL} - {None, ""}
    assert made == Counter(models), made


def test_an_evaluation_makes_each_model_once(sample: Path, prefect_harness: None) -> None:
    """``brief evaluate`` replays the days under the policy in force and under the candidate with the
    command's resources (``Resources.for_settings``: a candidate naming the same embedding models
    uses the same ones), so each model is made once. It was made for each policy replayed."""
    from tasks.steps.context import models_made

    ran = brief("run", "--date", "2025-08-06", "--config", str(sample))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    candidate = sample.parent / "candidate.toml"
    candidate.write_text("[policy]\ntop_stories = 3\n")
    before = models_made()
    done = brief(
        "evaluate",
        "--policy",
        str(candidate),
        "--start",
        "2025-08-06",
        "--end",
        "2025-08-06",
        "--config",
        str(sample),
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0 and "candidate" in said, said
    made = models_made() - before
    settings = load_settings(str(sample))
    models = {settings.embedding.model, settings.embedding.multilingual, MULTILINGUAL_MODEL} - {None, ""}
    assert made == Counter(models), made
