"""The publish step: the brief files of a version and its ``brief.published`` event."""

from __future__ import annotations

import json
from dataclasses import dataclass

from storage.atomic import exclusive, write_bytes
from storage.store import ParquetEventStore
from tasks import write
from tasks.steps.context import RunContext


@dataclass(frozen=True)
class Published:
    version: int
    files: dict[str, str]
    changed: bool
    markdown: str
    items: int


def publish(ctx: RunContext, document: dict) -> Published:
    """Write the brief files; a new version only when the content changed (version 1 stays)."""
    labels = {
        c.name: (c.label_zh if ctx.settings.language == "zh" else c.label_en) or c.name
        for c in ctx.settings.policy.categories
    }
    base = f"{ctx.store.base.rstrip('/')}/briefs"
    # Reading the versions, writing the files and recording the version is one critical section:
    # two publishers of one day (a review re-render while a run publishes) take distinct versions.
    with exclusive(ctx.store.fs, f"{base}/.{ctx.day.isoformat()}.lock"):
        previous = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
        versions = [json.loads(p) for p in previous.get_column("payload").to_list()]
        digest = write.content_hash(document)
        same = [v for v in versions if v["content_hash"] == digest]
        version = same[0]["version"] if same else max((v["version"] for v in versions), default=0) + 1
        document = {**document, "version": version}
        markdown = write.render_markdown(document, labels)
        rendered = {
            "md": markdown,
            "html": write.render_html(document, labels),
            "json": json.dumps(document, ensure_ascii=False, indent=2) + "\n",
        }
        files, version_files = {}, {}
        day = ctx.day.isoformat()
        for ext, text in rendered.items():
            for path in (f"{base}/{day}/v{version}.{ext}", f"{base}/{day}.{ext}"):
                _write_text(ctx.store, path, text)
            files[ext] = f"{base}/{day}.{ext}"
            version_files[ext] = f"{base}/{day}/v{version}.{ext}"
        if not same:
            ctx.append(
                [
                    ctx.emit(
                        "brief.published",
                        {
                            "brief_date": ctx.day.isoformat(),
                            "version": version,
                            "items": len(document["items"]),
                            "stories": [i["story_id"] for i in document["items"]],
                            "files": files,
                            "content_hash": digest,
                            "version_files": version_files,
                        },
                        subject=f"brief-{ctx.day.isoformat()}",
                        producer="write@1",
                    )
                ]
            )
    return Published(version, files, not same, markdown, len(document["items"]))


def _write_text(store: ParquetEventStore, path: str, text: str) -> None:
    write_bytes(store.fs, path, text.encode())
