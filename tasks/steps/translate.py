"""The translate task: a title in the brief's language for an item in another, when a language
model is configured. Each answer is a ``title.translated`` event, shown or refused; a model that
fails leaves the original alone, as the offline brief has it."""

from __future__ import annotations

from storage.events import Event
from tasks import llm, translate
from tasks.dedup import Item
from tasks.steps.context import RunContext
from tasks.steps.llm import analyst as llm_analyst


def translated_title(ctx: RunContext, story_id: str, item: Item, events: list[Event]) -> str | None:
    """The checked translation of ``item``'s title, or None (no model, the brief's own language,
    no answer, or an answer the check refuses). Appends the decision to ``events``."""
    brief_language = ctx.settings.language
    analyst = llm_analyst(ctx)
    if analyst is None or not translate.wanted(item.language, brief_language):
        return None
    answer = analyst.ask("translate", story_id, [item])
    if not isinstance(answer, llm.TranslationAnswer):
        return None  # the analyst recorded why (the run report lists it)
    result = translate.checked(item.title, answer.title, item.language, ctx.day)
    events.append(
        ctx.emit(
            "title.translated",
            translate.payload(story_id, item, brief_language, result),
            subject=story_id,
            producer=f"{translate.LABEL}:{analyst.settings.model}",
            sources=[*analyst.used("translate", story_id), *analyst.source_events([item.article_id])],
        )
    )
    return result.text if result.accepted else None
