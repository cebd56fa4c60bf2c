"""`brief review` at a real pseudo-terminal (a real process) and from a file (in this process);
answers become a new brief version."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import sys
import time
from datetime import date
from pathlib import Path

import polars as pl

from storage.projections import materialize
from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import Completed, brief
from tests.conftest import REPO

DAY = "2025-08-06"


def setup(tmp_path: Path) -> Path:
    """The sample's feeds asking three questions: whether the two reports of Northwind's round are one
    story (asked whichever decides the stories, the pair model or the rules) and two categories."""
    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        "[policy]\nmin_category_confidence = 0.99\n"
        "max_questions = 3\nrelevance_margin = 0.0\n"
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\non_topic = true\n'
        '[[sources]]\nname = "techwire"\nurl = "file://feeds/techwire/{date}.xml"\n'
    )
    return config


def store_of(config: Path) -> ParquetEventStore:
    return ParquetEventStore(load_settings(str(config)).storage.root)


def cli(*args: str) -> Completed:
    return brief(*args, env={"COLUMNS": "200"})


def questions(config: Path) -> list[dict]:
    lines = cli(
        "events", "--config", str(config), "--type", "confirmation.requested", "--format", "jsonl"
    ).stdout
    return [json.loads(line)["payload"] for line in lines.splitlines()]


def northwind_items(brief: dict) -> list[int]:
    """How many articles each item of Northwind's round cites (the lab's note and techwire's report
    of it, told from the investor's side: a pair either story decision asks about)."""
    return [len(i["citations"]) for i in brief["items"] if "Northwind" in i["title"]]


def test_review_at_a_terminal_then_the_next_run_asks_nothing(tmp_path: Path, prefect_harness: None) -> None:
    from flows.daily import daily_brief

    config = setup(tmp_path)
    first = daily_brief(DAY, str(config))
    v1_path = Path(store_of(config).base) / "briefs" / DAY / "v1.json"
    v1_before = v1_path.read_bytes()
    asked = questions(config)
    assert len(asked) == 3 and any(q["field"] == "same_story" for q in asked)
    # the two reports of Northwind's round are apart until someone says they are one story
    assert sorted(northwind_items(json.loads(Path(first.files["json"]).read_text()))) == [1, 1]

    pid, fd = pty.fork()
    if pid == 0:  # the child: brief review at a terminal
        os.chdir(REPO)
        os.execv(
            sys.executable,
            [sys.executable, "-m", "flows.cli", "review", "--date", DAY, "--config", str(config)],
        )
    screen, typed = b"", []
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
        if b"answer [" in screen.rsplit(b"\n", 1)[-1]:
            current = screen.rsplit(b"<typed>", 1)[-1]  # this question only
            northwind_pair = b"same story" in current and current.count(b"Northwind") == 2
            yes = re.search(rb"(\d+)\) yes", current)
            # "yes" by its number: the two reports of Northwind's round; Enter for the rest
            reply = yes.group(1) + b"\n" if northwind_pair and yes else b"\n"
            typed.append(reply)
            os.write(fd, reply)
            screen += b"<typed>\n"
    _, status = os.waitpid(pid, 0)
    text = screen.decode(errors="replace")
    assert os.waitstatus_to_exitcode(status) == 0, text[-2000:]
    assert sorted(typed)[:2] == [b"\n", b"\n"] and sorted(typed)[2].strip().isdigit()
    numbered = re.findall(r"(\d+)\) ([a-z-]+)", text)  # one number per answer, for good
    assert len({answer: n for n, answer in numbered}) == len(set(numbered)), numbered
    assert "Batch 1 of 1" in text and "[default]" in text
    assert "3 answers recorded" in text and "new version v2" in text

    store = store_of(config)
    v2 = json.loads((Path(store.base) / "briefs" / DAY / "v2.json").read_text())
    assert northwind_items(v2) == [2]  # the answer merged the story
    assert v1_path.read_bytes() == v1_before  # version 1 stays as it was
    resolved = store.read(event_types=["confirmation.resolved"])
    assert sorted(e.payload["by"] for e in resolved) == ["default", "default", "human"]
    [merged] = store.read(event_types=["story.merged"])

    again = daily_brief(DAY, str(config))
    assert again.changed is False and again.version == 2
    # the run's clustering names the person's link among what it read (lineage)
    clustered = [e for e in store.read(event_types=["story.clustered"]) if e.run_id == again.run_id]
    bound = [e for e in clustered if merged.event_id in e.source_event_ids]
    assert len(bound) == 1 and set(merged.payload["article_ids"]) <= set(bound[0].payload["members"])
    open_now = materialize(store, "questions", days=[store.days()[-1]])
    assert open_now.filter(open_now["status"] == "open").height == 0  # nothing is asked again

    versions = materialize(store, "briefs")
    assert versions["version"].to_list() == [1, 2]
    as_of_v1 = materialize(store, "briefs", as_of=versions["published_at"][0])
    assert as_of_v1["version"].to_list() == [1]


def test_review_from_an_answers_file(tmp_path: Path, prefect_harness: None) -> None:
    from flows.daily import daily_brief

    config = setup(tmp_path)
    daily_brief(DAY, str(config))
    asked = {q["question_id"]: q for q in questions(config)}
    same = next(
        (q for q in asked.values() if q["field"] == "same_story" and q["prompt"].count("Northwind") == 2),
        None,
    )
    assert same is not None, [q["prompt"] for q in asked.values()]

    bad = tmp_path / "bad.json"
    for content, message in [
        ('{"q-nope": "yes"}', "'q-nope' is not an open question of 2025-08-06"),
        (json.dumps({same["question_id"]: "perhaps"}), "'perhaps' is not one of no, yes"),
        ("[1, 2]", "must be a JSON object"),
        ("{", "is not JSON"),
    ]:
        bad.write_text(content)
        done = cli("review", "--date", DAY, "--config", str(config), "--answers", str(bad))
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert store_of(config).read(event_types=["confirmation.resolved"]) == []  # nothing was written

    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({same["question_id"]: "yes"}))
    done = cli("review", "--date", DAY, "--config", str(config), "--answers", str(answers))
    assert done.returncode == 0, done.stderr
    assert "1 answer recorded" in done.stdout and "new version v2" in done.stdout
    v2 = json.loads((Path(store_of(config).base) / "briefs" / f"{DAY}.json").read_text())
    assert v2["version"] == 2 and northwind_items(v2) == [2]
    left = cli("review", "--date", DAY, "--config", str(config), "--answers", str(answers))
    assert left.returncode == 2 and "is not an open question" in left.stderr


def test_an_answer_is_applied_to_the_same_question_on_another_day(
    tmp_path: Path, prefect_harness: None
) -> None:
    """Answered on one day, the same question (subject, field, value) raised by another day's run is
    not asked again: that run records the earlier answer as applied."""
    from flows.daily import daily_brief

    feeds = (REPO / "tests" / "fixtures" / "feeds" / "undated").as_uri()
    config = tmp_path / "brief.toml"
    config.write_text(
        f'[storage]\nroot = "store"\n[[sources]]\nname = "undated"\nurl = "{feeds}/{{date}}.xml"\n'
    )
    daily_brief("2025-08-06", str(config))
    [asked] = [q for q in questions(config) if q["field"] == "published_at"]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({asked["question_id"]: "skip"}))
    done = cli("review", "--date", "2025-08-06", "--config", str(config), "--answers", str(answers))
    assert done.returncode == 0, done.stderr

    daily_brief("2025-08-07", str(config))  # the undated item is in the feed again
    store = store_of(config)
    applied = [
        e
        for e in store.read(event_types=["confirmation.resolved"])
        if e.brief_date.isoformat() == "2025-08-07"
    ]
    assert [(e.payload["by"], e.payload["answer"], e.payload["applied_from"]) for e in applied] == [
        ("earlier-answer", "skip", asked["question_id"])
    ]
    open_now = materialize(store, "questions", days=store.days()).filter(pl.col("status") == "open")
    assert "published_at" not in open_now["field"].to_list()  # nothing about it is asked on the 7th


def test_an_answer_outside_the_candidates_is_refused() -> None:
    from tasks import review

    q = review.same_story_question("a", "A", "b", "B", 0.5)
    assert review.check_answer(q.payload("b1"), "maybe") == "'maybe' is not one of no, yes"


def test_ctrl_c_at_the_review_prompt_stops_at_once_with_130_and_records_nothing(
    tmp_path: Path, prefect_harness: None
) -> None:
    """At a real terminal: the first answer typed, then Ctrl-C at the second prompt: the command ends
    within seconds (it does not wait for Enter), exit 130, one line, and no answer is recorded."""
    import signal

    from flows.daily import daily_brief

    config = setup(tmp_path)
    daily_brief(DAY, str(config))
    before = len(store_of(config).read())
    pid, fd = pty.fork()
    if pid == 0:  # the child: brief review at a terminal
        os.chdir(REPO)
        os.execv(
            sys.executable,
            [sys.executable, "-m", "flows.cli", "review", "--date", DAY, "--config", str(config)],
        )
    screen, prompts, pressed = b"", 0, None
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if pressed is not None and time.monotonic() - pressed > 10:
            os.kill(pid, signal.SIGKILL)  # still waiting for Enter: the failure this test is about
            break
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
        if pressed is None and b"answer [" in screen.rsplit(b"\n", 1)[-1]:
            prompts += 1
            if prompts == 1:
                os.write(fd, b"\n")  # the first answer: its default
                screen += b"<typed>\n"
            else:
                time.sleep(0.5)  # at the prompt, waiting for a line
                os.kill(pid, signal.SIGINT)  # what the terminal sends for Ctrl-C
                pressed = time.monotonic()
    _, status = os.waitpid(pid, 0)
    ended = time.monotonic()
    text = screen.decode(errors="replace")
    assert pressed is not None, text[-2000:]
    assert os.waitstatus_to_exitcode(status) == 130, text[-2000:]
    assert ended - pressed < 5, ended - pressed
    assert "interrupted: nothing recorded, not even the 1 answer given" in text and "Traceback" not in text
    assert len(store_of(config).read()) == before  # no answer, no version


def sample_config(tmp_path: Path) -> Path:
    """The sample's own config on a copy of its feeds: the TinyEval note's relevance (0.50) is asked."""
    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        (REPO / "samples" / "brief.toml").read_text().replace('"../var/sample-store"', '"store"')
    )
    return config


def test_a_mark_answers_the_open_question_about_the_story_it_marks(
    tmp_path: Path, prefect_harness: None
) -> None:
    """`--mark STORY=related` closes the day's open question "is STORY on the topic?" with the answer
    the mark gives, citing the mark; the other questions stay open and the command says how many."""
    from flows.daily import daily_brief

    config = sample_config(tmp_path)
    daily_brief(DAY, str(config))
    asked = [q for q in questions(config) if q["field"] == "relevance"]
    tiny = next(q for q in asked if "TinyEval" in q["prompt"])
    assert len(asked) == 2, [q["prompt"] for q in asked]

    link = "https://labnotes.example/2025/08/tinyeval"
    done = cli("review", "--date", DAY, "--config", str(config), "--mark", f"{link}=related")
    assert done.returncode == 0, done.stderr
    assert (
        f"question {tiny['question_id']}" in done.stdout and "answered 'related' by the mark" in done.stdout
    )
    assert "2 questions still open" in done.stdout  # the other one on the topic, and the same-story one
    assert "1 mark recorded." in done.stdout  # a mark is no answer, and one is not "(s)"

    store = store_of(config)
    [resolved] = store.read(event_types=["confirmation.resolved"])
    [marked] = [e for e in store.read(event_types=["article.corrected"]) if e.payload["field"] == "relevance"]
    assert resolved.payload["question_id"] == tiny["question_id"]
    assert (resolved.payload["answer"], resolved.payload["by"]) == ("related", "human")
    assert resolved.source_event_ids == (marked.event_id,)
    still = materialize(store, "questions", days=[date.fromisoformat(DAY)]).filter(pl.col("status") == "open")
    assert still.height == 2 and tiny["question_id"] not in still["question_id"].to_list()

    # the question left, asked at the end of piped input: the closing line starts on its own
    piped = brief("review", "--date", DAY, "--config", str(config), input="", env={"COLUMNS": "200"})
    assert piped.returncode == 0 and "answer [off-topic]: \nNo answers given" in piped.stdout, piped.stdout

    # the day as it stood when v1 was published: one version, the question still open
    def replay(projection: str, as_of: str) -> Completed:
        return cli(
            "replay", "--config", str(config), "--date", DAY, "--projection", projection, "--as-of", as_of
        )

    versions = replay("briefs", "v1")
    assert versions.returncode == 0 and "(v1 published): 1 row" in versions.stdout, versions.stdout
    then = replay("questions", "v1").stdout
    assert f"{tiny['question_id']}  confirmation  open" in then, then
    assert replay("briefs", "v3").stderr.strip().startswith("error: --as-of v3: no version 3 of the brief")
    # a time before anything of the day was written says so, and when its first event was
    before = replay("briefs", "2025-08-06T18:00:00Z")
    assert ": 0 rows" in before.stdout and "Nothing of 2025-08-06 was written by then" in before.stdout


def test_the_lines_of_answers_and_marks_wrap_at_words_under_an_indent_within_80_columns(
    tmp_path: Path, prefect_harness: None
) -> None:
    """`--answers FILE` and `--mark` say what they recorded in lines of 80 columns at most, wrapped at
    words, each line after the first indented; an id or a path is never split (one wider than a line
    stands whole on its own line)."""
    from flows.daily import daily_brief

    config = sample_config(tmp_path)
    daily_brief(DAY, str(config))
    tiny = next(q for q in questions(config) if "TinyEval" in q["prompt"])
    other = next(q for q in questions(config) if q["question_id"] != tiny["question_id"])
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({other["question_id"]: other["default"]}))
    link = "https://labnotes.example/2025/08/tinyeval"
    done = brief(
        "review", "--date", DAY, "--config", str(config), "--answers", str(answers), "--mark", f"{link}=related",
        env={"COLUMNS": "80"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # over 80 only a path, or the command that asks the open questions, whole on a line of its own
    whole = f"  brief review --date {DAY} --config {config}"
    assert all(len(line) <= 80 or len(line.split()) == 1 or line == whole for line in lines), done.stdout
    assert lines[lines.index(whole) - 1] == "1 question still open; this asks them:", done.stdout
    first = next(i for i, line in enumerate(lines) if line.startswith("1 answer and 1 mark recorded."))
    settled = next(i for i, line in enumerate(lines) if line.startswith(f"question {tiny['question_id']}"))
    for start, end in ((first, settled), (settled, settled + 2)):
        assert end - start >= 2 and all(line.startswith("  ") for line in lines[start + 1 : end]), done.stdout
    brief_md = str(Path(store_of(config).base) / "briefs" / f"{DAY}.md")
    assert any(line.strip() == brief_md or line.endswith(f" {brief_md}") for line in lines), done.stdout
    said = " ".join(line.strip() for line in lines[settled : settled + 2])
    assert (
        said
        == f"question {tiny['question_id']} (is {tiny['subject']} on the topic?) answered 'related' by the mark"
    )


def test_an_answer_given_with_a_mark_keeps_its_own_answer(tmp_path: Path, prefect_harness: None) -> None:
    """A file that answers the question and marks its story: the question keeps the answer given."""
    from flows.daily import daily_brief

    config = sample_config(tmp_path)
    daily_brief(DAY, str(config))
    tiny = next(q for q in questions(config) if "TinyEval" in q["prompt"])
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            {tiny["question_id"]: "core", "marks": {"https://labnotes.example/2025/08/tinyeval": "lead"}}
        )
    )
    done = cli("review", "--date", DAY, "--config", str(config), "--answers", str(answers))
    assert done.returncode == 0, done.stderr
    resolved = store_of(config).read(event_types=["confirmation.resolved"])
    assert [(e.payload["question_id"], e.payload["answer"]) for e in resolved] == [
        (tiny["question_id"], "core")
    ]


def test_a_bad_mark_is_one_line_on_stderr_and_nothing_on_stdout(
    tmp_path: Path, prefect_harness: None
) -> None:
    from flows.daily import daily_brief

    config = sample_config(tmp_path)
    daily_brief(DAY, str(config))
    link = "https://labnotes.example/2025/08/tinyeval"
    done = cli("review", "--date", DAY, "--config", str(config), "--mark", f"{link}=bogus")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == "error: mark 'bogus' is not one of core, related, off-topic, lead"
    assert store_of(config).read(event_types=["article.corrected", "confirmation.resolved"]) == []


def test_answering_no_to_a_same_story_question_says_the_reports_stay_two_stories(
    tmp_path: Path, prefect_harness: None
) -> None:
    """ "No" to "are these the same story?" leaves two stories as they were: said so, not "parted …
    into two stories" as if they had been one."""
    from flows.daily import daily_brief

    config = setup(tmp_path)
    daily_brief(DAY, str(config))
    [pair] = [q for q in questions(config) if q["field"] == "same_story"]
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({pair["question_id"]: "no"}))
    done = cli("review", "--date", DAY, "--answers", str(answers), "--config", str(config))
    assert done.returncode == 0, done.stdout + done.stderr
    said = " ".join(done.stdout.split())
    assert "parted" not in said, said
    assert re.search(r"“[^”]*Northwind[^”]*” and “[^”]*Northwind[^”]*” stay two stories", said), said
