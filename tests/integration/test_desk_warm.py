"""The desk decodes the latest days of the log as it starts serving, in a thread of its own: making
the application decodes nothing, so a large store does not hold back the desk's announcement."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from flows.desk.app import WARM_DAYS, create_app
from ops.workspace import resources_of
from storage.store import ParquetEventStore
from tasks.settings import parse_settings
from tests.factories import DAY, collected


def test_the_latest_days_are_decoded_once_the_desk_serves_not_while_it_is_made(tmp_path: Path) -> None:
    root = str(tmp_path / "store")
    days = [DAY - timedelta(days=k) for k in range(WARM_DAYS + 5)]
    ParquetEventStore(root).append([collected(i, day=d) for i, d in enumerate(days)])
    settings = parse_settings({"storage": {"root": root}})
    resources = resources_of(settings, must_exist=False)
    app = create_app(settings, "127.0.0.1", "ann", flush_every=None, resources=resources)
    decoded = resources.store._decoded
    assert decoded is not None and len(decoded) == 0  # made, announced: nothing decoded yet
    with TestClient(app, base_url="http://127.0.0.1:8484"):  # serving: the lifespan has started
        app.state.warming.join(timeout=120)
        assert not app.state.warming.is_alive()
        latest = {u for d in sorted(days)[-WARM_DAYS:] for u in resources.store.units(d)}
        assert len(latest) == WARM_DAYS and all(u in decoded for u in latest)
        assert len(decoded) == WARM_DAYS  # the older days are read when a page asks
