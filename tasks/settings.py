"""Settings: one TOML file (``--config PATH`` or ``BRIEF_CONFIG``), read by pydantic-settings.

The smallest file that works names a storage root (and, to run a brief, one source);
everything else has a default. ``BRIEF_<KEY>`` environment variables override the file's keys
(``ENV_PREFIX``; no other variable is read). Every mistake of a file is named at once, in its
own terms. A relative path in it is the config file's folder's (``tasks/config_paths.py``). A
command loads it once (``load_settings``) and passes the settings on.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from storage.errors import ConfigError
from tasks.alerts import AlertChannel, AlertingSettings
from tasks.channels import DeliverySettings, OutputSettings, delivery_from_toml, unique_names
from tasks.config_errors import scheme_of
from tasks.config_paths import ConfigPath, FeedUrl, ModelRef, OptionalConfigPath, StoreRoot, reading_from
from tasks.kinds import FIRST_PARTY, KINDS
from tasks.vocabulary import vocabulary

if TYPE_CHECKING:
    from storage.store import ParquetEventStore

# ISO 639-1: the two-letter language codes a source's ``language`` may name
_ISO_639_1_CODES = (
    "aa ab ae af ak am an ar as av ay az ba be bg bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv "
    "dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie "
    "ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv "
    "mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm "
    "rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts "
    "tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu"
)
ISO_639_1 = frozenset(_ISO_639_1_CODES.split())

CONFIG_ENV = "BRIEF_CONFIG"
T = TypeVar("T", bound=BaseModel)
ENV_PREFIX = "BRIEF_"  # the only environment variables a config reads (docs/configuration.md)
DEFAULT_CONFIG = "brief.toml"


def _check_model(settings: Settings, where: str) -> None:
    from tasks.editorial import load_model
    from tasks.pairs import load_pair_model

    try:
        load_model(settings.policy.editorial_model)
    except ConfigError as exc:
        raise ConfigError(f"{where}: policy.editorial_model: {exc}") from None
    try:
        load_pair_model(settings.policy.story_model)
    except ConfigError as exc:
        raise ConfigError(f"{where}: policy.story_model: {exc}") from None


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StorageSettings(Section):
    root: StoreRoot = Field(
        description="Local folder (relative: to the config file's folder) or pyarrow/fsspec URL that holds "
        "events/ and briefs/"
    )
    append_format: Literal["jsonl", "parquet"] = Field(
        default="jsonl",
        description="What an append writes: zstd JSON-lines segments (fast; compaction makes Parquet) "
        "or zstd Parquet at once",
    )

    endpoint_url: str | None = Field(
        default=None,
        description="S3-compatible endpoint for an s3:// root (MinIO, Ceph, R2, moto); "
        "credentials come from the standard AWS chain, never from this file",
    )
    region: str | None = Field(default=None, description="bucket region for an s3:// root (default: AWS's)")

    @field_validator("endpoint_url")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and "@" in value.partition("://")[2].split("/", 1)[0]:
            raise ValueError("must not carry credentials; use AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY")
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// ({scheme_of(value)})")
        return value

    def event_store(self) -> ParquetEventStore:
        from storage.store import ParquetEventStore

        return ParquetEventStore(
            self.root, append_format=self.append_format, endpoint_url=self.endpoint_url, region=self.region
        )


class SourceSettings(Section):
    name: str = Field(pattern=r"^[A-Za-z0-9_.-]+$", description="Short unique name, e.g. 'techcrunch'")
    url: FeedUrl = Field(
        description="Feed URL; '{date}' in it makes a dated archive (file:// or http(s)://; a relative "
        "file:// path is the config file's folder's)"
    )
    weight: float = Field(default=1.0, ge=0, le=10)
    kind: str = Field(default="news", description=f"what the feed is: {', '.join(KINDS)}")
    language: str | None = Field(
        default=None,
        description="ISO 639-1 code ('en', 'zh', 'nl'), or 'auto' to tell each item by its script",
    )
    on_topic: bool = Field(
        default=False, description="everything this source publishes is on the topic (a lab's own blog)"
    )

    @property
    def first_party(self) -> bool:
        """On the topic by declaration: ``on_topic = true``, or a lab's own posts."""
        return self.on_topic or self.kind in FIRST_PARTY

    @field_validator("kind")
    @classmethod
    def _known_kind(cls, value: str, info: ValidationInfo) -> str:
        if value not in KINDS:
            name = info.data.get("name", "?")
            raise ValueError(f"source {name!r}: unknown kind {value!r}; use one of {', '.join(KINDS)}")
        return value

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None or value == "auto":
            return value
        code = value.strip().lower().replace("_", "-").split("-")[0]
        if code not in ISO_639_1:
            name = info.data.get("name", "?")
            codes = "an ISO 639-1 code (en, zh, nl, …) or 'auto'"
            raise ValueError(f"source {name!r}: unknown language {value!r}; use {codes}")
        return value

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if not value.startswith(("http://", "https://", "file://", "/")):
            raise ValueError(f"must start with http://, https:// or file:// ({scheme_of(value)})")
        return value


class CategorySettings(Section):
    name: str = Field(pattern=r"^[a-z][a-z0-9_-]*$")
    label_en: str = ""
    label_zh: str = ""
    keywords: list[str] = Field(default_factory=list)
    weight: float = Field(default=1.0, ge=0, le=5)
    quota: int = Field(default=5, ge=0)


_VOCABULARY = vocabulary()
DEFAULT_CATEGORIES = [CategorySettings(**c) for c in _VOCABULARY["categories"]]
DEFAULT_TOPIC_KEYWORDS: list[str] = _VOCABULARY["topic"]["keywords"]
DEFAULT_TOPIC_ENTITIES: list[str] = _VOCABULARY["topic"]["entities"]
DEFAULT_LEADING: list[str] = _VOCABULARY["topic"]["leading"]
DEFAULT_LAB_SITES: list[str] = _VOCABULARY["topic"]["lab_sites"]
DEFAULT_SECTIONS: list[str] = _VOCABULARY["topic"]["sections"]
DEFAULT_NOT_NEWS: list[str] = _VOCABULARY["topic"]["not_news"]
DEFAULT_NOT_NEWS_TAGS: list[str] = _VOCABULARY["topic"]["not_news_tags"]


class TopicSettings(Section):
    """What the brief is about, and the evidence that says a story is (or is not news at all)."""

    name: str = Field(default="AI", min_length=1)
    description: str = Field(
        default="News about artificial intelligence: AI models and their releases, AI products and "
        "features, AI companies, their funding and business, AI research, AI policy, regulation "
        "and lawsuits, chips and compute for AI, AI safety and security.",
        min_length=1,
    )
    keywords: list[str] = Field(default_factory=lambda: list(DEFAULT_TOPIC_KEYWORDS))
    entities: list[str] = Field(
        default_factory=lambda: list(DEFAULT_TOPIC_ENTITIES),
        description="labs, companies, models and products whose name signals the topic",
    )
    leading: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LEADING),
        description="organisations whose own announcements are headline news",
    )
    lab_sites: list[str] = Field(
        default_factory=lambda: list(DEFAULT_LAB_SITES),
        description="sites of the labs themselves (openai.com): a link to one is the lab's own post, "
        "whichever feed carries it",
    )
    sections: list[str] = Field(
        default_factory=lambda: list(DEFAULT_SECTIONS),
        description="URL path segments of an outlet's section on the topic (/ai/ …)",
    )
    not_news: list[str] = Field(
        default_factory=lambda: list(DEFAULT_NOT_NEWS),
        description="title patterns (regular expressions) of items that are not news for any topic",
    )
    not_news_tags: list[str] = Field(
        default_factory=lambda: list(DEFAULT_NOT_NEWS_TAGS),
        description="feed categories of items that are not news (buying guides, deals)",
    )

    @field_validator("not_news")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"not_news pattern {pattern!r} is not a regular expression ({exc})"
                ) from None
        return value


class ShadowSettings(Section):
    """``[policy.shadow]``: a candidate policy that each daily run also decides under, unpublished."""

    candidate: ConfigPath = Field(
        min_length=1,
        description="a candidate policy file (TOML with [policy], as 'brief policy adopt' takes); "
        "relative to the config file",
    )


class PolicySettings(Section):
    lookback_hours: int = Field(default=48, ge=1, le=24 * 14)
    near_duplicate_threshold: float = Field(default=0.60, ge=0, le=1)
    same_source_threshold: float = Field(default=0.80, ge=0, le=1.01)
    min_shared_names: int = Field(
        default=2, ge=1, description="shared names that join a pair with non-English text"
    )
    cross_language_threshold: float = Field(
        default=0.55, ge=0, le=1, description="multilingual cosine joining a pair with non-English text"
    )
    top_stories: int = Field(default=5, ge=0)
    quick_links: int = Field(default=15, ge=0)
    min_category_confidence: float = Field(default=0.5, ge=0, le=1)
    question_margin: float = Field(
        default=0.08, ge=0, le=1, description="how far under the threshold a pair is asked about"
    )
    max_questions: int = Field(default=8, ge=0, description="questions raised per day, most important first")
    unverified: Literal["mark", "drop"] = Field(
        default="mark", description="what the fact-check does to an item"
    )
    categories: list[CategorySettings] = Field(default_factory=lambda: list(DEFAULT_CATEGORIES))
    topic: TopicSettings = Field(default_factory=TopicSettings)
    editorial_model: ModelRef = Field(
        default="builtin:ai",
        description="fitted relevance and importance weights: 'builtin:<name>' (shipped) or a JSON file "
        "written by 'brief learn'; 'rules' keeps the unfitted keyword ranking of earlier versions",
    )
    story_model: ModelRef = Field(
        default="builtin:stories",
        description="what decides which reports are one story: a pair model, 'builtin:stories' (shipped: "
        "see its card; it decides only under the embedding models it names, else the rules do) or a JSON "
        "file of one, or 'rules' (the cosine thresholds and hand rules)",
    )
    relevance_margin: float = Field(
        default=0.15, ge=0, le=0.5, description="how close to a decision a story's relevance is asked about"
    )
    # not part of the policy: left out of its version, of an adoption and of a candidate file
    shadow: ShadowSettings | None = Field(
        default=None, exclude=True, description="a candidate the daily run decides under beside this policy"
    )

    def version(self) -> str:
        """A short hash of the policy, of the fitted model it names and of the vocabulary shipped with
        the model: every derivation carries it."""
        import hashlib

        from tasks.editorial import model_digest
        from tasks.pairs import pair_model_digest
        from tasks.vocabulary import vocabulary_digest

        # a model file counts by its content, not its path: the same artefact read from the store's
        # copy (an adopted policy) or from where 'brief learn' wrote it is one version, and so is a
        # shipped model read from the copy an adoption kept of it (``builtin:<name>@<file>``)
        named = self.model_copy(
            update={field: _named(getattr(self, field)) for field in ("editorial_model", "story_model")}
        )
        text = (
            named.model_dump_json()
            + model_digest(self.editorial_model)
            + pair_model_digest(self.story_model)
            + vocabulary_digest()
        )
        return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


def _named(ref: str) -> str:
    """A model ref as the policy version reads it: ``rules``, ``builtin:<name>``, or ``file``."""
    if ref == "rules":
        return ref
    return ref.partition("@")[0] if ref.startswith("builtin:") else "file"


GateMode = Literal["blocking", "warning", "off"]


class GateSettings(Section):
    articles: GateMode = "warning"
    items: GateMode = "blocking"
    events: GateMode = "blocking"


class EmbeddingSettings(Section):
    model: str = Field(
        default="all-MiniLM-L6-v2",
        description="a sentence-transformers model name or local path, or 'use-multilingual-v3'",
    )
    multilingual: str = Field(
        default="use-multilingual-v3",
        description="the model dedup compares a pair with non-English text by (same choices as model); "
        "'': such pairs join only on the names their titles share",
    )
    # texts embedded at once (``tasks.embed.DEFAULT_BATCH_SIZE``, which says why 16)
    batch_size: int = Field(default=16, ge=1)


class CollectSettings(Section):
    """How the sources of a run are fetched: all at once, within bounds."""

    per_host: int = Field(default=2, ge=1, le=16, description="fetches of one host (host:port) at once")
    max_fetches: int = Field(default=16, ge=1, le=64, description="fetches of the whole process at once")
    timeout_s: float = Field(
        default=20.0, gt=0, le=300, description="seconds one fetch of a source may take, body included"
    )


LLMTask = Literal["relevance", "importance", "category", "summary", "translate"]
DEFAULT_LLM_TASKS: tuple[LLMTask, ...] = ("relevance", "summary", "translate")


class LLMSettings(Section):
    """An optional language model behind any OpenAI-compatible chat-completions server."""

    base_url: str = Field(description="e.g. http://localhost:11434/v1 (Ollama), https://api.openai.com/v1")
    model: str = Field(min_length=1, description="the model name the server knows")
    api_key_env: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="the NAME of the environment variable that holds the key (never the key)",
    )
    tasks: list[LLMTask] = Field(default_factory=lambda: list(DEFAULT_LLM_TASKS))
    max_calls_per_run: int = Field(default=200, ge=0)
    max_input_chars: int = Field(default=4000, ge=200)
    timeout_s: float = Field(default=30.0, gt=0)
    max_retry_after_s: float = Field(default=30.0, ge=0, description="longest Retry-After honoured")
    price_in_per_1k: float = Field(default=0.0, ge=0, description="price per 1k input tokens (any currency)")
    price_out_per_1k: float = Field(default=0.0, ge=0)
    prompts: OptionalConfigPath = Field(
        default=None, description="a folder of prompt templates replacing the shipped ones"
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        if "@" in value.partition("://")[2].split("/", 1)[0]:
            raise ValueError("must not carry credentials; name the key's variable in api_key_env")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https:// ({scheme_of(value)})")
        return value.rstrip("/")

    def fingerprint(self) -> str:
        """What makes the model's answers differ: model, tasks, input size and the prompt templates."""
        from tasks.llm import prompts_digest

        tasks = ",".join(sorted(self.tasks))
        return f"{self.model}|{tasks}|{self.max_input_chars}|{prompts_digest(self.prompts)}"


ENV_NAME = r"[A-Z_][A-Z0-9_]*"
PERSON_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}"


class DeskSettings(Section):
    """``[desk]``: who may use the editor's desk from another machine. ``[desk.people]`` maps each
    person's name to the environment variable that holds their token; the token itself is never
    written in the file. ``hosts`` names the desk by the names people type (a proxy's public name)."""

    people: dict[str, str] = Field(
        default_factory=dict, description="name = the environment variable holding that person's token"
    )
    hosts: list[str] = Field(
        default_factory=list,
        description=(
            "names the desk is reached by besides loopback and the address it listens on "
            '(e.g. ["desk.example.com"]); a request naming any other Host is refused'
        ),
    )
    tls: bool = Field(
        default=False,
        description=(
            "the desk is reached through TLS (a proxy serving https): its session cookie is marked "
            "Secure, so a browser sends it over https only; on by itself when a name in hosts is "
            "written https://…"
        ),
    )

    @model_validator(mode="before")
    @classmethod
    def _tls_from_hosts(cls, data: Any) -> Any:
        """A public name written with ``https://`` says the desk is reached through TLS."""
        if isinstance(data, dict) and "tls" not in data:
            hosts = data.get("hosts")
            if isinstance(hosts, list) and any(
                isinstance(h, str) and h.strip().lower().startswith("https://") for h in hosts
            ):
                return {**data, "tls": True}
        return data

    @field_validator("hosts")
    @classmethod
    def _bare_names(cls, value: list[str]) -> list[str]:
        """A name as a browser sends it in ``Host``: no scheme, no port, no path; IDNA for Unicode."""
        from urllib.parse import urlsplit

        names = []
        for entry in value:
            text = entry.strip()
            try:
                parts = urlsplit(text if "//" in text else f"//{text}")
                name = parts.hostname
                _ = parts.port
            except ValueError:
                name = None
            if not name or parts.path not in ("", "/"):
                raise ValueError(f"{entry!r} is not a host name; write it as desk.example.com")
            try:
                names.append(name.encode("idna").decode("ascii"))
            except UnicodeError:
                raise ValueError(f"{entry!r} is not a host name; write it as desk.example.com") from None
        return names

    @field_validator("people")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        import re

        for name, env in value.items():
            if not re.fullmatch(PERSON_NAME, name):
                raise ValueError(f"{name!r} is not a name: use letters, digits, '.', '_' or '-'")
            if not re.fullmatch(ENV_NAME, env):
                raise ValueError(
                    f"{name} must name the environment variable holding the token (e.g. DESK_TOKEN_"
                    f"{name.upper().replace('-', '_').replace('.', '_')}), never the token itself"
                )
        return value


class Settings(BaseSettings):
    """A config file's settings (``load_settings``): its TOML, and any ``BRIEF_<KEY>`` environment
    variable over it (``BRIEF_STORAGE__ROOT`` for ``[storage] root``; a table or list as JSON)."""

    model_config = SettingsConfigDict(
        extra="forbid",
        frozen=True,
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        validate_default=False,
    )

    storage: StorageSettings
    timezone: str = "UTC"
    schedule: str = Field(default="0 7 * * *", description="cron of the daily run, in `timezone`")
    language: Literal["en", "zh"] = "en"
    sources: list[SourceSettings] = Field(default_factory=list)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    collect: CollectSettings = Field(default_factory=CollectSettings)
    gates: GateSettings = Field(default_factory=GateSettings)
    llm: LLMSettings | None = None
    output: OutputSettings = Field(default_factory=OutputSettings)
    delivery: DeliverySettings = Field(default_factory=DeliverySettings)
    alerts: list[AlertChannel] = Field(
        default_factory=list, description="[[alerts]]: where an operator hears that something broke"
    )
    alerting: AlertingSettings = Field(default_factory=AlertingSettings)
    desk: DeskSettings = Field(default_factory=DeskSettings)
    policy_file: OptionalConfigPath = Field(
        default=None,
        description="a policy file (TOML with [policy]) that runs use instead of the adopted policy; "
        "each run says so and records it",
    )
    retention: dict[str, str] = Field(
        default_factory=dict,
        description="[retention]: event type -> age (90d) after which brief compact thins it",
    )
    _file: Path | None = PrivateAttr(default=None)  # the config file they were loaded from

    @property
    def config_option(self) -> str:
        """`` --config PATH`` for a command printed for a person to copy: the file these settings
        were loaded from, as it was named; empty for ``./brief.toml`` (found without the option)."""
        return config_option_of(self._file)

    @field_validator("retention")
    @classmethod
    def _retention(cls, value: dict[str, str]) -> dict[str, str]:
        from storage.retention import parse_rules

        parse_rules(value)
        return value

    @field_validator("alerts")
    @classmethod
    def _unique_alerts(cls, value: list[AlertChannel]) -> list[AlertChannel]:
        unique_names(value, "alert")
        return value

    @field_validator("delivery", mode="before")
    @classmethod
    def _channel_list(cls, value: object) -> object:
        return delivery_from_toml(value)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """What is given, over ``BRIEF_*`` variables, over the config file being loaded (if any)."""
        reading = _READING.get()
        if reading is None:
            return init_settings, env_settings
        toml = TomlConfigSettingsSource(settings_cls, toml_file=reading.file)
        _PARSES[0] += 1
        reading.data = toml.toml_data
        return init_settings, env_settings, toml

    def policy_version(self) -> str:
        """The policy's version, and the language model's part of the policy when one is configured."""
        if self.llm is None:
            return self.policy.version()
        import hashlib

        text = self.policy.version() + self.llm.fingerprint()
        return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()

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

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        if len(value.split()) != 5:
            raise ValueError(f"{value!r} is not a cron line; use five fields, e.g. '0 7 * * *'")
        return value

    def category_labels(self) -> dict[str, str]:
        """The categories' headings in the brief's language."""
        return {
            c.name: (c.label_zh if self.language == "zh" else c.label_en) or c.name
            for c in self.policy.categories
        }

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


def _is_model(path: str) -> bool:
    """Whether ``path`` holds an editorial model's JSON (not a policy's TOML)."""
    import json

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "relevance" in data and "card" in data


def read_policy(path: str, where: str) -> PolicySettings:
    """A candidate policy file's ``[policy]`` table (the config's schema); ``where`` starts each error.

    A relative ``editorial_model`` or ``story_model`` file is taken relative to the policy file, and
    loaded at once: a bad model file is one clear error before anything uses it.
    """
    from tasks.editorial import load_model
    from tasks.pairs import load_pair_model

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (FileNotFoundError, IsADirectoryError):
        raise ConfigError(f"{where}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        if _is_model(path):
            raise ConfigError(
                f"{where}: is an editorial model (what 'brief learn --out NAME.json' writes), not a policy; "
                "give the .toml 'brief learn --out NAME.toml' writes beside its model, or a TOML file with "
                f'[policy] editorial_model = "{path}"'
            ) from None
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    # a file without [policy] may hold the policy's keys at its top level; a table that is not one of
    # the policy's own ([llm], say) means the [policy] table is missing
    others = [k for k, v in data.items() if isinstance(v, dict) and k not in PolicySettings.model_fields]
    if "policy" not in data and others:
        tables = ", ".join(f"[{k}]" for k in others)
        raise ConfigError(
            f"{where}: has {tables} but no [policy] table; a candidate policy file needs one "
            "([llm] is accepted beside it)"
        )
    with reading_from(Path(path)):  # its model file is relative to it
        policy = _validated(_PolicyTable, {"policy": data.get("policy", data)}, where).policy
    if policy.shadow is not None:
        raise ConfigError(f"{where}: a candidate policy has no shadow of its own; remove its [policy.shadow]")
    try:
        load_model(policy.editorial_model)
        load_pair_model(policy.story_model)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return policy


def read_candidate(path: str, settings: Settings, where: str) -> Settings:
    """The settings a candidate file describes: its ``[policy]``, and its ``[llm]`` when it has one
    (a changed prompt folder or model is a policy too; relative paths are the file's)."""
    policy = read_policy(path, where)
    data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    llm = settings.llm
    if "llm" in data:
        with reading_from(Path(path)):  # its prompt folder is relative to it
            llm = _validated(_LLMTable, {"llm": data["llm"]}, where).llm
    return settings.model_copy(update={"policy": policy, "llm": llm})


class _PolicyTable(Section):
    """A candidate file's ``[policy]``, as its mistakes name it."""

    policy: PolicySettings


class _LLMTable(Section):
    """A candidate file's ``[llm]``, as its mistakes name it."""

    llm: LLMSettings


def _validated(model: type[T], data: dict, where: str) -> T:
    """``data`` as ``model``; a ConfigError naming every mistake, one line each, in the file's terms."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        from tasks.config_errors import explain

        raise ConfigError("\n".join(f"{where}: {line}" for line in explain(exc, data, model))) from None


def _with_shadow(settings: Settings, where: str) -> Settings:
    """The shadow candidate (its path already the config's folder's) read at once: a bad candidate
    is one clear error when the config is loaded, not in the middle of a run."""
    shadow = settings.policy.shadow
    if shadow is not None:
        read_candidate(shadow.candidate, settings, f"{where}: policy.shadow.candidate {shadow.candidate!r}")
    return settings


def config_option_of(path: Path | None) -> str:
    """`` --config PATH`` of the config file ``path`` as it was named; empty for ``./brief.toml``."""
    import shlex

    if path is None or path.resolve() == Path(DEFAULT_CONFIG).resolve():
        return ""
    return f" --config {shlex.quote(str(path))}"


def config_path(explicit: str | os.PathLike[str] | None) -> Path:
    """The config file to use: the option, else ``BRIEF_CONFIG``, else ``./brief.toml``."""
    chosen = explicit or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG
    path = Path(chosen).expanduser()
    if not path.is_file():
        how = "pass --config PATH or set BRIEF_CONFIG" if not explicit else "check the path"
        raise ConfigError(f"config file {str(path)!r} not found; {how} (see README: Configuration)")
    return path


@dataclass
class _Reading:
    """The config file being loaded, and what its TOML source read from it (for the error lines)."""

    file: Path
    data: dict = field(default_factory=dict)


_READING: ContextVar[_Reading | None] = ContextVar("config_reading", default=None)
_PARSES = [0]


def config_parses() -> int:
    """How many times this process has parsed a config file (each entrypoint parses its one once)."""
    return _PARSES[0]


# Settings a command checked as it parsed its options (``keep=True``), handed to its first
# ``load_settings`` of the same unchanged file instead of a second parse; forgotten when it ends.
_KEPT: ContextVar[tuple[tuple[object, ...], Settings] | None] = ContextVar("config_kept", default=None)


def _stamp(path: Path) -> tuple[object, ...]:
    """What the settings of ``path`` are made of: the file (where it is, as it is now) and the
    ``BRIEF_*`` variables that override it."""
    stat = path.stat()
    overrides = tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)))
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size, overrides


def forget_kept_settings() -> None:
    """Forget the settings a command kept (it has ended)."""
    _KEPT.set(None)


def load_settings(explicit: str | os.PathLike[str] | None = None, *, keep: bool = False) -> Settings:
    """The settings of the config file (``config_path``): its TOML, then ``BRIEF_*`` environment
    variables over it (``ENV_PREFIX``); a ConfigError naming every mistake at once.

    ``keep``: the command checks its config before it imports its services, and keeps the result
    for the first ``load_settings`` of the same file, which takes it instead of parsing again."""
    path = config_path(explicit)
    kept = _KEPT.get()
    if kept is not None and kept[0] == _stamp(path):
        if not keep:
            _KEPT.set(None)
        return kept[1]
    stamp = _stamp(path) if keep else None  # taken before the parse: a file changed during it is read again
    reading = _Reading(path)
    token = _READING.set(reading)
    try:
        with reading_from(path):
            # the storage root comes from the sources, not from an argument
            settings = _checked(lambda: Settings(), lambda: reading.data, str(path))  # type: ignore[call-arg]
    except tomllib.TOMLDecodeError as exc:
        from tasks.config_errors import toml_said

        raise ConfigError(f"{path}: {toml_said(path.read_text(errors='replace'), str(exc))}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; save the config as UTF-8") from None
    finally:
        _READING.reset(token)
    settings._file = path
    if keep and stamp is not None:
        _KEPT.set((stamp, settings))
    return settings


def parse_settings(data: dict, path: Path | None = None) -> Settings:
    """``data`` (a config file's tables) as settings, its relative paths ``path``'s folder's (as
    they are without one); a ConfigError naming every mistake, one line each."""
    with reading_from(path):
        return _checked(lambda: Settings.model_validate(data), lambda: data, str(path) if path else "config")


def _variables_behind(exc: ValidationError) -> list[str]:
    """The ``BRIEF_*`` variables that set a key a mistake of ``exc`` is about (the file may not
    hold that key at all)."""
    keys = {str(error["loc"][0]).upper() for error in exc.errors() if error["loc"]}
    return sorted(
        name
        for name in os.environ
        for key in keys
        if name.upper() == f"{ENV_PREFIX}{key}" or name.upper().startswith(f"{ENV_PREFIX}{key}__")
    )


def _unreadable_variable(said: str) -> str:
    """What pydantic-settings' "error parsing value for field 'sources'" means, and the fix."""
    found = re.search(r'field "([^"]+)"', said)
    top = f"{ENV_PREFIX}{found.group(1).upper()}" if found else ENV_PREFIX.rstrip("_")
    set_here = sorted(k for k in os.environ if k.upper() == top or k.upper().startswith(f"{top}__"))
    name = " or ".join(set_here) if set_here else f"a {ENV_PREFIX}* variable"
    return (
        f"the environment variable {name} is not JSON: a table or a list set in the environment is "
        f'written as JSON (e.g. {ENV_PREFIX}SOURCES=\'[{{"name": "lab", "url": "https://…"}}]\'); '
        "correct it or unset it"
    )


def _with_environment(data: dict, variables: list[str]) -> dict:
    """``data`` (the file's tables) with the top-level keys ``variables`` set in the environment
    over it, as they were read: a mistake in a variable's value is named by what the variable
    holds, not by the file's entry at the same place."""
    merged = dict(data)
    for name in variables:
        key = name[len(ENV_PREFIX) :].lower()
        if "__" in key:
            continue  # a key inside a table: the file's table still names it
        try:
            merged[key] = json.loads(os.environ[name])
        except ValueError:
            merged[key] = os.environ[name]
    return merged


def _checked(make: Callable[[], Settings], data: Callable[[], dict], where: str) -> Settings:
    """``make()``'s settings, checked beyond their schema (models, the shadow candidate, templates);
    every mistake one line in the file's own terms (``tasks/config_errors.py``)."""
    try:
        settings = make()
    except SettingsError as exc:  # a BRIEF_* variable holding a table or a list that is not JSON
        raise ConfigError(f"{where}: {_unreadable_variable(str(exc))}") from None
    except ValidationError as exc:
        from tasks.config_errors import explain

        variables = _variables_behind(exc)
        lines = [f"{where}: {line}" for line in explain(exc, _with_environment(data(), variables), Settings)]
        if variables:
            lines.append(f"{where}: set in the environment over the file: {', '.join(variables)}")
        raise ConfigError("\n".join(lines)) from None
    _check_model(settings, where)
    settings = _with_shadow(settings, where)
    if settings.output.templates:
        from tasks.render import check_templates

        check_templates(settings.output.templates, where)
    return settings
