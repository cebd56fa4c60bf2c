"""The brief's model and its JSON file: a file written before the model loads and is written again byte
for byte, optional keys stay absent, numbers stay as they were written, and nothing unknown is read."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from storage.brief import Brief, brief_dict, brief_json, read_brief
from tests.factories import brief, brief_item, citation, fact

# a brief as the publish step wrote it before the brief was a model (a news citation, a community one,
# an item of another language with a person's correction, an item written before relevance_score,
# lead and promotion existed, a retraction); every key in the order the file has it
EARLIER = {
    "date": "2025-08-06",
    "version": 3,
    "language": "en",
    "policy_version": "e23de962b969",
    "window": {"start": "2025-08-05T00:00:00+00:00", "end": "2025-08-07T00:00:00+00:00"},
    "topic": "AI",
    "left_out": {"off_topic": 1},
    "items": [
        {
            "story_id": "st-1",
            "title": "Orchard Labs releases Pippin-2",
            "language": "de",
            "translated_title": "Orchard Labs veröffentlicht Pippin-2",
            "category": "models",
            "category_confidence": 0.81,
            "importance": 1,
            "relevance": "core",
            "relevance_score": 0.9771,
            "lead": False,
            "promotion": False,
            "summary": "Orchard Labs released Pippin-2.",
            "facts": [
                {
                    "kind": "product",
                    "text": "Pippin-2",
                    "value": "Pippin-2",
                    "anchor": {"article_id": "art-1", "field": "title", "start": 22, "end": 30},
                }
            ],
            "citations": [
                {
                    "article_id": "art-1",
                    "url": "https://labnotes.example/pippin-2",
                    "source": "labnotes",
                    "published": None,
                },
                {
                    "article_id": "art-2",
                    "url": "https://techcrunch.com/pippin",
                    "source": "hn",
                    "published": "2025-08-06T09:30:00+00:00",
                    "kind": "community",
                    "outlet_label": "techcrunch.com · Hacker News (643 points)",
                    "discussion_url": "https://news.ycombinator.com/item?id=1",
                    "evidence": {"points": 643, "comments": 370},
                },
            ],
            "follow_up_of": "st-0",
            "flags": ["instructions_to_ai"],
            "section": "top",
            "verified": False,
            "correction": "Correction: the headline read “Orchard releases Pippin”.",
        },
        {
            "story_id": "st-2",
            "title": "Older item",
            "category": "other",
            "category_confidence": 0.5,
            "importance": 0.25,
            "relevance": "related",
            "summary": "",
            "facts": [],
            "citations": [],
            "follow_up_of": None,
            "flags": [],
            "section": "quick_link",
        },
    ],
    "retracted": [{"story_id": "st-3", "title": "Gone", "section": "category", "note": "not news"}],
}


def test_a_brief_written_before_the_model_loads_and_is_written_again_byte_for_byte() -> None:
    text = json.dumps(EARLIER, ensure_ascii=False, indent=2) + "\n"
    loaded = read_brief(text)
    assert brief_json(loaded) == text
    first, older = loaded.items
    assert first.citations[1].evidence == {"points": 643, "comments": 370}
    assert first.unverified and first.flagged and first.importance == 1
    assert older.relevance_score is None and older.lead is None and older.verified is None
    assert loaded.retracted is not None and loaded.retracted[0].section == "category"
    assert loaded.core == 1 and loaded.story_ids == ["st-1", "st-2"]


def test_optional_keys_are_absent_not_null_and_numbers_keep_their_type() -> None:
    doc = brief(brief_item("st-1", importance=1, citations=[citation("art-1")]))
    item = brief_dict(doc)["items"][0]
    assert list(item) == [
        "story_id",
        "title",
        "category",
        "category_confidence",
        "importance",
        "relevance",
        "summary",
        "facts",
        "citations",
        "follow_up_of",
        "flags",
    ]
    assert list(item["citations"][0]) == ["article_id", "url", "source", "published"]
    assert "retracted" not in brief_dict(doc)
    assert '"importance": 1,' in brief_json(doc)  # not 1.0: the file says what the run wrote


def test_a_brief_with_a_key_the_model_does_not_know_is_refused() -> None:
    with pytest.raises(ValidationError):
        Brief.model_validate({**EARLIER, "surprise": 1})
    with pytest.raises(ValidationError):
        Brief.model_validate({**EARLIER, "items": [{**EARLIER["items"][1], "sections": "top"}]})  # type: ignore[dict-item]


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)


@given(
    titles=st.lists(text, min_size=0, max_size=4),
    summary=text,
    importance=st.one_of(st.integers(0, 3), st.floats(0, 1, allow_nan=False)),
    section=st.sampled_from([None, "top", "category", "quick_link", "research"]),
    verified=st.sampled_from([None, True, False]),
)
def test_a_brief_round_trips_through_its_file(
    titles: list[str], summary: str, importance: float, section: str | None, verified: bool | None
) -> None:
    doc = brief(
        *(
            brief_item(
                f"st-{n}",
                title,
                summary=summary,
                importance=importance,
                section=section,
                verified=verified,
                citations=[citation(f"art-{n}", kind="papers", evidence={"upvotes": n})],
                facts=[fact("product", "Pippin", article_id=f"art-{n}")],
            )
            for n, title in enumerate(titles)
        )
    )
    written = brief_json(doc)
    assert read_brief(written) == doc
    assert brief_json(read_brief(written)) == written
