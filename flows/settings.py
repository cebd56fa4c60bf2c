"""Settings: one TOML file (``--config PATH`` or ``BRIEF_CONFIG``), validated by pydantic.

The smallest file that works names a storage root (and, to run a brief, one source);
everything else has a default. Every error names the field and how to fix it. A relative
``root`` is taken relative to the config file's folder.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from storage.errors import ConfigError

CONFIG_ENV = "BRIEF_CONFIG"
DEFAULT_CONFIG = "brief.toml"


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StorageSettings(Section):
    root: str = Field(description="Local folder or pyarrow/fsspec URL that holds events/ and briefs/")


class SourceSettings(Section):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Short unique name, e.g. 'techcrunch'")
    url: str = Field(description="Feed URL; '{date}' in it makes a dated archive (file:// or http(s)://)")
    weight: float = Field(default=1.0, ge=0, le=10)
    language: str | None = None

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if not value.startswith(("http://", "https://", "file://", "/")):
            raise ValueError(f"{value!r} must start with http://, https:// or file://")
        return value


class Settings(Section):
    storage: StorageSettings
    timezone: str = "UTC"
    language: Literal["en", "zh"] = "en"
    sources: list[SourceSettings] = Field(default_factory=list)

    @field_validator("sources")
    @classmethod
    def _unique_names(cls, value: list[SourceSettings]) -> list[SourceSettings]:
        names = [s.name for s in value]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"source names must be unique; repeated: {', '.join(dupes)}")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown timezone {value!r}; use an IANA name such as 'Europe/Amsterdam'"
            ) from None
        return value

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """The config file to use: the option, else ``BRIEF_CONFIG``, else ``./brief.toml``."""
    chosen = explicit or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG
    path = Path(chosen).expanduser()
    if not path.is_file():
        how = "pass --config PATH or set BRIEF_CONFIG" if not explicit else "check the path"
        raise ConfigError(f"config file {str(path)!r} not found; {how} (see README: Configuration)")
    return path


def load_settings(explicit: str | os.PathLike[str] | None = None) -> Settings:
    path = config_path(explicit)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the config as UTF-8") from None
    return parse_settings(data, path)


def parse_settings(data: dict, path: Path | None = None) -> Settings:
    where = str(path) if path else "config"
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        message = first["msg"]
        if first["type"] == "missing":
            message = "is required"
        elif first["type"] == "extra_forbidden":
            message = "is not a known setting (check its spelling and section)"
        raise ConfigError(f"{where}: {field} {message}") from None
    if path is None:
        return settings
    base = path.parent.resolve()
    root = settings.storage.root
    if "://" not in root and not Path(root).expanduser().is_absolute():
        settings = settings.model_copy(
            update={"storage": StorageSettings(root=os.path.normpath(base / root))}
        )
    sources = [
        s.model_copy(update={"url": "file://" + os.path.normpath(base / s.url[len("file://") :])})
        if s.url.startswith("file://") and not s.url[len("file://") :].startswith("/")
        else s
        for s in settings.sources
    ]
    return settings.model_copy(update={"sources": sources})
