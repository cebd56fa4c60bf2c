"""Lineage: the events an event was derived from, in its envelope's ``source_event_ids``.

Facts from outside the pipeline are roots: a feed's fetch (``feed.fetched``), what people said
(marks, corrections, answers). Everything a step makes from other events names them, so
``brief trace`` walks a brief's item back to the fetch its articles came from:

    brief.published -> story.analyzed (+ factcheck.failed, title.translated) -> story.scored
    -> story.clustered (+ a person's mark, the model's answer) -> article.collected -> feed.fetched

Ids stay few: a brief names its items' analyses, not their articles; a story names its
articles once, in its clustering. Events written before lineage was recorded name nothing and
read as they are (an empty ``source_event_ids``).
"""

from __future__ import annotations

# The types whose every event reads other events: the events gate fails a run that writes one
# without sources. A brief (``brief.published``, ``brief.withheld``) names its items, and a brief
# without items names nothing, so it is not in the list; nor are the run's own bookkeeping
# (``run.*``, ``validation.completed``) and people's acts.
SOURCED: frozenset[str] = frozenset(
    {
        "article.collected",  # its feed.fetched
        "feed.warned",  # its feed.fetched
        "article.duplicate_detected",  # the collected article(s)
        "story.clustered",  # its articles' article.collected
        "story.scored",  # its story.clustered (+ a mark, a model's answer)
        "story.analyzed",  # its story.scored (+ a category a person gave, a model's answer)
        "factcheck.failed",  # the story.analyzed it checked (+ the model's summary)
        "llm.called",  # the articles it was shown
        "title.translated",  # the model's answer and the article
        "confirmation.requested",  # what made the run ask
        "brief.delivered",  # the brief.published it sent
        "delivery.failed",  # the brief.published it tried to send
        "brief.held",  # the brief.published it holds
    }
)
