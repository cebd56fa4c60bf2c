"""`brief review` and the desk number each answer for good: "3" means off-topic in every relevance
question, in every batch and every session, whatever the default or the order of the candidates."""

from __future__ import annotations

import re

import pytest

from ops.answers import answer_numbers, batch_numbers, interpret, numbered_choices
from storage.errors import InputError

MARK = {"candidates": ["core", "related", "off-topic", "lead"], "default": "core", "field": "relevance"}
MARK_OFF = {
    "candidates": ["off-topic", "core", "related", "lead"],
    "default": "off-topic",
    "field": "relevance",
}
SAME = {"candidates": ["no", "yes"], "default": "no", "field": "same_story"}
CLAIM = {"candidates": ["remove", "keep"], "default": "remove", "field": "claim:number"}
CATEGORIES = ["research", "models", "business", "policy", "security", "products", "hardware", "other"]
CATEGORY = {"candidates": ["models", "research", "business", "policy", "other"], "default": "models"}
CATEGORY |= {"field": "category"}


def test_each_answer_has_one_number_for_good_whatever_the_default_or_the_order() -> None:
    assert (
        answer_numbers(MARK)
        == answer_numbers(MARK_OFF)
        == {"core": 1, "related": 2, "off-topic": 3, "lead": 4}
    )
    assert answer_numbers(SAME) == {"yes": 1, "no": 2}
    assert answer_numbers(CLAIM) == {"keep": 1, "remove": 2}
    numbers = answer_numbers(CATEGORY, CATEGORIES)  # the configured order, whichever is proposed
    assert [numbers[c] for c in ("research", "models", "business", "policy", "other")] == [1, 2, 3, 4, 8]
    assert interpret(MARK, "3", answer_numbers(MARK)) == ("off-topic", "human")
    assert interpret(MARK_OFF, "3", answer_numbers(MARK_OFF)) == ("off-topic", "human")
    assert interpret(SAME, "1", answer_numbers(SAME)) == ("yes", "human")
    assert interpret(SAME, "", answer_numbers(SAME)) == ("no", "default")


def test_a_question_numbers_its_answers_the_same_in_a_batch_of_two_and_alone_later() -> None:
    """The trial's case: in a batch the question showed 1) core 2) related 3) off-topic [default]
    4) lead; alone in a later session 1) off-topic [default] 2) core … The number is the answer's."""
    first = {**MARK, "question_id": "q1", "batch_id": "b1"}
    second = {**MARK_OFF, "question_id": "q2", "batch_id": "b1"}
    together = batch_numbers([first, second])
    alone = batch_numbers([{**second, "batch_id": "b2"}])
    assert numbered_choices(second, together["q2"]) == numbered_choices(second, alone["q2"])
    assert numbered_choices(second, alone["q2"]) == [
        (1, "core"),
        (2, "related"),
        (3, "off-topic"),
        (4, "lead"),
    ]


def test_a_number_the_question_does_not_offer_is_refused_with_the_ones_that_fit() -> None:
    with pytest.raises(InputError, match="3 is not an answer to this question; pick 1, 2"):
        interpret(SAME, "3", answer_numbers(SAME))


def test_the_desk_s_questions_page_numbers_each_answer_as_brief_review_does() -> None:
    from flows.desk.web import templates

    asked = [
        {**MARK, "question_id": "q1", "batch_id": "b1", "prompt": "Is it on topic?", "subject": "a"},
        {**MARK_OFF, "question_id": "q2", "batch_id": "b1", "prompt": "And this one?", "subject": "b"},
        {**MARK_OFF, "question_id": "q3", "batch_id": "b2", "prompt": "A later batch", "subject": "c"},
    ]
    numbering = batch_numbers(asked)
    assert numbering["q1"] == numbering["q2"] == numbering["q3"] == answer_numbers(MARK)
    html = (
        templates()
        .get_template("questions.html.j2")
        .render(
            person="ann",
            csrf="t",
            sign_in=False,
            day="2025-08-06",
            seen=1,
            questions=asked,
            choices={q["question_id"]: numbered_choices(q, numbering[q["question_id"]]) for q in asked},
            about={},
            done="",
        )
    )
    fieldsets = html.split('<fieldset class="question"')[1:]
    for fieldset in fieldsets:  # "3" is off-topic in every question, whatever the default or batch
        assert re.search(r'data-key="3"> 3\) (<b>off-topic</b> \(default\)|off-topic)</label>', fieldset)
        assert re.search(r'data-key="1"> 1\) (<b>core</b> \(default\)|core)</label>', fieldset)
        assert fieldset.count("(default)") == 1 and fieldset.count(" checked") == 1  # one radio an answer
    assert "1) <b>core</b> (default)" in fieldsets[0] and "3) <b>off-topic</b> (default)" in fieldsets[2]


def test_a_same_story_question_letters_its_two_reports_so_that_a_number_is_always_an_answer() -> None:
    """The two headlines are ``A.`` and ``B.``, not ``1)`` and ``2)`` just above the answers ``1) yes``
    ``2) no``, and the question says what each answer does."""
    from tasks import review

    prompt = review.same_story_question(
        "b", "Harbor backs Northwind", "a", "Northwind raises $120M", 0.25
    ).prompt
    assert prompt.splitlines() == [
        "Are these the same story?",
        "  A. Northwind raises $120M",
        "  B. Harbor backs Northwind",
        "yes: one story that cites both reports; no: two stories",
    ]
    assert not any(line.lstrip().startswith(("1)", "2)")) for line in prompt.splitlines())
