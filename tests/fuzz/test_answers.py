"""The answers file of ``brief review --answers``: answers recorded (the events ``ops.acts.answer``
records), or one ``InputError`` line and nothing written."""

from __future__ import annotations

import json
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path

from hypothesis import event, example, given
from hypothesis import strategies as st

from flows.review import answers_from_file
from ops.acts import Act, answer_events
from storage.errors import BriefError
from storage.events import new_event
from storage.store.memory import InMemoryEventStore
from tasks import review, steps
from tasks.collect import Fetched, Source, feed_events
from tasks.settings import parse_settings
from tests.fuzz import FUZZ, one_line
from tests.runs import hashing_run

DAY = date(2025, 8, 6)
LINK = "https://a.example/launch"
FEED = (
    "<rss version='2.0'><channel><item><title>OpenAI launches a model</title>"
    f"<link>{LINK}</link><pubDate>Wed, 06 Aug 2025 08:00:00 +0000</pubDate></item></channel></rss>"
).encode()
QUESTIONS = [
    review.same_story_question("art-1", "A launch", "art-2", "The launch", 0.55),
    review.category_question("st-1", "A launch", "models", 0.4, ["models", "funding", "policy"]),
    review.claim_question("st-1", "A launch", "amount", "$7.5 billion", "NOT_IN_SOURCES"),
    review.relevance_question("st-1", "A launch", "AI", "related", 0.52),
    review.publish_time_question("art-3", "Undated"),
]
IDS = [q.question_id for q in QUESTIONS]
SURROGATE = "\x00surrogate\x00"  # written into the file as the JSON escape of half a character


def context() -> steps.RunContext:
    """A day with one collected article and the five kinds of open question, in memory."""
    settings = parse_settings({"storage": {"root": "unused"}})
    store = InMemoryEventStore()
    at = datetime(2025, 8, 6, 9, tzinfo=UTC)
    source = Source("wire", "file:///feeds/{date}.xml")
    store.append(feed_events(source, DAY, "run-0", at=at, url="u", fetched=Fetched(FEED, 200)))
    asked = [
        new_event(
            "confirmation.requested",
            q.payload(f"{DAY}-b1"),
            brief_date=DAY,
            run_id="run-0",
            subject_id=q.subject,
            produced_by="review@1",
            occurred_at=at,
        )
        for q in QUESTIONS
    ]
    store.append(asked)
    return hashing_run(store, settings, DAY, "review-fuzz")


CTX = context()
OPEN = steps.open_questions(CTX)
FOLDER = Path(tempfile.mkdtemp(prefix="fuzz-answers-"))

answers = st.one_of(
    st.sampled_from(
        ["no", "yes", "models", "funding", "other", "remove", "keep", "core", "lead", "off-topic", "related"]
    ),
    st.sampled_from(["", "skip", "2025-08-06", "2025-13-45", "0001-01-01", "9999-12-31", " yes", "YES"]),
    st.just(SURROGATE),
    st.text(max_size=20),
)
json_values = st.recursive(
    st.one_of(answers, st.none(), st.booleans(), st.integers(), st.floats()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=5,
)
marks = st.dictionaries(
    st.sampled_from([LINK, "st-unknown", "art-unknown", "", SURROGATE]),
    st.one_of(st.sampled_from(["off-topic", "related", "core", "lead", "bogus"]), json_values),
    max_size=2,
)


@st.composite
def files(draw: st.DrawFn) -> bytes:
    keys = st.one_of(st.sampled_from(IDS), st.sampled_from(IDS), st.text(max_size=12), st.just(SURROGATE))
    given_ = draw(st.dictionaries(keys, st.one_of(answers, answers, json_values), max_size=4))
    if draw(st.integers(0, 3)) == 0:
        given_["marks"] = draw(st.one_of(marks, json_values))
    shape = draw(st.sampled_from(["object", "object", "object", "other", "cut", "bytes", "nested", "number"]))
    if shape == "other":
        return json.dumps(draw(json_values)).encode()
    if shape == "nested":
        return b"[" * draw(st.integers(1, 200_000))
    if shape == "number":
        return json.dumps({IDS[0]: "no"}).replace('"no"', "1" * draw(st.integers(1, 6000))).encode()
    text = json.dumps(given_, ensure_ascii=draw(st.booleans())).replace(
        json.dumps(SURROGATE)[1:-1], "\\ud800"
    )
    body = text.encode(draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "latin-1"])), errors="replace")
    if shape == "cut":
        body = body[: draw(st.integers(0, len(body)))]
    elif shape == "bytes":
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(min_size=1, max_size=6)) + body[at:]
    return body


def units() -> list[str]:
    return [u for d in CTX.store.days() for u in CTX.store.units(d)]


@FUZZ
@given(body=files())
@example(body=b"[" * 100_000)  # nested deeper than Python's JSON reader recurses
@example(body=b'{"q-1": ' + b"1" * 5000 + b"}")  # a number longer than Python converts
def test_an_answers_file_is_recorded_or_refused_in_one_line_with_nothing_written(body: bytes) -> None:
    path = FOLDER / "answers.json"
    path.write_bytes(body)
    before = units()
    try:
        answered, marked = answers_from_file(OPEN, str(path), DAY)
        CTX.store.append(answer_events(CTX, Act(DAY, "fuzz"), answered, marked))
        given_ = len(answered) + len(marked)
    except BriefError as exc:
        event(f"refused: {type(exc).__name__}")
        assert one_line(str(exc)), str(exc)
        assert units() == before, "a refused answers file writes nothing"
    else:
        event(f"recorded {min(given_, 2)}+")
        resolved = CTX.store.read([DAY], event_types=["confirmation.resolved", "article.corrected"])
        assert len(resolved) >= 1 or given_ == 0
