"""``brief trace``'s printing: the chain of an item (``ops/trace.py``'s ``Trace``) as a tree, at most
80 columns, whatever the text (wide glyphs, long links): the item, then each event with what it says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from flows.views.text import WIDTH, cells, counted, wrap
from storage.payloads import (
    ArticleCollectedV4,
    ArticleCorrectedV2,
    BriefCorrected,
    BriefPublished,
    DuplicateDetected,
    FactcheckFailed,
    FeedFetchedV2,
    LLMCalled,
    StoryAnalyzed,
    StoryClustered,
    StoryRestored,
    StoryRetracted,
    StoryScored,
    TitleTranslated,
)
from storage.typed import payload_of

if TYPE_CHECKING:  # at run time they would load pyarrow and polars before a command needs them
    from ops.trace import Node, Trace
    from storage.events import Event


def render(chain: Trace, width: int = WIDTH) -> list[str]:
    """The chain as a tree, at most ``width`` columns: the item, then each event with what it says."""
    p = chain.published
    title = _item_title(chain)
    corrected = _title_correction(chain)
    if corrected is not None:  # the headline readers have now, and what it was
        title = corrected.value
    lines = [
        f"Brief of {chain.day}, v{chain.version}, item {chain.position} of {chain.items}",
        *_wrapped(f"“{title}”" if title else f"story {chain.story}", "", width),
    ]
    if corrected is not None:
        lines += _wrapped(f"(headline corrected by {corrected.by}; it was “{corrected.previous}”)", "", width)
    lines += _wrapped(f"brief.published {_when(p)} · run {p.run_id} · {_short(p.event_id)}", "", width)
    for k, node in enumerate(chain.sources):
        lines += _tree(node, "", k == len(chain.sources) - 1, width)
    if not chain.sources:
        lines.append("(the brief names no events for this item)")
    for event_id in chain.missing:
        lines += _wrapped(
            f"! {event_id} is named but not in the log of {chain.days[0]}..{chain.days[1]} "
            "(purged, or written on another day)",
            "",
            width,
        )
    return lines


def _item_title(chain: Trace) -> str:
    for node in _walk(chain.sources):
        if node.event.event_type == "story.scored":
            return payload_of(node.event, StoryScored).title
    return ""


def _title_correction(chain: Trace) -> BriefCorrected | None:
    """The latest correction of the item's headline the brief applied (None: it was not corrected)."""
    corrections = [
        e
        for e in (node.event for node in chain.sources)
        if e.event_type == "brief.corrected" and payload_of(e, BriefCorrected).field == "title"
    ]
    if not corrections:
        return None
    return payload_of(max(corrections, key=lambda e: (e.occurred_at, e.seq)), BriefCorrected)


def _walk(nodes: Iterable[Node]) -> Iterable[Node]:
    for node in nodes:
        yield node
        yield from _walk(node.sources)


def _tree(node: Node, prefix: str, last: bool, width: int) -> list[str]:
    branch, carry = ("└─ ", "   ") if last else ("├─ ", "│  ")
    head, details = describe(node.event, node.raw)
    head = f"{node.event.event_type}  {head}".rstrip()
    tail = f" {_short(node.event.event_id)}"
    shown = _indent(prefix, width)
    lines = [_fit(shown(prefix) + branch + head, width - _cells(tail)) + tail]
    inner = shown(prefix + carry + ("│  " if node.sources else "   "))
    for detail in details:
        lines += _wrapped(detail, inner, width)
    if node.shown_above:
        lines += _wrapped("(its sources are shown above)", inner, width)
    for k, child in enumerate(node.sources):
        lines += _tree(child, prefix + carry, k == len(node.sources) - 1, width)
    return lines


def _indent(prefix: str, width: int) -> Callable[[str], str]:
    """How a node's lines show the tree's indent: whole while it leaves room to read, else without its
    outer levels, dropped in steps of a few levels (``┆`` marks them) so that a node's lines, and
    nodes at the same depth, stay aligned however deep the tree goes."""
    deepest = max(width // 2 // 3 * 3 - 3, 3)  # columns of indent shown at most: 36 of 80
    step = max(deepest * 2 // 3 // 3 * 3, 3)  # columns dropped at once: 24 of 80
    levels = -(-(len(prefix) - deepest) // step) if len(prefix) > deepest else 0
    if not levels:
        return lambda text: text
    return lambda text: "┆  " + text[levels * step :]


def describe(event: Event, raw: Mapping[str, Any] | str | None = None) -> tuple[str, list[str]]:
    """What an event says, in a few words on its line and a few lines under it (``raw``: where a
    fetch's bytes are kept, when the trace found them)."""
    if event.event_type == "feed.fetched":
        return _fetched(event, raw)
    explain = _DESCRIBE.get(event.event_type)
    if explain is None:
        return _when(event), [f"{event.subject_id} · {event.produced_by}"]
    return explain(event)


def _published(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, BriefPublished)
    return f"v{p.version} · {p.items} items · {_when(e)}", []


def _analyzed(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, StoryAnalyzed)
    head = f"{p.category} ({p.confidence:.2f}) · {counted(len(p.facts), 'fact')}"
    named = ", ".join(f"{f.kind} {f.text}" for f in p.facts[:4])
    return head, [f"facts: {named}" + (" …" if len(p.facts) > 4 else "")] if named else []


def _scored(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, StoryScored)
    head = f"{p.outcome} · relevance {p.relevance:.2f} · importance {p.importance:.2f}"
    details = [f"editorial model {p.model}" + (" · marked by a person" if p.marked_by else "")]
    details += [f"why: {r}" for r in p.reasons]  # every reason, as the desk's story page and replay show them
    return head, details


def _clustered(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, StoryClustered)
    head = f"{counted(len(p.members), 'article')}"
    details = [f"representative {p.representative}"]
    if p.follow_up_of:
        details.append(f"continues story {p.follow_up_of}")
    return head, details


def _collected(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, ArticleCollectedV4)
    outlet = p.outlet or p.source
    head = outlet + (f" via {p.source}" if outlet != p.source else "")
    when = f"published {p.published_at:%Y-%m-%d %H:%M} UTC" if p.published_at else "no publish time"
    return head, [f"“{p.title}”", f"{when} · language {p.language or 'und'}", _url(p.url)]


def _fetched(e: Event, raw: Mapping[str, Any] | str | None) -> tuple[str, list[str]]:
    p = payload_of(e, FeedFetchedV2)
    head = f"{p.source} · HTTP {p.status} · {p.bytes:,} bytes"
    details = [
        f"fetched {_when(e)}" + (" · not modified (304)" if p.not_modified else ""),
        _url(p.url),
        f"content hash {p.content_hash} · {p.items} entries",
    ]
    details.append(f"raw body: {_raw(raw)}" if raw else "raw body: not kept (the hash names the bytes)")
    return head, details


def _raw(raw: Any) -> str:
    """The raw body's reference as a fetch records it: a path or digest, or the fields of one."""
    if isinstance(raw, Mapping):
        return " · ".join(f"{k}: {v}" for k, v in raw.items() if v not in (None, ""))
    return str(raw)


def _corrected(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, ArticleCorrectedV2)
    who = p.by or "someone"
    return f"{p.field} = {p.value} · by {who}", [p.reason] if p.reason else []


def _edited(e: Event) -> tuple[str, list[str]]:
    """A person's correction or retraction of the item, which the brief applied."""
    if e.event_type == "story.retracted":
        retracted = payload_of(e, StoryRetracted)
        head, said, via = f"retracted by {retracted.by}", [f"note: {retracted.note}"], retracted.via
    elif e.event_type == "story.restored":
        restored = payload_of(e, StoryRestored)
        head, via = f"retraction undone by {restored.by}", restored.via
        said = [f"note: {restored.note}"] if restored.note else []
    else:
        corrected = payload_of(e, BriefCorrected)
        head = f"{corrected.field} corrected by {corrected.by}"
        said = [f"“{corrected.previous}” -> “{corrected.value}”"]
        said += [f"note: {corrected.note}"] if corrected.note else []
        via = corrected.via
    return head + (f" at the {via}" if via else "") + f" · {_when(e)}", said


def _factcheck(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, FactcheckFailed)
    return f"{p.kind} · {p.reason} · {p.action}", [f"claim: “{p.claim}”"]


def _llm(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, LLMCalled)
    answered = "answered" if p.output is not None else (p.error or p.invalid or "no answer")
    head = f"{p.task} · {p.model} · {answered}"
    return head, [f"{p.tokens_in} tokens in, {p.tokens_out} out · {_when(e)}"]


def _translated(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, TitleTranslated)
    shown = "shown" if p.accepted else "not shown"
    return f"{p.source_language} -> {p.language} · {shown}", [f"“{p.translation}”"]


def _duplicate(e: Event) -> tuple[str, list[str]]:
    p = payload_of(e, DuplicateDetected)
    return f"{p.reason} · of {p.duplicate_of}", []


_DESCRIBE: dict[str, Callable[[Event], tuple[str, list[str]]]] = {
    "brief.published": _published,
    "story.analyzed": _analyzed,
    "story.scored": _scored,
    "story.clustered": _clustered,
    "article.collected": _collected,
    "article.corrected": _corrected,
    "brief.corrected": _edited,
    "story.retracted": _edited,
    "story.restored": _edited,
    "factcheck.failed": _factcheck,
    "llm.called": _llm,
    "title.translated": _translated,
    "article.duplicate_detected": _duplicate,
}


def _when(event: Event) -> str:
    return f"{event.occurred_at:%Y-%m-%d %H:%M} UTC"


def _short(event_id: str) -> str:
    return f"[{event_id[:8]}]"


def _url(url: str) -> str:
    return "\x00" + url  # a link is printed whole on its line, to be copied (never cut or broken)


def _cells(text: str) -> int:
    return cells(text)


def _fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns, with an ellipsis when something was cut."""
    if _cells(text) <= width:
        return text
    out, used = [], 0
    for c in text:
        size = _cells(c)
        if used + size > width - 1:
            break
        out.append(c)
        used += size
    return "".join(out) + "…"


def _wrapped(text: str, prefix: str, width: int) -> list[str]:
    """``text`` under ``prefix``, in lines of at most ``width`` columns, broken between words; a link
    whole on one line, however long, so that it can be copied (as a path is)."""
    if text.startswith("\x00"):
        return [prefix + text[1:]]
    return wrap(text, width, prefix)
