"""``brief policy``: adopting a candidate records it whole (settings and files by digest), with the
change, who, why and its evaluation; show, history, diff and rollback read it back; a run uses the
adopted policy, or a file the config pins, and records which."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ops.policy import adoptions, changes, governing, history
from storage.blobs import digest_of
from storage.events import new_event, utcnow
from storage.payloads import PolicyTables
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO

DAY = "2025-08-06"


def sample(tmp_path: Path) -> Path:
    """The sample config (samples/brief.toml) with its feeds, its day collected (a real Parquet store)."""
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    done = brief("collect", "--config", str(config), "--date", DAY)
    assert done.returncode == 0, done.stderr
    return config


def candidate(folder: Path, name: str = "candidate.toml", **settings: object) -> Path:
    """A candidate policy file whose model is a copy of the shipped one under another path."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tasks" / "models" / "ai.json", folder / "model.json")
    lines = [
        "[policy]",
        'editorial_model = "model.json"',
        *(f"{k} = {json.dumps(v)}" for k, v in settings.items()),
    ]
    (folder / name).write_text("\n".join(lines) + "\n")
    return folder / name


def test_adopt_records_the_policy_whole_and_show_history_diff_read_it_back(tmp_path: Path) -> None:
    config = sample(tmp_path)
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    first = candidate(tmp_path / "c1", top_stories=3)
    done = brief(
        "policy", "adopt", str(first), "--by", "ana", "--reason", "fewer top stories", "--config", str(config)
    )
    assert done.returncode == 0, done.stderr
    [event] = store.read(event_types=["policy.adopted"])
    p = event.payload
    assert p["by"] == "ana" and p["reason"] == "fewer top stories" and p["previous"] is None
    assert p["policy"]["top_stories"] == 3
    assert {"key": "policy.top_stories", "before": 5, "after": 3} in p["changes"]
    assert p["baseline"]["policy"]["top_stories"] == 5  # the config's policy before it, whole
    # the model is stored by digest: the stored bytes are the file's, and a later change of the file
    # does not change the adopted policy
    [model] = [a for a in p["artefacts"] if a["kind"] == "model"]
    stored = Path(store.base) / model["path"]
    assert stored.read_bytes() == (tmp_path / "c1" / "model.json").read_bytes()
    assert model["digest"] == digest_of(stored.read_bytes())
    assert {a["kind"] for a in p["artefacts"]} == {"model", "story_model", "vocabulary"}
    (tmp_path / "c1" / "model.json").write_text("not a model any more")
    restored = governing(settings, store)
    assert restored.record["origin"] == "adopted" and restored.record["adoption"] == event.event_id
    assert restored.settings.policy.top_stories == 3 and restored.record["version"] == p["version"]
    # one adoption: it compares with the config's policy it replaced, which it keeps whole
    against = brief("policy", "diff", "baseline", "1", "--config", str(config))
    assert against.returncode == 0, against.stderr
    assert f"{p['previous_version']} -> {p['version']}:" in against.stdout
    assert "policy.top_stories: 5 -> 3" in against.stdout

    second = candidate(tmp_path / "c2", top_stories=3, quick_links=4)
    done = brief(
        "policy",
        "adopt",
        str(second),
        "--by",
        "bo",
        "--reason",
        "shorter quick links",
        "--config",
        str(config),
    )
    assert done.returncode == 0, done.stderr
    assert "policy.quick_links: 15 -> 4" in done.stdout
    assert [c["key"] for c in store.read(event_types=["policy.adopted"])[-1].payload["changes"]] == [
        "policy.quick_links"
    ]  # the same model file content under another path is no change

    shown = brief("policy", "show", "--config", str(config))
    assert "by bo" in shown.stdout and "why: shorter quick links" in shown.stdout
    assert "policy.quick_links: 15 -> 4" in shown.stdout and "policy.quick_links = 4" not in shown.stdout
    every = brief("policy", "show", "--all", "--config", str(config))
    assert "policy.quick_links = 4" in every.stdout
    as_of = brief(
        "policy", "show", "--all", "--as-of", event.occurred_at.isoformat(), "--config", str(config)
    )
    assert "by ana" in as_of.stdout and "policy.quick_links = 15" in as_of.stdout
    before_any = brief("policy", "show", "--as-of", "2000-01-01T00:00:00Z", "--config", str(config))
    assert "no policy adopted at 2000-01-01" in before_any.stdout

    listed = brief("policy", "history", "--config", str(config))
    assert "2 adoptions" in listed.stdout and "fewer top stories" in listed.stdout
    diffed = brief("policy", "diff", "1", "2", "--config", str(config))
    assert diffed.returncode == 0 and "policy.quick_links: 15 -> 4" in diffed.stdout
    assert "top_stories" not in diffed.stdout

    again = brief("policy", "adopt", str(second), "--reason", "again", "--config", str(config))
    assert again.returncode == 2 and "already the adopted one" in again.stderr

    back = brief("policy", "rollback", "--by", "ana", "--reason", "links too short", "--config", str(config))
    assert back.returncode == 0, back.stderr
    assert "(a rollback)" in back.stdout and "policy.quick_links: 4 -> 15" in back.stdout
    assert governing(settings, store).settings.policy.quick_links == 15
    assert governing(settings, store).record["version"] == p["version"]
    first_back = brief("policy", "rollback", "--reason", "to the config's", "--config", str(config))
    assert first_back.returncode == 0, first_back.stderr
    assert governing(settings, store).record["version"] == settings.policy_version()  # one further back
    assert governing(settings, store).settings.policy.top_stories == 5
    last = brief("policy", "rollback", "--reason", "further", "--config", str(config))
    assert last.returncode == 2 and "nothing older to roll back to" in last.stderr
    assert len(history(store)) == 4


def test_a_run_finds_the_adoption_without_the_log_and_a_lost_copy_is_put_back(tmp_path: Path) -> None:
    config = sample(tmp_path)
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    done = brief(
        "policy", "adopt", str(candidate(tmp_path / "c")), "--reason", "start", "--config", str(config)
    )
    assert done.returncode == 0, done.stderr
    copies = list((Path(store.base) / "policies" / "adopted").iterdir())
    assert len(copies) == 1
    copies[0].unlink()  # as a crash between the append and the copy leaves it
    assert adoptions(store) == []
    assert len(history(store)) == 1 and len(adoptions(store)) == 1
    assert adoptions(store)[0] == store.read(event_types=["policy.adopted"])[0]


def test_adopt_refuses_bad_input_in_one_line_and_writes_nothing(tmp_path: Path) -> None:
    config = sample(tmp_path)
    store = load_settings(str(config)).storage.event_store()
    before = len(store.read())
    (tmp_path / "bad.toml").write_text("[policy]\ntop_stories = -1\n")
    (tmp_path / "llm.toml").write_text('[llm]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n')
    missing = str(tmp_path / "missing.toml")
    cases = [
        (("policy", "adopt", missing, "--reason", "r"), f"FILE {missing!r}: no such file"),
        (("policy", "adopt", str(tmp_path / "bad.toml"), "--reason", "r"), "[policy] top_stories"),
        (
            ("policy", "adopt", str(tmp_path / "llm.toml"), "--reason", "r"),
            "has [llm] but no [policy] table; a candidate policy file needs one ([llm] is accepted beside it)",
        ),
        (("policy", "adopt", str(candidate(tmp_path / "c")), "--reason", "  "), "--reason is empty"),
        (
            ("policy", "adopt", str(candidate(tmp_path / "c")), "--reason", "r", "--by", "a b"),
            "is not a name",
        ),
        (("policy", "rollback", "--reason", "r"), "nothing to roll back"),
        (("policy", "diff", "1", "2"), "no policy has been adopted yet"),
        (("policy", "diff", "baseline", "1"), "no policy has been adopted yet"),
        (("policy", "show", "--as-of", "yesterday"), "is not an ISO time"),
    ]
    for args, said in cases:
        done = brief(*args, "--config", str(config))
        assert done.returncode == 2, (args, done.stdout)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert "--policy" not in done.stderr, done.stderr  # a flag the command has not
    assert len(store.read()) == before
    assert not (Path(store.base) / "policies" / "adopted").exists()


def evaluated(settings, version: str, decision: str):
    """A ``policy.evaluated`` event of the candidate ``version`` with the verdict ``decision``."""
    return new_event(
        "policy.evaluated",
        {
            "current_policy": settings.policy_version(),
            "candidate_policy": version,
            "start": DAY,
            "end": DAY,
            "figures": {},
            "verdict": {
                "decision": decision,
                "line": f"{decision}: …",
                "metric": "agreement",
                "unseen": 40,
                "seen_left_out": 0,
                "days": 5,
            },
        },
        brief_date=datetime.fromisoformat(DAY).date(),
        run_id="evaluate-x",
        subject_id=f"policy-{version}",
        produced_by="evaluate@1",
        occurred_at=utcnow(),
        policy_version=version,
    )


def test_adoption_names_the_evaluation_of_that_candidate(tmp_path: Path) -> None:
    from ops.evaluate import candidate_settings

    config = sample(tmp_path)
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    file = candidate(tmp_path / "c", quick_links=7)
    version = candidate_settings(str(file), settings).policy_version()
    event = evaluated(settings, version, "adopt")
    store.append([event])
    done = brief("policy", "adopt", str(file), "--reason", "evaluated", "--config", str(config))
    assert done.returncode == 0, done.stderr
    [adopted] = store.read(event_types=["policy.adopted"])
    assert adopted.payload["evaluation"] == event.event_id and adopted.payload["verdict"] == "adopt"
    assert event.event_id in adopted.source_event_ids
    assert "verdict: adopt" in done.stdout
    assert "warning" not in done.stderr


@pytest.mark.parametrize("decision", ["don't", "not enough evidence"])
def test_adopting_against_the_verdict_warns_and_adopts(tmp_path: Path, decision: str) -> None:
    from ops.evaluate import candidate_settings

    config = sample(tmp_path)
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    file = candidate(tmp_path / "c", quick_links=7)
    event = evaluated(settings, candidate_settings(str(file), settings).policy_version(), decision)
    store.append([event])
    done = brief("policy", "adopt", str(file), "--reason", "we decided", "--config", str(config))
    assert done.returncode == 0, done.stderr
    [warning] = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert f"its evaluation ({event.event_id}) said {decision!r}" in warning
    [adopted] = store.read(event_types=["policy.adopted"])  # the person decided: it is adopted
    assert adopted.payload["verdict"] == decision


def test_a_pinned_file_wins_and_says_so(tmp_path: Path) -> None:
    config = sample(tmp_path)
    brief(
        "policy",
        "adopt",
        str(candidate(tmp_path / "c", top_stories=2)),
        "--reason",
        "r",
        "--config",
        str(config),
    )
    pinned = candidate(tmp_path / "pin", top_stories=9)
    config.write_text(f'policy_file = "{pinned}"\n' + config.read_text())
    settings = load_settings(str(config))
    chosen = governing(settings, settings.storage.event_store())
    assert chosen.settings.policy.top_stories == 9
    assert chosen.record["origin"] == "pinned" and chosen.record["file"] == str(pinned)
    assert chosen.record["adoption"] is not None
    assert "pinned by the config" in chosen.line and "is not used" in chosen.line


@pytest.mark.usefixtures("prefect_harness")
def test_the_next_run_uses_the_adopted_policy_and_after_a_rollback_the_earlier_one(tmp_path: Path) -> None:
    """The loop's last steps: adopt, the next run runs under it (and records so), roll back, the run
    after is under the earlier one."""
    from flows.daily import daily_brief

    config = sample(tmp_path)
    store = load_settings(str(config)).storage.event_store()

    def started() -> dict:
        return store.read(event_types=["run.started"])[-1].payload["policy"]

    daily_brief(DAY, str(config))
    configured = started()
    assert configured["origin"] == "config" and configured["adoption"] is None
    done = brief(
        "policy",
        "adopt",
        str(candidate(tmp_path / "c", top_stories=1)),
        "--reason",
        "one lead",
        "--config",
        str(config),
    )
    assert done.returncode == 0, done.stderr
    [adopted] = store.read(event_types=["policy.adopted"])
    result = daily_brief(DAY, str(config))
    under = started()
    assert under == {
        "version": adopted.payload["version"],
        "origin": "adopted",
        "adoption": adopted.event_id,
        "file": None,
    }
    brief_json = json.loads(Path(result.files["json"]).read_text())
    assert sum(i["section"] == "top" for i in brief_json["items"]) <= 1
    assert {
        e.policy_version for e in store.read(event_types=["story.scored"]) if e.run_id == result.run_id
    } == {adopted.payload["version"]}
    back = brief("policy", "rollback", "--reason", "too few", "--config", str(config))
    assert back.returncode == 0, back.stderr
    daily_brief(DAY, str(config))
    after = started()
    assert after["origin"] == "adopted" and after["version"] == configured["version"]
    assert datetime.now(UTC) >= adopted.occurred_at


@pytest.mark.usefixtures("prefect_harness")
def test_a_person_s_act_re_renders_under_the_adopted_policy(tmp_path: Path) -> None:
    """A retraction after an adoption publishes its new version under the adopted policy, as the
    next run would, not under the config's own ``[policy]``."""
    from flows.daily import daily_brief

    config = sample(tmp_path)
    store = load_settings(str(config)).storage.event_store()
    first = json.loads(Path(daily_brief(DAY, str(config)).files["json"]).read_text())
    assert sum(i["section"] == "top" for i in first["items"]) > 1
    done = brief(
        "policy", "adopt", str(candidate(tmp_path / "c", top_stories=1)), "--reason", "one lead",
        "--config", str(config),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [adopted] = store.read(event_types=["policy.adopted"])
    # a run and a backfill say on screen which policy decided
    said = f"policy {adopted.payload['version']} adopted"
    for command in (("run", "--date", DAY), ("backfill", "--start", DAY, "--end", DAY)):
        done = brief(*command, "--config", str(config), env={"COLUMNS": "200"})
        assert done.returncode == 0 and said in done.stdout, done.stdout + done.stderr
        assert "(the config's own [policy]," in done.stdout and "is not used)" in done.stdout
    last = first["items"][-1]["story_id"]
    done = brief("retract", last, "--note", "wrong", "--date", DAY, "--config", str(config))
    assert done.returncode == 0, done.stderr
    newest = store.read(event_types=["brief.published"])[-1]
    assert newest.policy_version == adopted.payload["version"] != first["policy_version"]
    again = json.loads(Path(newest.payload["files"]["json"]).read_text())
    assert sum(i["section"] == "top" for i in again["items"]) <= 1
    assert last not in {i["story_id"] for i in again["items"] if i["section"] != "retracted"}
    kept = first["items"][0]["story_id"]
    case = brief("regress", "add", "--date", DAY, "--story", kept, "--expect", "core", "--by", "ana",
                 "--config", str(config))  # fmt: skip
    assert case.returncode == 0, case.stderr
    replayed = brief("evaluate", "--regression", "--config", str(config))
    said = replayed.stdout + replayed.stderr
    assert f"the policy in force ({adopted.payload['version']}): " in said and "in force policy" not in said


def test_a_candidate_file_reads_back_to_the_policy_it_was_written_from(tmp_path: Path) -> None:
    """What 'brief learn' writes: every setting, nested tables and awkward strings included."""
    from ops.candidate import candidate_toml
    from tasks.settings import CategorySettings, LLMSettings, PolicySettings, read_candidate

    base = PolicySettings()
    topic = base.topic.model_copy(
        update={"keywords": ['say "AI"', "back\\slash", "tab\there", "línea\nnueva", "🤖", "del\x7f"]}
    )
    policy = base.model_copy(
        update={
            "max_questions": 3,
            "relevance_margin": 0.2,
            "near_duplicate_threshold": 1e-05,
            "unverified": "drop",
            "topic": topic,
            "categories": [
                *base.categories[:2],
                CategorySettings(name="robots", keywords=["robot"], weight=2.5),
            ],
        }
    )
    llm = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", tasks=["relevance"], prompts=str(tmp_path))
    file = tmp_path / "cand.toml"
    file.write_text(candidate_toml(policy, "builtin:ai", file.name, llm), encoding="utf-8")
    config = load_settings(str(REPO / "samples" / "brief.toml"))
    read = read_candidate(str(file), config, "FILE")
    assert read.policy == policy and read.llm == llm
    assert f"brief policy adopt {file.name} --by NAME" in file.read_text()


def test_evaluate_compares_a_candidate_with_the_policy_in_force(tmp_path: Path) -> None:
    config = sample(tmp_path)
    store = load_settings(str(config)).storage.event_store()
    first = candidate(tmp_path / "a", top_stories=3)
    done = brief("policy", "adopt", str(first), "--by", "ana", "--reason", "three", "--config", str(config))
    assert done.returncode == 0, done.stderr
    [adopted] = store.read(event_types=["policy.adopted"])
    second = candidate(tmp_path / "b", top_stories=2)
    done = brief("evaluate", "--policy", str(second), "--config", str(config))  # the stored days by default
    assert done.returncode == 0, done.stderr
    [evaluated] = store.read(event_types=["policy.evaluated"])
    assert evaluated.payload["current_policy"] == adopted.payload["version"]
    assert f"current {adopted.payload['version']}" in done.stdout


def _stories(store, run_id: str) -> set[tuple[str, frozenset[str]]]:
    """The stories a run decided: what decided each (the pair model's digest) and its members."""
    return {
        (e.payload["decided_by"], frozenset(e.payload["members"]))
        for e in store.read(event_types=["story.clustered"])
        if e.run_id == run_id
    }


@pytest.mark.usefixtures("prefect_harness")
def test_an_adopted_policy_keeps_its_shipped_models_when_a_new_release_changes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new release of the shipped pair and editorial models does not change what an adopted policy
    decides: the adoption keeps both by digest, and a run of a day it decided reads the kept copies
    and gives the same stories and the same brief under the same policy version; the config's own
    policy, adopted by nobody, decides by the new release."""
    from flows.daily import daily_brief
    from tasks import editorial, pairs

    shipped = tmp_path / "models"  # the shipped models, in a copy this test may change
    shutil.copytree(REPO / "tasks" / "models", shipped)
    monkeypatch.setattr(pairs, "MODELS_DIR", shipped)
    monkeypatch.setattr(editorial, "MODELS_DIR", shipped)
    config = sample(tmp_path)
    store = load_settings(str(config)).storage.event_store()
    file = tmp_path / "c" / "candidate.toml"  # builtin:ai and builtin:stories, the defaults
    file.parent.mkdir()
    file.write_text("[policy]\ntop_stories = 3\n")
    done = brief("policy", "adopt", str(file), "--reason", "r", "--config", str(config))
    assert done.returncode == 0, done.stderr
    [adopted] = store.read(event_types=["policy.adopted"])
    kept = {a["kind"]: a for a in adopted.payload["artefacts"]}
    pair_release, editorial_release = shipped / "stories.pairs.json", shipped / "ai.json"
    assert kept["story_model"]["name"] == "builtin:stories" and kept["model"]["name"] == "builtin:ai"
    assert kept["story_model"]["digest"] == digest_of(pair_release.read_bytes())
    first = daily_brief(DAY, str(config))
    published, items = _stories(store, first.run_id), _items(first)
    assert len(published) > 1 and items, published  # stories a model that joins every pair would merge

    # a new release: every pair of reports is one story, and no story is on the topic
    pair_model = json.loads(pair_release.read_text())
    pair_release.write_text(json.dumps({**pair_model, "intercept": 50.0}))
    model = json.loads(editorial_release.read_text())
    editorial_release.write_text(
        json.dumps({**model, "relevance": {**model["relevance"], "intercept": -50.0}})
    )
    fresh = sample(tmp_path / "fresh")  # the same day, under the config's own policy
    fresh_store = load_settings(str(fresh)).storage.event_store()
    released = daily_brief(DAY, str(fresh))
    assert {m for _, m in _stories(fresh_store, released.run_id)} != {m for _, m in published}
    assert _items(released) != items
    again = daily_brief(DAY, str(config))
    assert _stories(store, again.run_id) == published and _items(again) == items
    started = [e for e in store.read(event_types=["run.started"]) if e.run_id == again.run_id]
    assert started[0].payload["policy"]["version"] == adopted.payload["version"]
    shown = brief("policy", "show", "--all", "--config", str(config))
    assert f'story_model = "{kept["story_model"]["digest"][:12]}"' in shown.stdout, shown.stdout


def _items(result) -> list[tuple[str, str]]:
    """A published brief's items: story and section."""
    document = json.loads(Path(result.files["json"]).read_text())
    return [(i["story_id"], i["section"]) for i in document["items"]]


def test_a_pair_model_is_one_change_by_its_digest_or_its_name() -> None:
    """The pair model is a change of ``story_model`` alone: its digest, or its name where it has no
    file (``rules``) or where an adoption made before pair models were kept names it alone."""

    def held(ref: str, digest: str | None) -> PolicyTables:
        kept = [{"kind": "story_model", "name": ref, "digest": digest, "path": "p"}] if digest else []
        return PolicyTables.model_validate(
            {"policy": {"story_model": ref, "top_stories": 5}, "artefacts": kept}
        )

    older = held("builtin:stories", None)
    kept = held("builtin:stories", "ac140209ebd7aa")
    released = held("builtin:stories", "0c4e11aa22bb33")
    assert changes(older, kept) == [
        {"key": "story_model", "before": "builtin:stories", "after": "ac140209ebd7"}
    ]
    assert changes(kept, released) == [
        {"key": "story_model", "before": "ac140209ebd7", "after": "0c4e11aa22bb"}
    ]
    assert changes(held("rules", None), kept) == [
        {"key": "story_model", "before": "rules", "after": "ac140209ebd7"}
    ]
    assert changes(kept, held("/elsewhere/same.pairs.json", "ac140209ebd7aa")) == []
