"""The pair model refitted from people's same-story and two-stories answers alone (no labels):
each answer is a training pair weighing ``ANSWER_WEIGHT`` labelled pairs, days in blocks of
consecutive days, and what it learnt joins the pairs people joined and keeps apart the ones they split."""

from __future__ import annotations

from datetime import date

from ops import story_learning
from ops.story_days import LabelledDay
from tasks import pairs
from tasks.embed import HashingEmbedder
from tests.unit.test_dedup import item

EVENTS = [
    ("Acme launches Widget {n} robot", "Acme's Widget {n} robot is here"),
    ("Storms flood the {n}th valley", "The {n}th valley floods after storms"),
    ("Zeta buys Omega for {n} billion", "Omega sold to Zeta for {n} billion"),
]


def answered_day(day: date, n: int) -> story_learning.StoredDay:
    """Three events reported twice each; people joined each event's two reports and split the first
    event's from the others'."""
    items = []
    for k, (first, second) in enumerate(EVENTS):
        items.append(item(f"{day}-{k}a", "techcrunch", first.format(n=n + k)))
        items.append(item(f"{day}-{k}b", "wired", second.format(n=n + k)))
    same = frozenset(frozenset((f"{day}-{k}a", f"{day}-{k}b")) for k in range(len(EVENTS)))
    apart = frozenset(frozenset((f"{day}-0a", f"{day}-{k}{s}")) for k in (1, 2) for s in "ab")
    vectors = HashingEmbedder().encode([i.text for i in items])
    labelled = LabelledDay(
        day.isoformat(), "stored", items, {i.article_id: None for i in items}, vectors=vectors
    )
    return story_learning.StoredDay(labelled, same, apart)


def test_answers_alone_refit_the_pair_model_and_it_joins_what_people_joined() -> None:
    days = [date(2025, 8, 1), date(2025, 8, 2), date(2025, 8, 5), date(2025, 8, 9)]
    stored = {d: answered_day(d, k) for k, d in enumerate(days)}
    fit = story_learning.fit_stored(stored, "answers only")
    assert fit is not None
    on = fit.model.card["fitted_on"]
    # 3 same-story answers and 4 two-stories answers a day, each five times
    assert on["pairs"] == 4 * 7 * story_learning.ANSWER_WEIGHT
    assert on["same_story_pairs"] == 4 * 3 * story_learning.ANSWER_WEIGHT
    assert on["days"] == [d.isoformat() for d in days]
    # three blocks (08-01..02, 08-05, 08-09): each left out and judged, and the pool
    assert sorted(fit.held_out) == ["2025-08-01", "2025-08-05", "2025-08-09", "pooled"]
    fresh = answered_day(date(2025, 9, 1), 40).labelled
    stories = sorted(s.members for s in pairs.cluster(fresh.items, fresh.vectors, fit.model).stories)
    assert stories == sorted(tuple(sorted((f"2025-09-01-{k}a", f"2025-09-01-{k}b"))) for k in range(3))


def test_one_block_of_days_is_not_enough_to_choose_a_threshold() -> None:
    days = [date(2025, 8, 1), date(2025, 8, 2)]
    assert story_learning.fit_stored({d: answered_day(d, k) for k, d in enumerate(days)}, "one block") is None


def test_a_learnt_pair_model_names_the_embedding_models_it_decides_under() -> None:
    from tasks import pairs

    days = [date(2025, 8, 1), date(2025, 8, 2), date(2025, 8, 5), date(2025, 8, 9)]
    stored = {d: answered_day(d, k) for k, d in enumerate(days)}
    fit = story_learning.fit_stored(stored, "answers", {"english": "hashing-384", "multilingual": None})
    assert fit is not None and fit.model.card["embedding"] == {"english": "hashing-384", "multilingual": None}
    assert pairs.fits(fit.model, "hashing-384", None)
    assert not pairs.fits(fit.model, "all-MiniLM-L6-v2", "use-multilingual-v3")  # the rules decide there


def test_the_days_a_policy_saw_are_its_models_and_its_pair_model_counts_only_where_it_decides() -> None:
    """``brief evaluate`` judges no same-story pair on a day the policy's models learnt from: the
    editorial model's days and the pair model's, the latter only under the embedding models its
    card names (under others the rules decide the stories)."""
    from ops.evaluate import seen_days
    from tasks.editorial import load_model
    from tasks.settings import EmbeddingSettings, PolicySettings, Settings

    editorial = set(load_model("builtin:ai").card["fitted_on"]["days"])
    stories = set(pairs.load_pair_model("builtin:stories").card["fitted_on"]["days"])
    assert stories - editorial  # the pair model learnt from story-only days too
    settings = Settings.model_validate({"storage": {"root": "/tmp/unused"}, "sources": []})
    both = PolicySettings(editorial_model="builtin:ai", story_model="builtin:stories")
    assert seen_days(settings, both) == editorial | stories
    assert seen_days(settings, both.model_copy(update={"story_model": "rules"})) == editorial
    other = settings.model_copy(update={"embedding": EmbeddingSettings(model="paraphrase-MiniLM-L3-v2")})
    assert seen_days(other, both) == editorial  # the rules decide there
    assert seen_days(settings, PolicySettings(editorial_model="rules", story_model="rules")) == set()
