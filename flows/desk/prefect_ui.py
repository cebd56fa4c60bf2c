"""The Prefect UI the desk's runs page links to, read as Prefect reads its settings but without
importing Prefect (which takes seconds): the runs page's first load is as fast as the next.

Each setting is taken from the first place that has it, in Prefect's order: the environment (a
variable set to "" is set: no link, nothing further is read), ``prefect.toml`` in the working
folder (``[ui] url``, ``[api] url``), ``pyproject.toml``'s ``[tool.prefect]``, then the active
profile of Prefect's profiles file. With no API address anywhere, the runs went to the local server
``brief`` keeps (``flows/keptserver.py``'s state file): its UI. Prefect Cloud's API address
(``https://api.prefect.cloud/api/accounts/A/workspaces/W``) gives its UI's
(``https://app.prefect.cloud/account/A/workspace/W``).
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

CLOUD_API = "https://api.prefect.cloud/api"
CLOUD_UI = "https://app.prefect.cloud"
KEPT_STATE = "brief-server.json"  # flows/keptserver.py's STATE: the server brief keeps
NAMES = {"PREFECT_UI_URL": ("ui", "url"), "PREFECT_API_URL": ("api", "url")}


def prefect_ui_url(environ: Mapping[str, str] | None = None, folder: Path | None = None) -> str | None:
    """The UI's address (None: none known, or set to "" on purpose). ``folder``: where
    ``prefect.toml`` and ``pyproject.toml`` are looked for (the working folder)."""
    environ = os.environ if environ is None else environ
    folder = Path.cwd() if folder is None else folder
    places = [
        _table(folder / "prefect.toml", ()),
        _table(folder / "pyproject.toml", ("tool", "prefect")),
    ]
    profile = _active_profile(environ)

    def setting(name: str) -> str | None:
        if name in environ:
            return environ[name]
        for table in places:
            value = _at(table, NAMES[name])
            if value is not None:
                return str(value)
        value = profile.get(name)
        return None if value is None else str(value)

    ui = setting("PREFECT_UI_URL")
    if ui:
        return ui
    api = setting("PREFECT_API_URL")
    if api is None:
        return _kept_server(environ)
    return ui_beside(api) if api else None


def ui_beside(api: str) -> str:
    """The UI beside an API address, as Prefect derives it (Prefect Cloud's included)."""
    ui = api.rstrip("/")
    if ui.startswith(CLOUD_API):
        ui = CLOUD_UI + ui.removeprefix(CLOUD_API)
    ui = ui.removesuffix("/api").replace("/api/", "/")
    return ui.replace("/accounts/", "/account/").replace("/workspaces/", "/workspace/")


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()


def _kept_server(environ: Mapping[str, str]) -> str | None:
    """The UI of the local server ``brief`` keeps, when its state file names one."""
    try:
        state = json.loads((_home(environ) / KEPT_STATE).read_text(encoding="utf-8"))
        return f"http://127.0.0.1:{int(state['port'])}"
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _table(path: Path, header: tuple[str, ...]) -> dict[str, Any]:
    try:
        found: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}
    for key in header:
        found = found.get(key) if isinstance(found, dict) else None
    return found if isinstance(found, dict) else {}


def _at(table: Mapping[str, Any], path: tuple[str, ...]) -> object | None:
    found: Any = table
    for key in path:
        found = found.get(key) if isinstance(found, dict) else None
    return found


def _active_profile(environ: Mapping[str, str]) -> dict[str, object]:
    """The settings of Prefect's active profile (``PREFECT_PROFILES_PATH``, else ``profiles.toml``
    in ``PREFECT_HOME``, else in ``~/.prefect``); none when the file is missing or unreadable."""
    path = Path(environ.get("PREFECT_PROFILES_PATH") or _home(environ) / "profiles.toml").expanduser()
    profiles = _table(path, ())
    every = profiles.get("profiles")
    found = (
        every.get(environ.get("PREFECT_PROFILE") or profiles.get("active"))
        if isinstance(every, dict)
        else None
    )
    return found if isinstance(found, dict) else {}
