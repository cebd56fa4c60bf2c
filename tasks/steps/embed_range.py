"""The texts of a range of dates embedded at once, ahead of the dates' runs (a backfill).

Each date's run embeds its news window as it goes, a few dozen texts at a time. A backfill knows
every date's window once its archives are collected, so it embeds the texts of all of them in a
few large calls, one per model, and then files each date's vectors in that date's partition of
the embedding cache, where the date's run finds them (``tasks/embed.py:CachedEmbedder``): the
runs compute nothing, and a date run again later, alone, finds its vectors where it always did.

Which model embeds what is what the runs ask of them: the run's embedder every text of the
window and the topic's description; the multilingual one (dedup) a window that holds non-English
text; the editorial reader the non-English texts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np

from storage.projections import materialize
from tasks import dedup, editorial
from tasks.embed import Embedder
from tasks.steps.context import RunContext
from tasks.steps.dedup import _items


@dataclass(frozen=True)
class DateTexts:
    """What one date's run will ask each model to embed."""

    day: date
    run: tuple[str, ...]  # the run's embedder: the window's texts and the topic's description
    multilingual: tuple[str, ...]  # dedup's multilingual model: the window, when it is not all English
    reader: tuple[str, ...]  # the editorial reader: the window's non-English texts


@dataclass(frozen=True)
class RangeEmbedded:
    dates: int
    texts: int  # unique texts, over every model
    computed: int  # of them, vectors no cache held


def date_texts(ctx: RunContext) -> DateTexts:
    """The texts ``ctx``'s run will embed: its news window's (as ``embed_window`` reads it)."""
    window = dedup.news_window(ctx.day, ctx.settings.zone, ctx.settings.policy.lookback_hours)
    items = _items(materialize(ctx.store, "articles", days=ctx.reach))
    news = [i for i in items.values() if dedup.in_window(i.published_at, window)]
    texts = tuple(i.text for i in news)
    non_english = any(dedup.is_non_english(i) for i in news)
    foreign = tuple(i.text for i in news if i.language not in editorial.ENGLISH)
    return DateTexts(
        ctx.day,
        (*texts, ctx.settings.policy.topic.description),
        texts if non_english and ctx.multilingual is not None else (),
        foreign if ctx.editorial_reader is not None else (),
    )


def _unique(texts: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(texts))


def embed_range(contexts: Sequence[RunContext]) -> RangeEmbedded:
    """Embed what the runs of ``contexts`` (one per date, in date order) will ask for.

    Per model, the texts that no date's cache holds are computed in one call (the model makes
    its own batches of them, across every date); then each date's cached embedder keeps the
    vectors of its texts under its date.
    """
    wanted = [date_texts(ctx) for ctx in contexts]
    computed = texts_seen = 0
    for role, attribute in _ROLES:
        pairs = zip(contexts, wanted, strict=True)
        cached = [(getattr(ctx, attribute), getattr(w, role)) for ctx, w in pairs]
        texts = _unique([t for _, ts in cached for t in ts])
        if not texts:
            continue
        texts_seen += len(texts)
        vectors: dict[str, np.ndarray] = {}
        for embedder, ts in cached:  # what some date's partition already holds is read, not computed
            held = [t for t in _unique(ts) if t not in vectors and embedder.holds(t)]
            if held:
                vectors.update(zip(held, embedder.encode(held), strict=True))
        missing = [t for t in texts if t not in vectors]
        if missing:
            model: Embedder = cached[0][0].inner
            vectors.update(zip(missing, model.encode(missing), strict=True))
        computed += len(missing)
        for embedder, ts in cached:
            embedder.file({t: vectors[t] for t in ts})
    return RangeEmbedded(len(contexts), texts_seen, computed)


_ROLES = (("run", "embedder"), ("multilingual", "multilingual"), ("reader", "editorial_reader"))
