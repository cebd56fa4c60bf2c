"""Configs of dated feed archives, and the published real days built once per test session.

``archive_config`` writes the config every real-day test and benchmark needs: a storage
section and one ``[[sources]]`` entry per archive folder (``{folder}/{date}.xml``), with the
declared on-topic sources marked; ``aiweb_config`` the guide's config of the 14 AI-world feeds
(``docs/sources.md``). ``build_real_days`` publishes 2025-08-05..07 of five real
outlets (plus a source that always fails) into a folder; the ``real_days`` fixture
(``tests/conftest.py``) builds it once for the session, under a file lock that the xdist
workers share, and ``copy_real_days`` gives a test its own copy to read or extend.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterable
from pathlib import Path

REAL_DAYS = ["2025-08-05", "2025-08-06", "2025-08-07"]
REAL_SOURCES = ["arstechnica", "techcrunch", "wired", "openai_research", "anthropic_news"]
# the labs' own feeds of ``../shared/data/feeds``: declared on-topic, as a user would
LAB_SOURCES = (
    "openai_research",
    "anthropic_news",
    "openai_news",
    "google_ai_blog",
    "deepmind_blog",
    "microsoft_ai_blog",
)
BROKEN = '[[sources]]\nname = "broken"\nurl = "file:///nonexistent/{date}.xml"\n'


def sources_toml(feeds: Path, names: Iterable[str], on_topic: Iterable[str] = ()) -> str:
    """One ``[[sources]]`` entry per dated archive ``feeds/<name>/{date}.xml``."""
    declared = set(on_topic)
    return "".join(
        f'[[sources]]\nname = "{name}"\nurl = "{(feeds / name).as_uri()}/{{date}}.xml"\n'
        + ("on_topic = true\n" if name in declared else "")
        for name in names
    )


def archive_config(
    folder: Path,
    feeds: Path,
    names: Iterable[str],
    *,
    root: str = "store",
    endpoint: str | None = None,
    on_topic: Iterable[str] = (),
    extra: str = "",
) -> Path:
    """``folder/brief.toml`` over dated archives; ``root`` is relative to the folder unless absolute."""
    folder.mkdir(parents=True, exist_ok=True)
    storage = f'[storage]\nroot = "{root}"\n' + (f'endpoint_url = "{endpoint}"\n' if endpoint else "")
    config = folder / "brief.toml"
    config.write_text(storage + sources_toml(feeds, names, on_topic) + extra)
    return config


def aiweb_sources_toml(aiweb: Path) -> str:
    """The guide's config of the AI world's 14 feeds (``docs/sources.md``), pointing at ``aiweb``."""
    guide = (Path(__file__).resolve().parents[1] / "docs" / "sources.md").read_text()
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", guide, flags=re.DOTALL) if "/path/to/aiweb" in b]
    return block.replace("/path/to/aiweb", str(aiweb))


def aiweb_config(folder: Path, aiweb: Path, *, root: str = "store", extra: str = "") -> Path:
    """``folder/brief.toml`` over the 14 AI-world feeds of ``aiweb`` (kinds and languages as the guide
    gives them)."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "brief.toml"
    config.write_text(f'[storage]\nroot = "{root}"\n' + aiweb_sources_toml(aiweb) + extra)
    return config


def build_real_days(folder: Path, feeds: Path) -> None:
    """Publish the real days in order into ``folder`` (config, store, and each run's result)."""
    from flows.daily import daily_brief

    config = archive_config(folder, feeds, REAL_SOURCES, extra=BROKEN)
    results = {day: daily_brief(day, str(config)) for day in REAL_DAYS}
    (folder / "results.json").write_text(json.dumps({d: r.row() for d, r in results.items()}, default=str))


def copy_real_days(built: Path, to: Path) -> tuple[Path, dict[str, dict]]:
    """A private copy of the built days: its config and the runs' results, paths moved along."""
    shutil.copytree(built, to)
    text = (to / "results.json").read_text().replace(str(built), str(to))
    return to / "brief.toml", json.loads(text)


# The labelled days of the two source mixes, in blocks of neighbouring days that share items
# (67 of the 77 items of 2026-03-18 are also on 03-17 or 03-19): a judgement is fitted with one
# block left out and measured on it, never on a day it was fitted or tuned on.
AIWEB_BLOCKS = (
    ("2026-03-05",),
    ("2026-03-10",),
    ("2026-03-17", "2026-03-18", "2026-03-19"),
    ("2026-03-25",),
    ("2026-03-31",),
)
TECH_BLOCKS = (
    ("2025-07-09",),
    ("2025-07-23",),
    ("2025-07-30",),
    ("2025-08-05", "2025-08-06", "2025-08-07"),
)
BLOCKS = {"aiweb": AIWEB_BLOCKS, "tech": TECH_BLOCKS}
# story labels only (no relevance): extra training pairs, never a held-out block
STORY_ONLY_DAYS = ("2021-06-16", "2021-06-17", "2025-07-28")
# the blocks the CI guard leaves out, one per mix (the ones with the most pairs)
GUARD_BLOCKS = {"aiweb": AIWEB_BLOCKS[2], "tech": TECH_BLOCKS[3]}
# every day a shipped model, a threshold or a rule was fitted or tuned on
SEEN_DAYS = frozenset({d for blocks in BLOCKS.values() for b in blocks for d in b} | set(STORY_ONLY_DAYS))
_LABELS_FILE = re.compile(r"(?P<kind>aiweb|tech|stories)-(?P<day>\d{4}-\d{2}-\d{2})\.json")
UNSEEN_GAP = 2  # days this close share items (a brief's window is three days): one block


def _new_days(labels: Path) -> dict[str, str]:
    """Each labelled day of ``labels`` not in ``SEEN_DAYS`` -> its mix (its file's kind)."""
    from datetime import date

    found: dict[str, str] = {}
    for path in sorted(labels.glob("*.json")) if labels.is_dir() else ():
        named = _LABELS_FILE.fullmatch(path.name)
        if named is None or named["day"] in SEEN_DAYS:
            continue
        try:
            date.fromisoformat(named["day"])
        except ValueError:
            continue
        if named["kind"] != "stories" or named["day"] not in found:  # a relevance file names the mix
            found[named["day"]] = named["kind"]
    return found


def beside_seen(labels: Path) -> dict[str, str]:
    """The labelled days of ``labels`` not in ``SEEN_DAYS`` but at most ``UNSEEN_GAP`` days from one
    of them -> that seen day: they share its items (a third to a half of an AI-world day's items are
    labelled on the day before or after it), which the shipped models learnt."""
    from datetime import date

    out = {}
    for day in sorted(_new_days(labels)):
        apart = {s: abs((date.fromisoformat(day) - date.fromisoformat(s)).days) for s in sorted(SEEN_DAYS)}
        nearest = min(apart, key=apart.__getitem__)
        if apart[nearest] <= UNSEEN_GAP:
            out[day] = nearest
    return out


def unseen_blocks(labels: Path) -> dict[str, tuple[tuple[str, ...], ...]]:
    """The labelled days of ``labels`` that nobody here fitted or tuned on (not in ``SEEN_DAYS``),
    per mix, in blocks of neighbouring days (at most ``UNSEEN_GAP`` apart). A day beside a seen day
    (``beside_seen``) shares items with it: the benches judge each such day on the items the shipped
    models did not learn (``tests.judgement.learnt_on``).

    A day's mix is its file's: ``aiweb-<day>.json`` the AI world's feeds, ``tech-<day>.json`` the
    tech outlets of ``month/``; a day with ``stories-<day>.json`` only is ``stories`` (same-story
    labels, no relevance: judged for pairs only).
    """
    from datetime import date

    found = _new_days(labels)
    out: dict[str, list[list[str]]] = {}
    for day in sorted(found):
        blocks = out.setdefault(found[day], [])
        near = blocks and (date.fromisoformat(day) - date.fromisoformat(blocks[-1][-1])).days <= UNSEEN_GAP
        if near:
            blocks[-1].append(day)
        else:
            blocks.append([day])
    return {mix: tuple(tuple(b) for b in blocks) for mix, blocks in out.items()}
