"""What the editorial model learns does not move with the story decision: ``brief learn`` replays the
labelled days grouped into stories by the rules (``ops.learn.TRAINING_STORIES``), whatever
``story_model`` the policy names."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

from ops import learn
from tasks import pairs, steps
from tasks.embed import HashingEmbedder
from tasks.settings import Settings, load_settings
from tasks.steps.context import Models, Resources
from tests.conftest import REPO
from tests.runs import hashing_run

DAY = date(2025, 8, 6)


def joining_everything(folder: Path) -> str:
    """A pair model, fitted on the hashing embedder's cosines by its card, that joins every pair."""
    model = pairs.PairModel(
        "everything", pairs.FEATURES, tuple(0.0 for _ in pairs.FEATURES), 6.0, 0.5,
        {"embedding": {"english": HashingEmbedder.name, "multilingual": None}},
    )  # fmt: skip
    path = folder / "everything.pairs.json"
    path.write_text(model.to_json())
    return str(path)


def under(settings: Settings, story_model: str) -> Settings:
    return settings.model_copy(
        update={"policy": settings.policy.model_copy(update={"story_model": story_model})}
    )


def test_the_editorial_examples_are_the_rules_stories_whatever_the_story_model(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(
        config.read_text().replace('root = "../var/sample-store"', 'root = "store"')
        + '\n[embedding]\nmultilingual = ""\n'
    )
    rules = under(load_settings(str(config)), "rules")
    everything = under(rules, joining_everything(tmp_path))
    collecting = hashing_run(rules.storage.root, rules, DAY, "collect")
    for source in rules.sources:
        steps.collect_one(collecting, source.name)
    outcomes = {
        name: steps.dedup_day(hashing_run(rules.storage.root, s, DAY, name, recorder=steps.Dry()))
        for name, s in (("rules", rules), ("everything", everything))
    }
    stories = {name: outcome.stories for name, outcome in outcomes.items()}
    assert len(stories["everything"]) == 1 < len(stories["rules"])  # the two decisions do differ here
    news = outcomes["rules"].items
    links = {news[a].url for s in stories["rules"] for a in s.members}
    labels = learn.Labels(
        spanning={u: learn.RelevanceLabel(id=u, relevance="core", importance=2) for u in links}
    )
    resources = Resources(collecting.store, Models(HashingEmbedder()), embedding=rules.embedding)
    examples = {
        name: learn.collect_examples(s, [DAY], labels, resources=resources)
        for name, s in (("rules", rules), ("everything", everything))
    }
    grouped = {name: sorted(sorted(e.links) for e in found) for name, found in examples.items()}
    assert len(grouped["rules"]) == len(stories["rules"])
    assert grouped["everything"] == grouped["rules"]
