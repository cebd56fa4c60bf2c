"""The benches judge labelled days nobody here has seen as soon as their files are in ``labels/``.

A data folder of our own making stands in for the shared one: a tech day, 2027-01-06, with its
four outlets' snapshots in a month's folder of their own (``month-2027/feeds``, beside where the
labelled tech days have theirs) and its labels in ``tech-2027-01-06.json``, and a labels file of a
day with no snapshots. ``bench/editorial.py``'s and ``bench/dedup_quality.py``'s
unseen parts find them, publish the day with the policy as shipped and score it against its
labels: none of the 13 labelled days is needed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import time
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.real_days import SEEN_DAYS, unseen_blocks

DAY = "2027-01-06"
# (outlet, link slug, title, summary, hour, relevance, importance, story)
ITEMS = [
    ("techcrunch", "atlas-3", "Lumenai releases Atlas-3, an open-weight language model for coding",
     "The AI lab Lumenai released Atlas-3, an open-weight large language model that tops coding "
     "benchmarks; the weights are free to download.", 9, "core", 3, "s1"),
    ("wired", "lumenai-atlas", "Lumenai's Atlas-3 open model is here, and it codes fast",
     "Lumenai's new open-weight language model Atlas-3 writes code faster than the AI models before "
     "it, the lab said on Wednesday.", 11, "core", 3, "s1"),
    ("arstechnica", "corevolt-probe", "EU opens antitrust probe into AI chip maker Corevolt",
     "European regulators are investigating how Corevolt prices the GPUs that AI labs train their "
     "models on.", 10, "core", 2, "s2"),
    ("techcrunch", "vacuums", "The best robot vacuums of 2027",
     "We tested eleven robot vacuums on carpet, tiles and pet hair.", 8, "none", 0, "s3"),
    ("wired", "lander", "NASA delays its lunar lander test to March",
     "A valve problem pushes the uncrewed test flight back by two months.", 12, "none", 0, "s4"),
    ("arstechnica", "laptop", "Review: a great laptop with a bad keyboard",
     "The new ultrabook has a bright screen and long battery life, but its keys wobble.", 13,
     "none", 0, "s5"),
    ("tweakers", "android", "Nieuwe Android-update verbetert batterijduur van telefoons",
     "De update van januari maakt telefoons zuiniger en lost een bug in de camera-app op.", 7,
     "none", 0, "s6"),
    ("techcrunch", "quillpay", "Quillpay raises $40M for invoicing software",
     "The startup sells invoicing tools to small businesses.", 14, "none", 0, "s7"),
]  # fmt: skip


def rss(outlet: str, items: list[tuple]) -> str:
    entries = "".join(
        f"<item><title>{title}</title><link>https://{outlet}.example/{slug}</link>"
        f"<description>{summary}</description>"
        f"<pubDate>Wed, 06 Jan 2027 {hour:02d}:00:00 +0000</pubDate></item>"
        for _, slug, title, summary, hour, *_ in items
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
        f"<title>{outlet}</title><link>https://{outlet}.example/</link>{entries}</channel></rss>"
    )


@pytest.fixture
def data(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    for outlet in ("arstechnica", "techcrunch", "tweakers", "wired"):
        mine = [i for i in ITEMS if i[0] == outlet]
        (folder / "month-2027" / "feeds" / outlet).mkdir(parents=True)
        (folder / "month-2027" / "feeds" / outlet / f"{DAY}.xml").write_text(rss(outlet, mine))
    labels = folder / "labels"
    labels.mkdir()
    rows = [
        {"id": f"https://{o}.example/{slug}", "source": o, "title": t, "published": f"{DAY}T{h:02d}:00:00Z",
         "snapshots": [DAY], "relevance": rel, "importance": imp, "story": story, "digest": False,
         "covers": [], "why": "test"}
        for o, slug, t, _, h, rel, imp, story in ITEMS
    ]  # fmt: skip
    (labels / f"tech-{DAY}.json").write_text(json.dumps(rows))
    (labels / "tech-2027-02-01.json").write_text("[]")  # labelled, but its snapshots are not there
    (labels / "tech-2025-07-09.json").write_text("[]")  # a day the models were fitted on: never unseen
    return folder


def bench(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_days_nobody_has_seen_are_found_in_blocks_and_the_seen_ones_never(data: Path) -> None:
    assert "2025-07-09" in SEEN_DAYS
    assert unseen_blocks(data / "labels") == {"tech": ((DAY,), ("2027-02-01",))}


def test_the_editorial_bench_publishes_an_unseen_day_as_shipped_and_scores_it(
    data: Path, tmp_path: Path, prefect_harness: None
) -> None:
    editorial = bench("editorial")
    args = argparse.Namespace(mix=None)
    found, notes = editorial.unseen(args, data, tmp_path / "cache", time.perf_counter())
    # the day's warm-up days have no snapshots here: it is briefed without them, and says so
    assert notes == [
        f"- {DAY}: its warm-up day 2027-01-04 has no snapshots; briefed without it",
        f"- {DAY}: its warm-up day 2027-01-05 has no snapshots; briefed without it",
        f"- 2027-02-01: no snapshots of its feeds in {data}/*/feeds; not judged",
    ]
    [(block, rows)] = found["tech"].items()
    assert block == (DAY,)
    row = rows[editorial.UNSEEN_VARIANT][DAY]
    # the day's three AI reports of importance >= 2 are what recall counts; its two importance-3
    # reports (one launch) what the headline lead counts; the brief's items what precision counts
    assert row["recall"][1] == 3 and row["headline"][1] == 2
    assert row["precision"][1] == row["items"] >= 1
    assert row["recall"][0] >= 2 and row["headline"][0] == 2, row
    assert "The best robot vacuums of 2027" not in row["off_topic_in"], row
    table = "\n".join(editorial.mix_table(found["tech"], {}, editorial.UNSEEN_VARIANT))
    assert f"| {DAY} | as shipped |" in table and "| **pooled** | as shipped |" in table


def test_the_pair_bench_judges_an_unseen_day_with_the_shipped_model(data: Path) -> None:
    lines = "\n".join(bench("dedup_quality").unseen(data))
    assert "### tech, days nobody here has seen" in lines
    # the launch's two English reports are one labelled pair; whatever is joined is counted
    [row] = [line for line in lines.splitlines() if line.startswith(f"| {DAY} |")]
    after = row.split(" | ")[2]
    right, missed = (
        int(after.split("(")[1].split(" right")[0]),
        int(after.split(", ")[-1].split(" missed")[0]),
    )
    assert right + missed == 1, row
    assert "- 2027-02-01: no snapshot of its feeds holds an item of its window; not judged" in lines


def test_each_unseen_day_and_its_warm_up_days_are_read_from_the_folder_that_holds_them(
    data: Path, tmp_path: Path
) -> None:
    """Two months laid out in folders of their own: a day of the second is briefed from its own
    snapshots, and so are the warm-up days before a block that starts a month."""
    from datetime import date

    from tests.judgement import missing_feeds, unseen_feed_set

    march = data / "march-2027" / "feeds"
    for outlet in ("arstechnica", "techcrunch", "tweakers", "wired"):
        (march / outlet).mkdir(parents=True)
        for day in ("2027-03-01", "2027-03-02"):
            (march / outlet / f"{day}.xml").write_text(rss(outlet, [i for i in ITEMS if i[0] == outlet]))
    (data / "labels" / "tech-2027-03-02.json").write_text("[]")
    # the warm-up days of 2027-01-06 are in January's folder; the labelled day is in its own
    january = data / "month-2027b" / "feeds"
    for outlet in ("arstechnica", "techcrunch", "tweakers", "wired"):
        (january / outlet).mkdir(parents=True)
        (january / outlet / "2027-01-05.xml").write_text(rss(outlet, []))
    blocks = unseen_blocks(data / "labels")["tech"]
    assert blocks == ((DAY,), ("2027-02-01",), ("2027-03-02",))
    feeds = unseen_feed_set(data, "tech", blocks, tmp_path / "links")
    assert missing_feeds(feeds, date(2027, 3, 2)) is None and missing_feeds(feeds, date(2027, 3, 1)) is None
    assert missing_feeds(feeds, date.fromisoformat(DAY)) is None
    assert missing_feeds(feeds, date(2027, 1, 5)) is None
    assert missing_feeds(feeds, date(2027, 2, 1)) is not None


def test_no_label_of_a_day_nobody_has_seen_reaches_what_the_benches_fit_on(data: Path) -> None:
    """A spanning ``relevance-*.json`` of a new day labels items on every day (a later file's labels
    over an earlier one's): what the folds and the shipped model learn from leaves it out, and the
    new days' own files, while the labelled days' files stay."""
    from datetime import date

    from ops import learn
    from tests.judgement import seen_labels

    link = "https://techcrunch.example/atlas-3"

    def row(relevance: str, snapshots: list[str]) -> dict:
        return {"id": link, "source": "techcrunch", "title": "Atlas-3", "published": "2025-08-07T09:00:00Z",
                "snapshots": snapshots, "relevance": relevance, "importance": 2}  # fmt: skip

    labels = data / "labels"
    (labels / "relevance-2025-08-05..07.json").write_text(json.dumps([row("none", ["2025-08-07"])]))
    (labels / "relevance-2025-08-07..09.json").write_text(
        json.dumps([row("core", ["2025-08-07", "2025-08-08"])])
    )
    assert learn.read_labels(labels).on(date(2025, 8, 7))[link].relevance == "core"  # the new day's
    seen = seen_labels(labels)
    assert seen.on(date(2025, 8, 7))[link].relevance == "none"
    assert set(seen.by_day) == {date(2025, 7, 9)} and len(seen.spanning) == 1


def test_a_day_beside_a_labelled_day_here_is_judged_on_the_items_not_learnt(
    data: Path, tmp_path: Path
) -> None:
    """2025-07-10 shares items with 2025-07-09 (labelled here, learnt by the shipped models): it is
    judged, on the items they did not learn. An item of the new day labelled on a day here, and its
    story mates, are left out of both benches' scores, and the day says how many."""
    from datetime import date

    from tests.judgement import beside_seen_notes, feed_sets, learnt_links, learnt_on, score_block

    atlas, wired, corevolt = (f"https://{o}.example/{s}" for o, s in
                              (("techcrunch", "atlas-3"), ("wired", "lumenai-atlas"), ("arstechnica", "corevolt-probe")))  # fmt: skip
    seen_row = {"id": atlas, "source": "techcrunch", "title": "Atlas-3", "published": "2025-07-09T09:00:00Z",
                "snapshots": ["2025-07-09"], "relevance": "core", "importance": 3, "story": "s9",
                "digest": False, "covers": [], "why": "test"}  # fmt: skip
    (data / "labels" / "tech-2025-07-09.json").write_text(json.dumps([seen_row]))
    (data / "labels" / "tech-2025-07-10.json").write_text("[]")
    assert unseen_blocks(data / "labels") == {"tech": (("2025-07-10",), (DAY,), ("2027-02-01",))}
    assert beside_seen_notes(data / "labels")[0].startswith("- 2025-07-10: within 2 days of 2025-07-09")

    learnt = learnt_links(data)
    assert atlas in learnt and corevolt not in learnt
    left = learnt_on(data / "labels" / f"tech-{DAY}.json", learnt)
    assert {atlas, wired} <= left and corevolt not in left  # Wired's report is one story with it
    [tech] = [f for f in feed_sets(data) if f.name == "tech-july"]
    brief = {"items": [
        {"title": "Atlas-3", "section": "top", "citations": [{"url": atlas}, {"url": wired}]},
        {"title": "Corevolt", "section": "top", "citations": [{"url": corevolt}]},
    ]}  # fmt: skip
    briefs = {d: {"items": []} for d in tech.briefed((date(2027, 1, 6),))} | {date(2027, 1, 6): brief}
    whole = score_block(data, tech, (DAY,), briefs)[DAY]
    judged = score_block(data, tech, (DAY,), briefs, {date(2027, 1, 6): left})[DAY]
    assert (whole["precision"], whole["recall"], whole["headline"]) == ((2, 2), (3, 3), (2, 2))
    assert (judged["precision"], judged["recall"], judged["headline"]) == ((1, 1), (1, 1), (0, 0))
    assert judged["left_out"] == (2, len(ITEMS))

    from ops.story_days import load_day

    day, left_entries, entries = bench("dedup_quality").without_learnt(load_day(data, DAY), learnt)
    assert (left_entries, entries) == (2, len(ITEMS))
    assert {e.id for e in day.entry.values() if e is not None} == {
        f"https://{o}.example/{s}" for o, s, *_ in ITEMS
    } - {atlas, wired}


def test_a_stories_only_day_is_read_from_the_folder_that_holds_its_snapshots(data: Path) -> None:
    """A new ``stories-<day>.json`` whose snapshots are in a month's folder of their own: its items
    are found there, as a relevance-labelled day's are."""
    from ops.story_days import load_day

    day = "2027-05-05"
    for outlet in ("techcrunch", "wired"):
        (data / "may-2027" / "feeds" / outlet).mkdir(parents=True)
        text = rss(outlet, [i for i in ITEMS if i[0] == outlet]).replace("06 Jan 2027", "05 May 2027")
        (data / "may-2027" / "feeds" / outlet / f"{day}.xml").write_text(text)
    links = [f"https://{o}.example/{slug}" for o, slug, *_ in ITEMS if o in ("techcrunch", "wired")]
    body = {"items": [{"source": link.split("//")[1].split(".")[0], "id": link} for link in links],
            "stories": [{"story": f"s{k}", "items": [link]} for k, link in enumerate(links)]}  # fmt: skip
    (data / "labels" / f"stories-{day}.json").write_text(json.dumps(body))
    assert unseen_blocks(data / "labels")["stories"] == ((day,),)
    loaded = load_day(data, day)
    assert len(loaded.items) == len(links) and all(loaded.entry.values())


def test_a_stories_only_day_of_the_ai_world_reads_its_feeds_as_configured(data: Path) -> None:
    """A new ``stories-<day>.json`` of the AI world's feeds: a trending repository is read as one
    (``repos``), as the guide configures that feed, not as a news report."""
    from ops.story_days import load_day

    day = "2027-06-02"
    feed = data / "aiweb" / "feeds" / "github_trends_daily"
    feed.mkdir(parents=True)
    link = "https://github.com/lumenai/atlas"
    feed.joinpath(f"{day}.xml").write_text(
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>trends</title>'
        f"<item><title>lumenai / atlas</title><link>{link}</link><description>An open coding model"
        "</description><pubDate>Wed, 02 Jun 2027 08:00:00 +0000</pubDate></item></channel></rss>"
    )
    body = {
        "items": [{"source": "github_trends_daily", "id": link}],
        "stories": [{"story": "s", "items": [link]}],
    }
    (data / "labels" / f"stories-{day}.json").write_text(json.dumps(body))
    [item] = load_day(data, day).items
    assert item.kind == "repos"


def test_a_story_id_is_read_within_its_own_labels_file(data: Path) -> None:
    """Two labels files of one day each number their stories from s1: an item of the other file's
    "s1" is not one story with the learnt item of this file's "s1", and is judged."""
    from datetime import date

    from tests.judgement import feed_sets, learnt_links, learnt_on

    atlas, wired = "https://techcrunch.example/atlas-3", "https://wired.example/lumenai-atlas"
    other = "https://news.example/unrelated"
    seen_row = {"id": atlas, "source": "techcrunch", "title": "Atlas-3", "published": "2025-07-09T09:00:00Z",
                "snapshots": ["2025-07-09"], "relevance": "core", "importance": 3, "story": "s9",
                "digest": False, "covers": [], "why": "test"}  # fmt: skip
    (data / "labels" / "tech-2025-07-09.json").write_text(json.dumps([seen_row]))
    aside = {
        **seen_row,
        "id": other,
        "source": "news",
        "title": "Unrelated",
        "story": "s1",
        "snapshots": [DAY],
    }
    (data / "labels" / f"aiweb-{DAY}.json").write_text(json.dumps([aside]))
    [tech] = [f for f in feed_sets(data) if f.name == "tech-july"]
    left = learnt_on(data / "labels" / tech.label_file(date.fromisoformat(DAY)), learnt_links(data))
    assert {atlas, wired} <= left  # this file's s1: the learnt report and its story mate
    assert other not in left  # the other file's s1 is another story


def test_the_collected_store_of_new_days_follows_every_block_s_warm_up_snapshots(
    data: Path, tmp_path: Path
) -> None:
    """The editorial bench reuses a new day's collected store only while the snapshots it was made
    from are as they were: those of a later block's warm-up days too, not only the first block's."""
    from datetime import date

    from tests.judgement import unseen_feed_set

    march = data / "march-2027" / "feeds"
    for outlet in ("arstechnica", "techcrunch", "tweakers", "wired"):
        (march / outlet).mkdir(parents=True)
        for day in ("2027-03-01", "2027-03-02"):
            (march / outlet / f"{day}.xml").write_text(rss(outlet, [i for i in ITEMS if i[0] == outlet]))
    (data / "labels" / "tech-2027-03-02.json").write_text("[]")
    blocks = unseen_blocks(data / "labels")["tech"]
    assert ("2027-03-02",) in blocks
    feeds = unseen_feed_set(data, "tech", blocks, tmp_path / "links")
    assert date(2027, 3, 1) in feeds.briefed((date(2027, 3, 2),))  # a warm-up day of the later block
    editorial = bench("editorial")
    before = editorial.snapshots_of(feeds, blocks)
    (march / "techcrunch" / "2027-03-01.xml").write_text(rss("techcrunch", ITEMS[:1]))  # re-fetched
    assert editorial.snapshots_of(feeds, blocks) != before


def test_a_brief_item_that_cites_a_learnt_report_is_not_judged_on_its_other_reports(data: Path) -> None:
    """An item of the brief that cites a report the shipped models learnt (with one they did not: a
    report wrongly joined to it, or a digest's part on its story) was chosen and placed on what they
    learnt: it counts neither against nor for the precision and top core of a new day. The unlearnt
    important report it cites still counts as cited for recall."""
    from datetime import date

    from tests.judgement import feed_sets, learnt_links, learnt_on, score_block

    atlas, vacuums, corevolt, lander = (f"https://{o}.example/{s}" for o, s in (
        ("techcrunch", "atlas-3"), ("techcrunch", "vacuums"), ("arstechnica", "corevolt-probe"), ("wired", "lander")))  # fmt: skip
    seen_row = {"id": atlas, "source": "techcrunch", "title": "Atlas-3", "published": "2025-07-09T09:00:00Z",
                "snapshots": ["2025-07-09"], "relevance": "core", "importance": 3, "story": "s9",
                "digest": False, "covers": [], "why": "test"}  # fmt: skip
    (data / "labels" / "tech-2025-07-09.json").write_text(json.dumps([seen_row]))
    day = date.fromisoformat(DAY)
    [tech] = [f for f in feed_sets(data) if f.name == "tech-july"]
    left = learnt_on(data / "labels" / tech.label_file(day), learnt_links(data))
    brief = {"items": [
        {"title": "Atlas-3, with the vacuums", "section": "top", "citations": [{"url": atlas}, {"url": vacuums}]},
        {"title": "Atlas-3, with Corevolt", "section": "top", "citations": [{"url": atlas}, {"url": corevolt}]},
        {"title": "Lander", "section": "more", "citations": [{"url": lander}]},
    ]}  # fmt: skip
    briefs = {d: {"items": []} for d in tech.briefed((day,))} | {day: brief}
    judged = score_block(data, tech, (DAY,), briefs, {day: left})[DAY]
    assert judged["precision"] == (0, 1) and judged["top_core"] == (0, 0), judged  # the lander alone
    assert judged["off_topic_in"] == ["Lander"]
    assert judged["recall"] == (1, 1)  # Corevolt's report is cited
