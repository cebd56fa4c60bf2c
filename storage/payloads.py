"""Payload models of the registered event types, and the upcasters between their versions.

Importing this module fills ``storage.registry.REGISTRY``. Facts (what was observed or
said) are shared by every run of a day; derivations (what a run decided under a policy)
carry their run and policy version in their id.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from storage.registry import REGISTRY


class Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- articles -------------------------------------------------------------------------


class ArticleCollectedV1(Payload):
    """First schema: the publish time as the feed wrote it, no language."""

    article_id: str
    source: str
    url: str
    canonical_url: str
    title: str
    summary: str = ""
    published: str | None = None
    content_hash: str


class ArticleCollectedV2(Payload):
    article_id: str
    source: str
    url: str
    canonical_url: str
    title: str
    summary: str = ""
    published_at: datetime | None = None
    language: str = "und"
    content_hash: str


class ArticleCollectedV3(Payload):
    """v3 adds the feed's own categories and tags (``<category>``, Atom ``category term``)."""

    article_id: str
    source: str
    url: str
    canonical_url: str
    title: str
    summary: str = ""
    published_at: datetime | None = None
    language: str = "und"
    content_hash: str
    tags: list[str] = Field(default_factory=list)


class ArticleEvidence(Payload):
    """What a source says of an item besides its text, as the source gave it."""

    points: int | None = None  # Hacker News points
    comments: int | None = None  # Hacker News comments
    stars: int | None = None  # a trending repository's stars
    stars_today: int | None = None
    repo_language: str | None = None
    upvotes: int | None = None  # a daily paper's upvotes
    digest_position: int | None = None  # the story's place in its digest (1 = first named)


class ArticleCollectedV4(ArticleCollectedV3):
    """v4 adds what a source's kind says of an item: the kind, the outlet named from the link
    (``techcrunch.com`` for a Hacker News link), the discussion's link and the evidence.

    The new fields are written only when the kind sets them: a news article's v4 payload is
    its v3 payload, word for word, so its event id does not change.
    """

    kind: Literal["news", "lab", "digest", "community", "repos", "papers"] | None = None
    outlet: str | None = None
    discussion_url: str | None = None
    evidence: ArticleEvidence | None = None

    @model_serializer(mode="wrap")
    def _omit_unset_kind_fields(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("kind", "outlet", "discussion_url", "evidence"):
            if data.get(name) is None:
                data.pop(name, None)
        evidence = {k: v for k, v in (data.pop("evidence", None) or {}).items() if v is not None}
        if evidence:
            data["evidence"] = evidence
        return data


def upcast_article_collected_v3_v4(payload: dict[str, Any]) -> dict[str, Any]:
    """v3 knew no kinds: every article was its outlet's own (news), with no evidence."""
    return dict(payload)


def upcast_article_collected_v2_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 did not keep the feed's categories: none are known."""
    return {**payload, "tags": []}


def upcast_article_collected_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 kept the raw publish string; v2 holds a UTC ISO time (or null) and a language."""
    out = {k: v for k, v in payload.items() if k != "published"}
    out["published_at"] = _iso_or_none(payload.get("published"))
    out["language"] = "und"
    return out


def _iso_or_none(text: str | None) -> str | None:
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return None
    return parsed.isoformat()


CORRECTABLE_FIELDS = ("title", "summary", "published_at", "language", "source", "category", "relevance")
RELEVANCE_MARKS = ("core", "related", "off-topic", "lead")


class ArticleCorrected(Payload):
    article_id: str
    field: Literal["title", "summary", "published_at", "language", "source", "category", "relevance"]
    value: str | None
    reason: str = ""
    by: str = "human"


class Via(Payload):
    """``via``: where a person's act was made (``desk`` for the editor's desk); written only when set,
    so an act made at the command line keeps the payload, and the id, it had before."""

    via: str | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {k: v for k, v in data.items() if not (k in OMITTED_WHEN_NONE and v is None)}


OMITTED_WHEN_NONE = frozenset({"via", "person", "follows"})


class ArticleCorrectedV2(ArticleCorrected, Via):
    """v2: ``via``; ``by`` names the person when the desk records it."""


def upcast_v1_same(payload: dict[str, Any]) -> dict[str, Any]:
    """A version that only added optional fields: the earlier payload is valid as it is."""
    return dict(payload)


# --- feeds ----------------------------------------------------------------------------


class FeedFetched(Payload):
    source: str
    url: str
    status: int
    content_hash: str
    items: int
    bytes: int = 0
    etag: str | None = None
    last_modified: str | None = None
    not_modified: bool = False
    elapsed_ms: float = 0.0


class FeedFetchedV2(FeedFetched):
    """v2 adds ``body``: where the fetched bytes are kept under the root (``raw/date=D/<hash>.zst``,
    ``storage/raw.py``), written only when a body was kept, so a v1 payload is a valid v2 one.
    A purge that rewrote the body without an item points it at the rewritten bytes; retention that
    dropped it leaves it out."""

    body: str | None = None

    @model_serializer(mode="wrap")
    def _omit_unset_body(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("body") is None:
            data.pop("body", None)
        return data


class FeedFailed(Payload):
    source: str
    url: str
    error: str
    retryable: bool
    message: str
    attempts: int = 1


class FeedWarned(Payload):
    """A feed entry its source's kind could not read as such: kept as one item, and said why."""

    source: str
    url: str
    entry_url: str
    warning: str  # a short code, e.g. DIGEST_UNSPLIT
    message: str


class FeedSkipped(Payload):
    """A source the run did not fetch, and why (a live feed asked for a date other than today)."""

    source: str
    url: str
    reason: str


# --- runs -----------------------------------------------------------------------------


class RunStartedV1(Payload):
    flow: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class RunProcess(Payload):
    """Where a run runs: a check on the same host can tell that its process is gone."""

    host: str
    pid: int = Field(ge=1)
    started: int | None = None  # the process's start time (clock ticks since boot), against pid reuse


class RunStartedV2(RunStartedV1):
    """v2 adds the run's process, so that a run killed without a word is found and recorded crashed."""

    process: RunProcess | None = None


class RunPolicy(Payload):
    """The policy a run decided under, and where it came from."""

    version: str
    origin: Literal[
        "adopted", "pinned", "config"
    ]  # an adoption, a file the config pins, the config's [policy]
    adoption: str | None = None  # the policy.adopted event in force (also when a pin overrides it)
    file: str | None = None  # the pinned file


class RunStarted(RunStartedV2):
    """v3 adds the policy the run ran under: an adopted one, a file the config pins, or the config's own."""

    policy: RunPolicy | None = None


def upcast_run_started_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 did not say where the run ran."""
    return {**payload, "process": None}


def upcast_run_started_v2_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 said only the policy's version (in its parameters), not where the policy came from."""
    return {**payload, "policy": None}


class RunFinished(Payload):
    status: Literal["completed"] = "completed"
    step_seconds: dict[str, float] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    llm: dict[str, Any] | None = None  # calls, tokens, cost and fallbacks when a language model is configured


class RunInputs(Payload):
    """What a run of a day read (a digest of its reach's events, settings, policy and code) and
    how it ended: a version published, or withheld and why (``tasks/steps/unchanged.py``)."""

    brief_date: str
    digest: str
    published: bool
    version: int | None = None
    items: int = Field(default=0, ge=0)
    reason: str = ""


class RunUnchanged(Payload):
    """A backfill found the day's inputs as its last run left them: that run's outcome stands."""

    brief_date: str
    digest: str
    outcome_of: str  # the run whose outcome stands


class RunFailed(Payload):
    step: str
    error: str
    message: str


class RunCrashed(Payload):
    """A run that ended without saying so: its process vanished (killed, out of memory, a reboot)."""

    how: str  # one line: "its process is gone", "Prefect marked it crashed"
    message: str = ""
    detected_by: Literal["hook", "check"]  # Prefect's on_crashed hook, or a later check of open runs


class RunCancelled(Payload):
    """A run stopped on purpose before it ended: Ctrl-C, SIGTERM (a service manager stopping it) or a
    cancellation from the Prefect UI. Who asked is not known; how it was asked is."""

    how: Literal["SIGINT", "SIGTERM", "prefect-ui"]
    after: str = ""  # the last step that ended before it stopped ("" before the first, or unknown)
    message: str = ""


def _key(*fields: str) -> Any:
    def natural_key(payload: Mapping[str, Any]) -> str:
        return "|".join(str(payload.get(f, "")) for f in fields)

    return natural_key


REGISTRY.register(
    "article.collected",
    {1: ArticleCollectedV1, 2: ArticleCollectedV2, 3: ArticleCollectedV3, 4: ArticleCollectedV4},
    upcasters={
        1: upcast_article_collected_v1_v2,
        2: upcast_article_collected_v2_v3,
        3: upcast_article_collected_v3_v4,
    },
    fact=True,
    natural_key=_key("article_id", "content_hash"),
)
REGISTRY.register(
    "article.corrected",
    {1: ArticleCorrected, 2: ArticleCorrectedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("article_id", "field"),
)
REGISTRY.register(
    "feed.fetched",
    {1: FeedFetched, 2: FeedFetchedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("source", "url", "content_hash"),
    hash_payload=False,
)
REGISTRY.register(
    "feed.warned", {1: FeedWarned}, fact=True, natural_key=_key("source", "entry_url", "warning")
)
REGISTRY.register("feed.failed", {1: FeedFailed}, fact=False, natural_key=_key("source", "url", "error"))
REGISTRY.register("feed.skipped", {1: FeedSkipped}, fact=False, natural_key=_key("source", "url"))
REGISTRY.register(
    "run.started",
    {1: RunStartedV1, 2: RunStartedV2, 3: RunStarted},
    upcasters={1: upcast_run_started_v1_v2, 2: upcast_run_started_v2_v3},
    fact=False,
    natural_key=_key("flow"),
)
REGISTRY.register(
    "run.finished", {1: RunFinished}, fact=False, natural_key=_key("status"), hash_payload=False
)
REGISTRY.register("run.inputs", {1: RunInputs}, fact=False, natural_key=_key("brief_date", "digest"))
REGISTRY.register(
    "run.unchanged", {1: RunUnchanged}, fact=False, natural_key=_key("brief_date", "outcome_of")
)
REGISTRY.register("run.failed", {1: RunFailed}, fact=False, natural_key=_key("step", "error"))
# one per run, whoever notices first (the hook or a check): the id is the day, the run and nothing else
REGISTRY.register("run.crashed", {1: RunCrashed}, fact=False, natural_key=_key(), hash_payload=False)
# one per run as well: a run stops once
REGISTRY.register("run.cancelled", {1: RunCancelled}, fact=False, natural_key=_key(), hash_payload=False)


# --- dedup, stories, analysis, briefs --------------------------------------------------


class DuplicateDetected(Payload):
    article_id: str
    duplicate_of: str
    reason: Literal["same_url", "same_content", "seen_before", "briefed_before"]
    first_brief_date: str | None = None


class StoryClusteredV1(Payload):
    story_id: str
    members: list[str]
    representative: str
    follow_up_of: str | None = None
    pair_scores: list[tuple[str, str, float]] = Field(default_factory=list)


class StoryClustered(StoryClusteredV1):
    """v2 says what decided the story and so what its pair scores are: ``rules`` (cosines, 1.0 for
    one page, 2.0 for a person's answer) or ``pairs:<digest>`` (the pair model's probabilities)."""

    decided_by: str = "rules"


def upcast_story_clustered_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 stories were decided by the cosine threshold and the hand rules."""
    return {**payload, "decided_by": "rules"}


class Anchor(Payload):
    article_id: str
    field: Literal["title", "summary"]
    start: int
    end: int


class Fact(Payload):
    kind: Literal["organization", "person", "product", "amount", "date"]
    text: str
    value: str
    anchor: Anchor


class StoryAnalyzed(Payload):
    story_id: str
    category: str
    confidence: float = Field(ge=0, le=1)
    importance: float = Field(ge=0, le=1)
    facts: list[Fact] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    relevance: float | None = Field(default=None, ge=0, le=1)
    outcome: Literal["core", "related", "off-topic"] | None = None


class StoryScored(Payload):
    """Why a story is (or is not) in the brief: the topic decision and the importance, with evidence."""

    story_id: str
    topic: str
    relevance: float = Field(ge=0, le=1)
    core: float = Field(ge=0, le=1)
    outcome: Literal["core", "related", "off-topic"]
    model_outcome: Literal["core", "related", "off-topic"] | None = None  # before a person's mark
    importance: float = Field(ge=0, le=1)
    evidence: dict[str, float]
    reasons: list[str] = Field(default_factory=list)
    marked_by: str | None = None
    model: str
    representative: str
    title: str


class BriefPublished(Payload):
    brief_date: str
    version: int = Field(ge=1)
    items: int
    stories: list[str]
    files: dict[str, str]
    content_hash: str
    version_files: dict[str, str] = Field(default_factory=dict)  # this version's own copies


class BriefUnchanged(Payload):
    """A run (a person's act's, or a day's run again) that composed the brief as its current version
    reads (``version``): nothing was published. What says that an act changed nothing."""

    brief_date: str
    version: int = Field(ge=1)
    content_hash: str


class BriefWithheld(Payload):
    """A brief readers did not get: too few core stories, or too many sources failed."""

    brief_date: str
    reason: str
    core: int = Field(ge=0)
    min_core: int = Field(ge=0)
    sources: int = Field(ge=0)
    failed_sources: list[str] = Field(default_factory=list)


EXACT_DUPLICATE = frozenset({"same_url", "same_content"})
# Two articles at one canonical URL, or with one content hash, is an observation no policy decides:
# a fact, recorded once however often the day is run again. That an article was news or briefed
# on an earlier day depends on the run's window: a derivation of the run.
REGISTRY.register(
    "article.duplicate_detected",
    {1: DuplicateDetected},
    fact=False,
    natural_key=_key("article_id", "reason"),
    fact_when=lambda payload: payload["reason"] in EXACT_DUPLICATE,
)
REGISTRY.register(
    "story.clustered",
    {1: StoryClusteredV1, 2: StoryClustered},
    upcasters={1: upcast_story_clustered_v1_v2},
    fact=False,
    natural_key=_key("story_id"),
)
REGISTRY.register("story.analyzed", {1: StoryAnalyzed}, fact=False, natural_key=_key("story_id"))
REGISTRY.register("story.scored", {1: StoryScored}, fact=False, natural_key=_key("story_id"))
REGISTRY.register(
    "brief.published",
    {1: BriefPublished},
    fact=False,
    natural_key=_key("brief_date", "version", "content_hash"),
)
REGISTRY.register(
    "brief.unchanged",
    {1: BriefUnchanged},
    fact=False,
    natural_key=_key("brief_date", "version", "content_hash"),
)
REGISTRY.register("brief.withheld", {1: BriefWithheld}, fact=False, natural_key=_key("brief_date", "reason"))


class FactcheckFailed(Payload):
    story_id: str
    kind: str
    claim: str
    reason: Literal[
        "NOT_IN_SOURCES", "AFTER_BRIEF_DATE", "SEVERAL_AMOUNTS", "NOT_COLLECTED", "INSTRUCTIONS", "MARKUP"
    ]
    sources_checked: list[str]
    # removed_model_text: a language model's summary said it, so the brief keeps the sources' own text
    action: Literal["marked_unverified", "dropped", "removed_model_text"] = "marked_unverified"


REGISTRY.register(
    "factcheck.failed",
    {1: FactcheckFailed},
    fact=False,
    natural_key=_key("story_id", "kind", "claim", "reason"),
)


class ValidationFailure(Payload):
    expectation: str
    column: str | None = None
    rows: list[str]


class ValidationCompleted(Payload):
    suite: str
    mode: Literal["blocking", "warning"]
    success: bool
    rows: int
    expectations: int
    failures: list[ValidationFailure] = Field(default_factory=list)
    quarantined: list[str] = Field(default_factory=list)


REGISTRY.register("validation.completed", {1: ValidationCompleted}, fact=False, natural_key=_key("suite"))


# --- review (interview protocol) --------------------------------------------------------


class ConfirmationRequested(Payload):
    question_id: str
    type: Literal["completion", "clarification", "confirmation"]
    subject: str
    field: str
    value: str
    prompt: str
    candidates: list[str] = Field(default_factory=list)
    default: str
    priority: int = Field(ge=0)
    batch_id: str


class ConfirmationResolved(Payload):
    question_id: str
    subject: str
    field: str
    value: str
    answer: str
    by: Literal["human", "default", "earlier-answer"]
    applied_from: str | None = None


class ConfirmationResolvedV2(ConfirmationResolved, Via):
    """v2: ``person``, who answered (``by`` says how: a person, the default, an earlier answer), and
    ``via``."""

    person: str | None = None


class StoryMerged(Payload):
    article_ids: list[str]
    question_id: str | None = None


class StorySplit(Payload):
    article_ids: list[str]
    question_id: str | None = None


class StoryMergedV2(StoryMerged, Via):
    """v2: ``person``, who said it when it was said outside an answer (at the desk), and ``via``."""

    person: str | None = None


class StorySplitV2(StorySplit, Via):
    """v2: ``person`` and ``via``, as for ``story.merged``."""

    person: str | None = None


REGISTRY.register(
    "confirmation.requested", {1: ConfirmationRequested}, fact=False, natural_key=_key("question_id")
)
REGISTRY.register(
    "confirmation.resolved",
    {1: ConfirmationResolved, 2: ConfirmationResolvedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("question_id"),
    hash_payload=False,
)
REGISTRY.register(
    "story.merged",
    {1: StoryMerged, 2: StoryMergedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("article_ids"),
)
REGISTRY.register(
    "story.split",
    {1: StorySplit, 2: StorySplitV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("article_ids"),
)


class PolicyEvaluatedV1(Payload):
    current_policy: str
    candidate_policy: str
    start: str
    end: str
    figures: dict[str, dict[str, float | int | None]]
    labels: str | None = None


class Verdict(Payload):
    """What an evaluation concludes, from judgements the candidate was not fitted on."""

    decision: Literal["adopt", "don't", "not enough evidence"]
    line: str  # the verdict as printed
    metric: str  # what was compared: agreement with people's marks and hand labels
    unseen: int  # judgements the candidate did not see
    seen_left_out: int  # judgements it was fitted on, left out of the comparison
    days: int
    difference: float | None = None  # candidate - current, share of unseen judgements agreed with
    interval: tuple[float, float] | None = None  # bootstrap over days, 95 %


class PolicyEvaluated(PolicyEvaluatedV1):
    """v2 adds the verdict."""

    verdict: Verdict | None = None


def upcast_policy_evaluated_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 gave figures and no verdict."""
    return {**payload, "verdict": None}


REGISTRY.register(
    "policy.evaluated",
    {1: PolicyEvaluatedV1, 2: PolicyEvaluated},
    upcasters={1: upcast_policy_evaluated_v1_v2},
    fact=False,
    natural_key=_key("current_policy", "candidate_policy", "start", "end"),
)


class PolicyArtefact(Payload):
    """A file of a policy, stored under the root by its content (``policies/blobs/<digest><suffix>``)."""

    kind: Literal["model", "story_model", "vocabulary", "prompt"]  # model: the editorial model
    name: str  # the model's ref, the vocabulary's file name, the prompt's task
    digest: str
    path: str  # relative to the root


class PolicyChange(Payload):
    key: str  # dotted, e.g. policy.near_duplicate_threshold or artefact.model
    before: Any = None
    after: Any = None


class PolicyAdopted(Payload):
    """A policy adopted, whole: its settings and the digests of its files, the change from the policy
    before it, who adopted it and why, and the evaluation that justified it. A rollback is one more
    adoption (``rollback_of`` names the adoption it undoes)."""

    version: str  # the policy version runs under it carry
    policy: dict[str, Any]  # the [policy] table, with the model named by its stored file
    llm: dict[str, Any] | None = None  # the [llm] table when the policy has one (prompts by digest)
    artefacts: list[PolicyArtefact]
    previous: str | None = None  # the policy.adopted event it replaces
    previous_version: str | None = None
    # the first adoption only: the policy the config gave runs before it ({policy, llm, artefacts}),
    # what rolling that adoption back restores
    baseline: dict[str, Any] | None = None
    changes: list[PolicyChange] = Field(default_factory=list)
    by: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    source: str  # the file adopted, or "rollback"
    evaluation: str | None = None  # the policy.evaluated event of this candidate, when there is one
    verdict: str | None = None  # that evaluation's decision
    rollback_of: str | None = None


class PolicyTables(Payload):
    """A policy whole, as an adoption holds it and as its ``baseline`` keeps the config's: the
    ``[policy]`` table, the ``[llm]`` table when there is one, and its files by digest (the rest of an
    adoption's payload is read past)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    policy: dict[str, Any]
    llm: dict[str, Any] | None = None
    artefacts: list[PolicyArtefact]


class RegressionCheck(Payload):
    """The regression set replayed before an adoption: how many cases each policy passed, the cases the
    candidate fails that the policy in force passes, and whether it was adopted all the same."""

    cases: int
    passed_current: int
    passed_candidate: int
    broken: list[str] = Field(default_factory=list)  # case ids
    forced: bool = False


class PolicyAdoptedV2(PolicyAdopted):
    """v2 adds the regression check that preceded the adoption (None: no check, e.g. a rollback)."""

    regression: RegressionCheck | None = None


def upcast_policy_adopted_v1_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 adoptions were made before the regression set existed."""
    return {**payload, "regression": None}


REGISTRY.register(
    "policy.adopted",
    {1: PolicyAdopted, 2: PolicyAdoptedV2},
    upcasters={1: upcast_policy_adopted_v1_v2},
    fact=True,
    natural_key=_key("version", "previous", "by", "reason", "rollback_of"),
)


# --- the regression set ---------------------------------------------------------------

EXPECTATIONS = ("off-topic", "related", "core", "lead", "same-as", "not-same")


class FrozenFacts(Payload):
    """The events a replay of the case's day reads, frozen under the root by digest
    (``policies/blobs/<digest>.events``: a log segment, one stored line each, zstd)."""

    digest: str
    path: str  # relative to the root
    events: int
    first_day: str
    last_day: str


class RegressionCaseAdded(Payload):
    """A decision frozen with the facts needed to replay it: every candidate policy must keep it.

    A story stands for its ``anchor`` article (the article named, or the story's representative),
    so a replay finds it whatever ids another clustering gives."""

    case_id: str
    expect: Literal["off-topic", "related", "core", "lead", "same-as", "not-same"]
    key: str  # what the person named: a story id, an article id or a link
    story_id: str  # the story as the brief showed it when the case was frozen
    anchor: str
    members: list[str]
    other_key: str | None = None  # same-as / not-same: the other story
    other_story_id: str | None = None
    other_anchor: str | None = None
    other_members: list[str] = Field(default_factory=list)
    facts: FrozenFacts
    by: str = Field(min_length=1)
    note: str = ""
    via: str | None = None  # cli, desk, review
    correction: str | None = None  # the correction event it was made from, when there is one


REGISTRY.register(
    "regression.case_added",
    {1: RegressionCaseAdded},
    fact=True,
    natural_key=_key("case_id"),
    hash_payload=False,
)


# --- shadow runs: what a candidate policy would have decided, never published ------------------


class ShadowClustered(StoryClustered):
    """A story as the shadow candidate would have grouped it: its ``story.clustered``, under the
    candidate's version, beside the run's own. No projection of the published brief reads it."""

    live_policy: str  # the version the run published under


class ShadowScored(StoryScored):
    """A story as the shadow candidate would have scored it: its ``story.scored``."""

    live_policy: str


class ShadowFinished(Payload):
    """One run's shadow: which candidate, and how many of its decisions differed from the run's."""

    candidate: str  # the candidate's version (the events' policy_version)
    file: str  # the candidate file as the config named it
    live_policy: str
    articles: int  # the day's news articles both policies decided about
    stories: int  # the candidate's stories
    kept: int  # of them, core or related
    differed: dict[str, int]  # relevance / clustering / top: articles decided otherwise
    seconds: float


REGISTRY.register("shadow.clustered", {1: ShadowClustered}, fact=False, natural_key=_key("story_id"))
REGISTRY.register("shadow.scored", {1: ShadowScored}, fact=False, natural_key=_key("story_id"))
REGISTRY.register("shadow.finished", {1: ShadowFinished}, fact=False, natural_key=_key("candidate"))


# --- the language model ---------------------------------------------------------------


class LLMCalled(Payload):
    """One request to a language model and its answer (or why there was none): the log is the cache."""

    task: Literal["relevance", "importance", "category", "summary", "translate"]
    subject: str  # the story asked about
    articles: list[str]
    model: str
    server: str  # host:port only, never a key or a path with secrets
    template: str  # id@version:digest
    messages: list[dict[str, str]]
    params: dict[str, Any] = Field(default_factory=dict)
    response: str | None = None
    output: dict[str, Any] | None = None  # the validated answer
    invalid: str | None = None  # why the response was not a valid answer
    error: str | None = None  # why there was no response
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: int = 0
    cost: float = 0.0
    attempt: int = 1
    request_key: str


REGISTRY.register(
    "llm.called", {1: LLMCalled}, fact=False, natural_key=_key("request_key", "attempt", "error", "response")
)


class TranslationFinding(Payload):
    kind: str  # name | amount | number | date | link | instructions | markup | text
    claim: str
    reason: Literal["DROPPED", "NOT_IN_SOURCES", "INSTRUCTIONS", "MARKUP", "LINK", "UNCHANGED"]


class TitleTranslated(Payload):
    """A title in the brief's language from the language model, and whether the brief shows it:
    ``accepted`` when it keeps every name and number of the original and adds none; else the
    ``findings`` say why the original stands alone."""

    story_id: str
    article_id: str  # whose title (the story's representative)
    source_language: str
    language: str  # the brief's
    original: str
    translation: str
    accepted: bool
    findings: list[TranslationFinding] = Field(default_factory=list)


REGISTRY.register(
    "title.translated",
    {1: TitleTranslated},
    fact=False,
    natural_key=_key("story_id", "article_id", "language"),
)


# --- delivery -------------------------------------------------------------------------
# A message sent is a fact of the world: shared by every run, recorded once per channel,
# version and kind, whatever reruns or resends follow. ``target`` is a scheme and host only.


class BriefDelivered(Payload):
    brief_date: str
    channel: str
    version: int
    kind: Literal["brief", "update", "review"]
    target: str
    format: Literal["html", "markdown", "text"]
    subject: str
    attempts: int = Field(ge=1)
    released: Literal["direct", "approved", "deadline"] = "direct"
    by: str | None = None  # who approved, when a person released a held brief
    note: str | None = None


class DeliveryFailed(Payload):
    brief_date: str
    channel: str
    version: int
    kind: Literal["brief", "update", "review"]
    target: str
    reason: str
    attempt: int = Field(ge=1)
    attempted_at: datetime
    will_retry: bool
    resend: str  # the command that sends it by hand


class BriefHeld(Payload):
    brief_date: str
    version: int
    review_channel: str
    until: datetime | None = None  # delivered without approval then


class BriefApproved(Payload):
    brief_date: str
    version: int
    by: str
    via: Literal["approve", "review"]


class BriefApprovedV2(Payload):
    """v2: approved at the editor's desk too."""

    brief_date: str
    version: int
    by: str
    via: Literal["approve", "review", "desk"]


class BriefCorrected(Via):
    """A person's correction of an item's headline or summary as the brief shows it: the next version
    shows the new text and a visible correction line."""

    story_id: str
    field: Literal["title", "summary"]
    value: str = Field(min_length=1)
    previous: str
    note: str = ""
    by: str


class StoryRetracted(Via):
    """A person's retraction of an item: it leaves the brief, and its note shows in its place."""

    story_id: str
    title: str
    note: str = Field(min_length=1)
    by: str


class StoryRetractedV2(StoryRetracted):
    """v2: ``follows``, the undo (a ``story.restored`` event's id) a retraction made again after its
    item came back follows: that retraction is a fact of its own, not the first one again. Written
    only when set, so a first retraction keeps the payload, and the id, it had in v1."""

    follows: str | None = None


class StoryRestored(Via):
    """A person's undoing of a retraction (``retraction``: its event id): the item comes back in the
    next version; the retraction stays in the log, and the history shows both."""

    story_id: str
    retraction: str
    note: str = ""
    by: str


REGISTRY.register(
    "brief.delivered",
    {1: BriefDelivered},
    fact=True,
    natural_key=_key("channel", "version", "kind"),
    hash_payload=False,
)
REGISTRY.register(
    "delivery.failed",
    {1: DeliveryFailed},
    fact=True,
    natural_key=_key("channel", "version", "kind", "attempt", "attempted_at"),
    hash_payload=False,
)
REGISTRY.register("brief.held", {1: BriefHeld}, fact=True, natural_key=_key("brief_date"), hash_payload=False)
REGISTRY.register(
    "brief.approved",
    {1: BriefApproved, 2: BriefApprovedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("brief_date"),
    hash_payload=False,
)
REGISTRY.register("brief.corrected", {1: BriefCorrected}, fact=True, natural_key=_key("story_id", "field"))
REGISTRY.register(
    "story.retracted",
    {1: StoryRetracted, 2: StoryRetractedV2},
    upcasters={1: upcast_v1_same},
    fact=True,
    natural_key=_key("story_id"),
)
REGISTRY.register("story.restored", {1: StoryRestored}, fact=True, natural_key=_key("story_id", "retraction"))


# --- alerts ---------------------------------------------------------------------------
# An alert is a fact: sent once per cause, channel and brief date whichever run or check sends it.


class AlertSent(Payload):
    cause: str  # the cause's key within the day: withheld, run-failed, source-failing:<name> …
    channel: str
    target: str  # scheme and host only
    subject: str
    attempts: int = Field(ge=1)


class AlertFailed(Payload):
    cause: str
    channel: str
    target: str
    reason: str  # redacted
    attempt: int = Field(ge=1)
    attempted_at: datetime
    will_retry: bool


REGISTRY.register(
    "alert.sent", {1: AlertSent}, fact=True, natural_key=_key("cause", "channel"), hash_payload=False
)
REGISTRY.register(
    "alert.failed",
    {1: AlertFailed},
    fact=True,
    natural_key=_key("cause", "channel", "attempt", "attempted_at"),
    hash_payload=False,
)


# --- takedowns ------------------------------------------------------------------------
# A purge is a person's act: a fact. It names what was taken out by id and digest only, never by
# its text, so the tombstone itself holds nothing of what it removed.


class ArticlePurged(Payload):
    """Articles taken out of the store (``brief purge``): one tombstone in each day that held them.

    ``target`` is what was asked (``article:<id>`` or ``source:<name>``); ``article_ids`` the
    articles of this day it covers (copies at the same link or with the same text included)."""

    target: str = Field(min_length=1)
    article_ids: list[str]
    source: str | None = None  # the source purged, for a --source purge
    reason: str = Field(min_length=1)
    by: str = Field(min_length=1)


REGISTRY.register("article.purged", {1: ArticlePurged}, fact=True, natural_key=_key("target", "reason"))
