"""The gate on a real day of the AI world's 14 feeds: every suite evidently met, as GX finds it."""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.real_days import aiweb_sources_toml
from tests.runs import hashing_run
from validations import gate
from validations.evident import met


def test_a_real_day_s_suites_are_evidently_met_and_gx_agrees(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = parse_settings(
        tomllib.loads(f'[storage]\nroot = "{tmp_path}"\n' + aiweb_sources_toml(shared_data / "aiweb"))
    )
    ctx = hashing_run(ParquetEventStore(str(tmp_path)), settings, date(2026, 3, 18), "run-gate")
    for source in settings.sources:
        steps.collect_one(ctx, source.name)
    outcome = steps.dedup_day(ctx)
    document, _, _ = steps.draft(ctx, outcome)
    asked: list[dict[str, gate.Suite]] = []
    validate = gate.validate
    monkeypatch.setattr(gate, "validate", lambda suites: asked.append(dict(suites)) or validate(suites))
    checked, results = steps.run_gates(ctx, outcome, document)

    [suites] = asked
    assert {name: len(frame) for name, (_, frame, _, _) in suites.items()} == {
        name: r.rows for name, r in zip(suites, results, strict=True)
    }
    assert min(len(frame) for _, frame, _, _ in suites.values()) > 10  # the day's articles, items, events
    for _, frame, _, expectations in suites.values():
        assert all(met(frame, e) for e in expectations)
    assert repr(results) == repr(validate(suites, evident=False))
    assert checked == document
