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
