"""`brief review` numbers each answer once per batch: "3" means the same answer in every question."""

from __future__ import annotations

import pytest

from flows.review import answer_numbers, interpret
from storage.errors import InputError

MARK = {"candidates": ["core", "related", "off-topic"], "default": "core", "field": "relevance"}
MARK_OFF = {"candidates": ["off-topic", "related", "core"], "default": "off-topic", "field": "relevance"}
SAME = {"candidates": ["no", "yes"], "default": "no", "field": "same_story"}


def test_a_number_means_one_answer_across_the_batch_whatever_the_default() -> None:
    numbers = answer_numbers([MARK, SAME, MARK_OFF])
    assert numbers == {"core": 1, "related": 2, "off-topic": 3, "no": 4, "yes": 5}
    assert interpret(MARK, "3", numbers) == ("off-topic", "human")
    assert interpret(MARK_OFF, "3", numbers) == ("off-topic", "human")  # not "core", its third listed
    assert interpret(SAME, "5", numbers) == ("yes", "human")
    assert interpret(SAME, "", numbers) == ("no", "default")


def test_a_number_of_another_question_s_answer_is_refused_with_the_ones_that_fit() -> None:
    numbers = answer_numbers([MARK, SAME])
    with pytest.raises(InputError, match="1 is not an answer to this question; pick 4, 5"):
        interpret(SAME, "1", numbers)


def test_the_desk_s_questions_page_numbers_each_answer_as_brief_review_does() -> None:
    from flows.desk.web import templates
    from flows.review import batch_numbers, numbered_choices

    asked = [
        {**MARK, "question_id": "q1", "batch_id": "b1", "prompt": "Is it on topic?", "subject": "a"},
        {**MARK_OFF, "question_id": "q2", "batch_id": "b1", "prompt": "And this one?", "subject": "b"},
        {**MARK_OFF, "question_id": "q3", "batch_id": "b2", "prompt": "A later batch", "subject": "c"},
    ]
    numbering = batch_numbers(asked)
    assert numbering["q1"] == numbering["q2"] == answer_numbers(asked[:2])
    assert numbering["q3"] == {"off-topic": 1, "related": 2, "core": 3}  # its own batch's numbering
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
    for fieldset in fieldsets[:2]:  # "3" is off-topic in both questions of the batch, whatever the default
        assert 'value="off-topic" data-key="3"> 3) off-topic' in fieldset
        assert 'data-key="1"> 1) core' in fieldset
    assert "1) core [default]" in fieldsets[0] and "3) off-topic [default]" in fieldsets[1]
    assert 'data-key="1"> 1) off-topic [default]' in fieldsets[2]
