"""The Prefect UI the runs page links to, read as Prefect reads its settings, without importing it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from flows.desk.prefect_ui import prefect_ui_url, ui_beside

ACCOUNT, WORKSPACE = "0ff44cd8-aaaa-4bbb-8ccc-000000000001", "9a1b2c3d-aaaa-4bbb-8ccc-000000000002"
CLOUD_API = f"https://api.prefect.cloud/api/accounts/{ACCOUNT}/workspaces/{WORKSPACE}"
CLOUD_UI = f"https://app.prefect.cloud/account/{ACCOUNT}/workspace/{WORKSPACE}"


@pytest.fixture
def places(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """An environment with a Prefect home of its own (a profile naming a server) and an empty folder."""
    home, folder = tmp_path / "prefect-home", tmp_path / "work"
    home.mkdir()
    folder.mkdir()
    (home / "profiles.toml").write_text(
        'active = "shared"\n[profiles.shared]\nPREFECT_API_URL = "http://10.0.0.5:4200/api"\n'
    )
    return {"PREFECT_HOME": str(home)}, folder


def test_prefect_clouds_api_address_links_its_ui_not_its_api() -> None:
    assert ui_beside(CLOUD_API) == CLOUD_UI
    assert prefect_ui_url({"PREFECT_API_URL": CLOUD_API}, Path("/nonexistent")) == CLOUD_UI
    assert ui_beside("http://127.0.0.1:4200/api/") == "http://127.0.0.1:4200"


def test_the_environment_then_prefect_toml_then_pyproject_then_the_profile(places) -> None:
    environ, folder = places
    assert prefect_ui_url(environ, folder) == "http://10.0.0.5:4200"  # the profile
    (folder / "pyproject.toml").write_text('[tool.prefect.api]\nurl = "http://10.0.0.7:4200/api"\n')
    assert prefect_ui_url(environ, folder) == "http://10.0.0.7:4200"
    (folder / "prefect.toml").write_text(f'[api]\nurl = "{CLOUD_API}"\n')
    assert prefect_ui_url(environ, folder) == CLOUD_UI
    (folder / "prefect.toml").write_text(f'[api]\nurl = "{CLOUD_API}"\n[ui]\nurl = "https://ui.example"\n')
    assert prefect_ui_url(environ, folder) == "https://ui.example"
    environ = {**environ, "PREFECT_UI_URL": "http://127.0.0.1:4299"}
    assert prefect_ui_url(environ, folder) == "http://127.0.0.1:4299"


def test_an_api_address_set_empty_on_purpose_links_nothing(places) -> None:
    environ, folder = places
    (Path(environ["PREFECT_HOME"]) / "brief-server.json").write_text(json.dumps({"port": 4321}))
    assert prefect_ui_url({**environ, "PREFECT_API_URL": ""}, folder) is None


def test_with_no_address_anywhere_the_server_brief_keeps_is_linked(tmp_path: Path) -> None:
    home = tmp_path / "prefect-home"
    home.mkdir()
    environ = {"PREFECT_HOME": str(home)}
    assert prefect_ui_url(environ, tmp_path) is None
    state = {"port": 4321, "pid": 1, "home": str(home), "log": str(home / "brief-server.log")}
    (home / "brief-server.json").write_text(json.dumps(state))
    assert prefect_ui_url(environ, tmp_path) == "http://127.0.0.1:4321"
    from flows.keptserver import STATE

    assert STATE == "brief-server.json"  # the file the kept server writes


def test_reading_the_address_imports_no_prefect(places) -> None:
    environ, folder = places
    code = (
        "import sys; from pathlib import Path; from flows.desk.prefect_ui import prefect_ui_url;"
        f"print(prefect_ui_url({environ!r}, Path({str(folder)!r}))); print('prefect' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["http://10.0.0.5:4200", "False"], done
