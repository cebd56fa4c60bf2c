"""``brief learn`` refits the story pair model from labelled stories and people's answers over stored
days, and its candidate names it; ``brief evaluate`` judges it only on the labelled days it never
learnt from.

Three days of the tech outlets (``../shared/data/month``) are collected into a real store; their
labels (``tech-<day>.json``: relevance, importance and stories) are the labels folder.
"""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from ops import story_learning
from ops.evaluate import candidate_settings
from ops.policy import governing
from storage.blobs import digest_of
from tasks.pairs import load_pair_model
from tasks.settings import load_settings
from tests.cli import brief
from tests.real_days import archive_config

DAYS = ("2025-07-09", "2025-07-23", "2025-07-30")
OUTLETS = ("arstechnica", "techcrunch", "wired", "tweakers")


@pytest.fixture(scope="module")
def stored(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A store holding the three collected days, and a folder of their labels."""
    folder = tmp_path_factory.mktemp("story-learning")
    config = archive_config(folder, shared_data / "month" / "feeds", OUTLETS)
    for day in DAYS:
        done = brief("collect", "--config", str(config), "--date", day)
        assert done.returncode == 0, done.stderr
    labels = folder / "labels"
    labels.mkdir()
    for day in DAYS:
        shutil.copy(shared_data / "labels" / f"tech-{day}.json", labels)
    return config, labels


def test_the_labels_say_which_stored_articles_are_one_story(stored) -> None:
    _, labels = stored
    read = story_learning.read_story_labels(labels)
    assert sorted(read) == [date.fromisoformat(d) for d in DAYS]
    rows = json.loads((labels / "tech-2025-07-09.json").read_text())
    stories = {r["story"] for r in rows}
    assert {e.story for e in read[date(2025, 7, 9)].values()} == stories
    assert story_learning.blocks_of([date(2025, 7, 9), date(2025, 7, 10), date(2025, 7, 23)]) == {
        "2025-07-09": (date(2025, 7, 9), date(2025, 7, 10)),
        "2025-07-23": (date(2025, 7, 23),),
    }


# two replays of two days (the editorial model's and the pair model's), then evaluate's of two days
@pytest.mark.timeout(1200)
def test_learn_refits_the_pair_model_and_evaluate_judges_it_on_days_it_never_saw(stored, tmp_path) -> None:
    config, labels = stored
    out = tmp_path / "c" / "candidate.toml"
    learned = brief(
        "learn", "--config", str(config), "--out", str(out), "--labels", str(labels), "--end", "2025-07-23"
    )
    assert learned.returncode == 0, learned.stderr
    written = tmp_path / "c" / "candidate.pairs.json"
    assert f"story pair model written: {written}" in learned.stdout
    model = load_pair_model(str(written))
    assert model is not None and 0.0 < model.threshold < 1.0
    on = model.card["fitted_on"]
    assert on["days"] == ["2025-07-09", "2025-07-23"] and on["same_story_pairs"] > 0
    # each block left out and judged by a model fitted without it: too few blocks here to fit one
    # with a threshold chosen leaving another out, so the card says none rather than a figure seen
    assert model.card["leave_one_block_out"] == {"stored days": {}}
    candidate = candidate_settings(str(out), load_settings(str(config))).policy
    assert Path(candidate.story_model) == written

    evaluated = brief(
        "evaluate", "--config", str(config), "--policy", str(out), "--labels", str(labels),
        "--start", DAYS[1], "--end", DAYS[2],
    )  # fmt: skip
    assert evaluated.returncode == 0, evaluated.stderr
    store = load_settings(str(config)).storage.event_store()
    [event] = store.read(event_types=["policy.evaluated"])
    figures = event.payload["figures"]
    ours = next(f for name, f in figures.items() if name.startswith("candidate"))
    theirs = next(f for name, f in figures.items() if name.startswith("current"))
    # the candidate learnt from 07-23, not from 07-30: only 07-30 judges it; the policy in force (the
    # shipped editorial and pair models, fitted on every labelled day) saw both, so neither judges it
    assert ours["story_days_unseen"] == 1 and ours["story_days_seen_left_out"] == 1
    assert theirs["story_days_unseen"] == 0 and theirs["story_days_seen_left_out"] == 2
    assert ours["story_pairs_unseen_precision"] is not None and ours["story_pairs_unseen_recall"] is not None
    assert theirs["story_pairs_unseen_precision"] is None  # no day it did not learn from

    # adopted, the refitted pair model is kept by digest: the file learn wrote may go
    adopted = brief("policy", "adopt", str(out), "--by", "ana", "--reason", "refit", "--config", str(config))
    assert adopted.returncode == 0, adopted.stderr
    [adoption] = store.read(event_types=["policy.adopted"])
    [kept] = [a for a in adoption.payload["artefacts"] if a["kind"] == "story_model"]
    assert kept["digest"] == digest_of(written.read_bytes())
    assert adoption.payload["policy"]["story_model"] == f"stored:{kept['path']}"
    [change] = [c for c in adoption.payload["changes"] if c["key"] == "story_model"]
    assert change["after"] == kept["digest"][:12] and change["before"] != change["after"]
    written.unlink()
    chosen = governing(load_settings(str(config)), store)
    assert chosen.record["version"] == adoption.payload["version"]
    assert digest_of(Path(chosen.settings.policy.story_model).read_bytes()) == kept["digest"]
