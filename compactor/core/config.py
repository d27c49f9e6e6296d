"""Settings: every tunable of the project in one validated model, and how to load it.

Precedence, highest first: explicit overrides (command-line flags) >
environment variables > a settings file (TOML or JSON) > the ``DEFAULT_*``
constants below. A bad value anywhere is a ``ConfigError`` that names the
setting and where it came from; nothing falls back silently.

Environment variables (all optional):

==================================  =========================================
``COMPACTOR_CONFIG``                settings file read when no file is given
``COMPACTOR_CONTEXT_WINDOW``        context window in tokens (200000)
``COMPACTOR_MAX_OUTPUT_TOKENS``     the model's maximum output tokens (32000);
                                    min(this, 20000) is reserved for the summary
``COMPACTOR_AUTOCOMPACT_PCT``       auto-compact at this percentage of the
                                    effective window (0 < pct <= 100); it can
                                    only lower the threshold, never raise it
``COMPACTOR_DISABLE_AUTO_COMPACT``  true: never compact automatically
``COMPACTOR_DISABLE_COMPACT``       true: never compact at all
``COMPACTOR_DISABLE_DEDUP``         true: leave repeated tool results alone
``COMPACTOR_MASKING``               true/false: mask old tool results between
                                    compactions (``[masking]``)
``COMPACTOR_COUNTER``               token counter: ``tiktoken`` or ``rough``
``COMPACTOR_TAIL_TOKENS``           tokens of recent rounds kept verbatim
``COMPACTOR_CONTEXT_TOKENS``        opt-in: tokens summary, tail and attachments
                                    may take together; unset or 0: no ceiling
``COMPACTOR_MEMORY_DB``             memory store to recall from after a compaction
``COMPACTOR_SUMMARY_FACTS_TOKENS``  tokens the extractive summary spends on
                                    paths and commands before citing a listing
``COMPACTOR_SUMMARIZER``            ``extractive``, ``anthropic``, ``openai``,
                                    ``anthropic-compact`` or ``openai-compact``
``COMPACTOR_LLM_BASE_URL``          base URL of the LLM summarizer's API
``COMPACTOR_LLM_MODEL``             model the LLM summarizer asks
``COMPACTOR_LLM_API_KEY_ENV``       name of the variable holding its API key
``COMPACTOR_LLM_TIMEOUT``           seconds one summary request may take
``COMPACTOR_LLM_MAX_OUTPUT_TOKENS`` output tokens a summary may use (<= 20000)
``COMPACTOR_BACKGROUND``            true/false: with an LLM summarizer, summarize
                                    the aged-out head in the background
                                    (``[background]``)
``COMPACTOR_BACKGROUND_MAX_WAIT``   seconds a compaction may wait on the model
                                    (0.25)
==================================  =========================================

Booleans accept ``1/0``, ``true/false``, ``yes/no``, ``on/off``; an empty
variable counts as unset. A settings file holds the same fields as
``Settings``, one table per section (``[policy]``, ``[dedup]``,
``[attachments]``, ``[pipeline]``, ``[masking]``, ``[llm]``, ``[background]``), for example::

    counter = "rough"

    [policy]
    context_window = 1000000
    autocompact_pct = 80

    [dedup.thresholds]
    Bash = 30000
    Read = "unbounded"
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from attachments.bounds import within_bound
from attachments.budgets import Budgets
from compactor.core.errors import ConfigError
from compactor.core.tokens import CounterName

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_AUTOCOMPACT_BUFFER",
    "DEFAULT_BACKGROUND_ENABLED",
    "DEFAULT_BACKGROUND_FAILURE_BACKOFF_SECONDS",
    "DEFAULT_BACKGROUND_MAX_WAIT_SECONDS",
    "DEFAULT_BACKGROUND_REFRESH_SHARE",
    "DEFAULT_BACKGROUND_START_SHARE",
    "DEFAULT_BLOCKING_BUFFER",
    "DEFAULT_CONTEXT_TOKENS",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_COUNTER",
    "DEFAULT_DEDUP_MIN_LENGTH",
    "DEFAULT_DEDUP_THRESHOLD",
    "DEFAULT_DEDUP_THRESHOLDS",
    "DEFAULT_ERROR_BUFFER",
    "DEFAULT_LLM_MAX_OUTPUT_TOKENS",
    "DEFAULT_LLM_TIMEOUT_SECONDS",
    "DEFAULT_MASKING_BATCH_MIN_SHARE",
    "DEFAULT_MASKING_BATCH_SHARE",
    "DEFAULT_MASKING_CACHE_POLICY",
    "DEFAULT_MASKING_CACHE_TTL_SECONDS",
    "DEFAULT_MASKING_ENABLED",
    "DEFAULT_MASKING_FOOTER",
    "DEFAULT_MASKING_KEEP_ROUNDS",
    "DEFAULT_MASKING_MIN_TOKENS",
    "DEFAULT_MASKING_SOFT_SHARE",
    "DEFAULT_MAX_CONSECUTIVE_FAILURES",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_RECOVERY_TOOLS",
    "DEFAULT_SUMMARIZER",
    "DEFAULT_SUMMARY_FACTS_TOKENS",
    "DEFAULT_SUMMARY_RESERVE_CAP",
    "DEFAULT_TAIL_TOKENS",
    "DEFAULT_THRASH_LIMIT",
    "DEFAULT_THRASH_TURNS",
    "DEFAULT_WARNING_BUFFER",
    "ENV_VARS",
    "MIN_CONTEXT_TOKENS",
    "BackgroundSettings",
    "DedupSettings",
    "LLMSettings",
    "MaskingCachePolicy",
    "MaskingFooter",
    "MaskingSettings",
    "PipelineSettings",
    "PolicySettings",
    "Settings",
    "SummarizerName",
    "context_budget",
    "is_recovery_tool",
    "load_settings",
]

# Thresholds (compactor.engine.policy).
DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_MAX_OUTPUT_TOKENS = 32_000
"""The model's maximum output; the summary reserve is the smaller of this and the cap."""
DEFAULT_SUMMARY_RESERVE_CAP = 20_000
DEFAULT_AUTOCOMPACT_BUFFER = 13_000
DEFAULT_WARNING_BUFFER = 20_000
DEFAULT_ERROR_BUFFER = 20_000
DEFAULT_BLOCKING_BUFFER = 3_000
DEFAULT_MAX_CONSECUTIVE_FAILURES = 3
DEFAULT_THRASH_TURNS = 3
DEFAULT_THRASH_LIMIT = 3

# Dedup (compactor.engine.dedup).
DEFAULT_DEDUP_MIN_LENGTH = 256
"""Results this long or shorter (UTF-16 code units) are never deduplicated."""
DEFAULT_DEDUP_THRESHOLD = 50_000
"""A result is eligible while its length + 26 stays within its tool's threshold."""
DEFAULT_DEDUP_THRESHOLDS: dict[str, int | None] = {"Bash": 30_000, "Grep": 20_000, "Read": None}
"""Per-tool thresholds, Claude Code's persistence thresholds (the size past which it saves a result to
disk): Bash 30,000, Grep 20,000, Read none; None means unbounded."""
DEFAULT_RECOVERY_TOOLS: tuple[str, ...] = (
    "ccr_get",
    "ccr_query",
    "ccr_range",
    "ccr_retrieve",
    "retrieve_tool_output",
    "tokenjuice_retrieve",
)
"""Tools whose output is recovered content, never deduplicated, masked or compacted again (an MCP
name ``mcp__<server>__<tool>`` matches on its last part): ours, and TinyJuice's ``tokenjuice_retrieve``
with its legacy alias ``retrieve_tool_output``."""

# Counting, pipeline, attachments.
DEFAULT_COUNTER: CounterName = "tiktoken"
DEFAULT_TAIL_TOKENS = 3_000
"""The tail's own cap: the context after compaction stays near Claude Code's next request
(``benchmarks/bench_files.py``; 6,000 makes it about 1.2x, 12,000 1.35x)."""
DEFAULT_CONTEXT_TOKENS: int | None = None
"""No shared ceiling: the summary, the tail and the attachments each keep their own budgets."""
MIN_CONTEXT_TOKENS = 1_000  # the smallest shared ceiling
_NoCeiling = Annotated[Literal[0], BeforeValidator(lambda v: int(v) if isinstance(v, str) and v.strip() == "0" else v)]
DEFAULT_SUMMARY_FACTS_TOKENS = 2_400
"""Tokens the extractive summary may spend listing paths and commands; the rest is stored and cited."""

# Masking between compactions (compactor.engine.masking) and the prompt cache (compactor.engine.cache).
MaskingCachePolicy = Literal["eager", "batch", "cold"]
MaskingFooter = Literal["compactor", "tinyjuice"]
DEFAULT_MASKING_ENABLED = False
DEFAULT_MASKING_KEEP_ROUNDS = 3
"""Tool results of the last this many answers are never masked."""
DEFAULT_MASKING_MIN_TOKENS = 300
"""Only results larger than this are masked (superseded reads: whenever the pointer is shorter)."""
DEFAULT_MASKING_SOFT_SHARE = 0.4
"""Masking may run once the context passes this share of the auto-compact threshold."""
DEFAULT_MASKING_BATCH_SHARE = 0.95
"""Past this share a waiting (``cold``) or ``batch`` policy masks everything eligible at once."""
DEFAULT_MASKING_BATCH_MIN_SHARE = 0.1
"""A batch step runs only when it saves at least this share of the auto-compact threshold."""
DEFAULT_MASKING_CACHE_TTL_SECONDS = 300.0
"""The prompt cache's lifetime since its last use (5 minutes)."""
DEFAULT_MASKING_CACHE_POLICY: MaskingCachePolicy = "cold"
DEFAULT_MASKING_FOOTER: MaskingFooter = "compactor"
"""How a masked result names its stored original: ours (``<<ccr:...>>`` and ``ccr_retrieve``), or
TinyJuice's partial-view footer (``tokenjuice_retrieve`` with token ``tj:<hex>``)."""

# Summarizer.
SummarizerName = Literal["extractive", "anthropic", "openai", "anthropic-compact", "openai-compact"]
DEFAULT_SUMMARIZER: SummarizerName = "extractive"
DEFAULT_LLM_TIMEOUT_SECONDS = 600.0
DEFAULT_LLM_MAX_OUTPUT_TOKENS = 20_000

# The background summary (compactor.summarizers.background).
DEFAULT_BACKGROUND_ENABLED = True
"""With an LLM summarizer, the aged-out head is summarized in the background while the agent works."""
DEFAULT_BACKGROUND_MAX_WAIT_SECONDS = 0.25
"""The longest a compaction waits on the model; past it the newer part is rendered extractively."""
DEFAULT_BACKGROUND_START_SHARE = 0.5
"""Background summaries start once the context passes this share of the auto-compact threshold."""
DEFAULT_BACKGROUND_REFRESH_SHARE = 0.1
"""A new background summary starts each time the context grew by this share of the threshold."""
DEFAULT_BACKGROUND_FAILURE_BACKOFF_SECONDS = 30.0
"""After a failed background request (no ``retry-after`` given), none is sent for this long."""

SETTINGS_FILE_MAX_BYTES = 16 * 1024 * 1024
"""Largest settings file read (16 MiB)."""

CONFIG_ENV = "COMPACTOR_CONFIG"
"""Environment variable naming a settings file, read when no file is passed."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_boolean_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """Refuse ``true``/``false`` where a number is expected (pydantic would read them as 1 and 0)."""
        if isinstance(value, bool) and info.field_name and cls.model_fields[info.field_name].annotation is not bool:
            raise ValueError(f"expected a number, not the boolean {str(value).lower()}")
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        """Refuse a number over ``MAX_SETTING_NUMBER`` (a typo such as 99999999999999999999999)."""
        return within_bound(value)


class PolicySettings(_Model):
    """When to compact (see ``compactor.engine.policy`` for the arithmetic)."""

    context_window: int = Field(default=DEFAULT_CONTEXT_WINDOW, gt=0)
    max_output_tokens: int = Field(default=DEFAULT_MAX_OUTPUT_TOKENS, gt=0)
    summary_reserve_cap: int = Field(default=DEFAULT_SUMMARY_RESERVE_CAP, ge=0)
    autocompact_buffer: int = Field(default=DEFAULT_AUTOCOMPACT_BUFFER, ge=0)
    warning_buffer: int = Field(default=DEFAULT_WARNING_BUFFER, ge=0)
    error_buffer: int = Field(default=DEFAULT_ERROR_BUFFER, ge=0)
    blocking_buffer: int = Field(default=DEFAULT_BLOCKING_BUFFER, ge=0)
    autocompact_pct: float | None = Field(default=None, gt=0, le=100)
    auto_compact: bool = True
    compact: bool = True
    max_consecutive_failures: int = Field(default=DEFAULT_MAX_CONSECUTIVE_FAILURES, gt=0)
    thrash_turns: int = Field(default=DEFAULT_THRASH_TURNS, gt=0)
    thrash_limit: int = Field(default=DEFAULT_THRASH_LIMIT, gt=0)

    @model_validator(mode="after")
    def _threshold_is_positive(self) -> PolicySettings:
        effective = self.context_window - min(self.max_output_tokens, self.summary_reserve_cap)
        if effective - max(self.autocompact_buffer, self.blocking_buffer) <= 0:
            raise ValueError(
                f"context_window {self.context_window} leaves no room: the effective window "
                f"({effective}) must exceed the auto-compact and blocking buffers"
            )
        if self.autocompact_pct is not None and int(effective * self.autocompact_pct / 100) <= 0:
            raise ValueError(
                f"autocompact_pct {self.autocompact_pct} of the effective window ({effective}) "
                "leaves an auto-compact threshold of 0 tokens"
            )
        return self


class DedupSettings(_Model):
    """Which tool results are deduplicated (see ``compactor.engine.dedup``)."""

    enabled: bool = True
    min_length: int = Field(default=DEFAULT_DEDUP_MIN_LENGTH, ge=0)
    default_threshold: int | None = Field(default=DEFAULT_DEDUP_THRESHOLD, gt=0)
    thresholds: dict[str, int | None] = Field(default_factory=lambda: dict(DEFAULT_DEDUP_THRESHOLDS))
    recovery_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_RECOVERY_TOOLS))

    @field_validator("default_threshold", mode="before")
    @classmethod
    def _unbounded_default(cls, value: Any) -> Any:
        return None if value == "unbounded" else value

    @field_validator("thresholds", mode="before")
    @classmethod
    def _unbounded_tools(cls, value: Any) -> Any:
        """Read ``"unbounded"`` as None, and lay the tools named over the defaults (naming one changes only it)."""
        if isinstance(value, Mapping):
            for tool, limit in value.items():
                if isinstance(limit, bool):
                    raise ValueError(f"threshold for {tool} must be a number or 'unbounded', not {str(limit).lower()}")
            return {**DEFAULT_DEDUP_THRESHOLDS, **{k: (None if v == "unbounded" else v) for k, v in value.items()}}
        return value

    @field_validator("thresholds")
    @classmethod
    def _positive_thresholds(cls, value: dict[str, int | None]) -> dict[str, int | None]:
        for tool, limit in value.items():
            if limit is not None and limit <= 0:
                raise ValueError(f"threshold for {tool} must be positive or 'unbounded', not {limit}")
        return value

    def threshold_for(self, tool: str) -> int | None:
        """The persistence threshold of ``tool`` (None: unbounded)."""
        return self.thresholds.get(tool, self.default_threshold)

    def is_recovery_tool(self, tool: str) -> bool:
        """True when ``tool`` (or the tool part of an MCP name) returns recovered content."""
        return is_recovery_tool(tool, self.recovery_tools)


def is_recovery_tool(tool: str, names: Sequence[str] = DEFAULT_RECOVERY_TOOLS) -> bool:
    """True when ``tool`` is one of ``names``, also as the last part of an MCP name (``mcp__srv__ccr_get``)."""
    return tool in names or tool.rsplit("__", 1)[-1] in names


class PipelineSettings(_Model):
    """How a compaction cuts the conversation."""

    tail_tokens: int = Field(default=DEFAULT_TAIL_TOKENS, ge=0)
    """The preserved tail's own cap (its last round may take up to ``pipeline.LAST_ROUND_TOKENS``)."""
    context_tokens: _NoCeiling | Annotated[int, Field(ge=MIN_CONTEXT_TOKENS, le=10**7)] | None = DEFAULT_CONTEXT_TOKENS
    """Opt-in: one budget the summary, the tail (at most ``TAIL_SHARE`` of it) and the attachments
    share; None or 0 (how a ``compactor tune`` space says none): no shared ceiling."""
    memory_db: str | None = None
    """A memory store (``compactor.memory``) to recall from after each compaction; None: no memories."""
    summary_facts_tokens: int = Field(default=DEFAULT_SUMMARY_FACTS_TOKENS, ge=0)


class MaskingSettings(_Model):
    """Masking old tool results between compactions (see ``compactor.engine.masking``).

    ``cache_policy``: ``eager`` masks at every check past the soft threshold;
    ``batch`` waits until ``batch_share`` and masks everything eligible at
    once (when that saves at least ``batch_min_share`` of the auto-compact
    threshold); ``cold`` masks past the soft threshold only while the prompt cache
    has gone cold (no request for ``cache_ttl_seconds``, from recorded
    timestamps), falling back to a batch at ``batch_share``.
    """

    enabled: bool = DEFAULT_MASKING_ENABLED
    keep_rounds: int = Field(default=DEFAULT_MASKING_KEEP_ROUNDS, ge=1)
    min_tokens: int = Field(default=DEFAULT_MASKING_MIN_TOKENS, ge=0)
    soft_share: float = Field(default=DEFAULT_MASKING_SOFT_SHARE, gt=0, le=1, allow_inf_nan=False)
    batch_share: float = Field(default=DEFAULT_MASKING_BATCH_SHARE, gt=0, le=1, allow_inf_nan=False)
    batch_min_share: float = Field(default=DEFAULT_MASKING_BATCH_MIN_SHARE, ge=0, le=1, allow_inf_nan=False)
    cache_ttl_seconds: float = Field(default=DEFAULT_MASKING_CACHE_TTL_SECONDS, gt=0, allow_inf_nan=False)
    cache_policy: MaskingCachePolicy = DEFAULT_MASKING_CACHE_POLICY
    footer: MaskingFooter = DEFAULT_MASKING_FOOTER
    """``tinyjuice`` for agents that know TinyJuice's partial views (offer them ``TINYJUICE_RECOVERY_TOOL``)."""

    @model_validator(mode="after")
    def _batch_not_below_soft(self) -> MaskingSettings:
        if self.batch_share < self.soft_share:
            raise ValueError(f"batch_share {self.batch_share} must not be below soft_share {self.soft_share}")
        return self


class LLMSettings(_Model):
    """The LLM summarizers' connection (used when ``summarizer`` is not extractive)."""

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    timeout_seconds: float = Field(default=DEFAULT_LLM_TIMEOUT_SECONDS, gt=0, allow_inf_nan=False)
    max_output_tokens: int = Field(default=DEFAULT_LLM_MAX_OUTPUT_TOKENS, gt=0, le=DEFAULT_LLM_MAX_OUTPUT_TOKENS)


class BackgroundSettings(_Model):
    """The background summary of an LLM summarizer (``compactor.summarizers.background``).

    ``max_wait_seconds`` bounds how long a compaction waits on the model
    (0: never); whatever the model has not covered by then is rendered
    extractively, and the report's ``summary_sources`` says so.
    """

    enabled: bool = DEFAULT_BACKGROUND_ENABLED
    max_wait_seconds: float = Field(default=DEFAULT_BACKGROUND_MAX_WAIT_SECONDS, ge=0, le=3_600, allow_inf_nan=False)
    start_share: float = Field(default=DEFAULT_BACKGROUND_START_SHARE, ge=0, le=1, allow_inf_nan=False)
    refresh_share: float = Field(default=DEFAULT_BACKGROUND_REFRESH_SHARE, gt=0, le=1, allow_inf_nan=False)
    failure_backoff_seconds: float = Field(
        default=DEFAULT_BACKGROUND_FAILURE_BACKOFF_SECONDS, ge=0, le=86_400, allow_inf_nan=False
    )


class Settings(_Model):
    """Every tunable of the project. Build it with ``load_settings``."""

    counter: CounterName = DEFAULT_COUNTER
    summarizer: SummarizerName = DEFAULT_SUMMARIZER
    policy: PolicySettings = Field(default_factory=PolicySettings)
    dedup: DedupSettings = Field(default_factory=DedupSettings)
    attachments: Budgets = Field(default_factory=Budgets)
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    masking: MaskingSettings = Field(default_factory=MaskingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    background: BackgroundSettings = Field(default_factory=BackgroundSettings)


def _parse_bool(raw: str) -> bool:
    word = raw.strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError(f"expected a boolean (1/0, true/false, yes/no, on/off), not {raw!r}")


def _negated_bool(raw: str) -> bool:
    return not _parse_bool(raw)


def _as_is(raw: str) -> str:
    return raw.strip()


ENV_VARS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "COMPACTOR_CONTEXT_WINDOW": ("policy.context_window", _as_is),
    "COMPACTOR_MAX_OUTPUT_TOKENS": ("policy.max_output_tokens", _as_is),
    "COMPACTOR_AUTOCOMPACT_PCT": ("policy.autocompact_pct", _as_is),
    "COMPACTOR_DISABLE_AUTO_COMPACT": ("policy.auto_compact", _negated_bool),
    "COMPACTOR_DISABLE_COMPACT": ("policy.compact", _negated_bool),
    "COMPACTOR_DISABLE_DEDUP": ("dedup.enabled", _negated_bool),
    "COMPACTOR_MASKING": ("masking.enabled", _parse_bool),
    "COMPACTOR_COUNTER": ("counter", _as_is),
    "COMPACTOR_TAIL_TOKENS": ("pipeline.tail_tokens", _as_is),
    "COMPACTOR_CONTEXT_TOKENS": ("pipeline.context_tokens", _as_is),
    "COMPACTOR_MEMORY_DB": ("pipeline.memory_db", _as_is),
    "COMPACTOR_SUMMARY_FACTS_TOKENS": ("pipeline.summary_facts_tokens", _as_is),
    "COMPACTOR_SUMMARIZER": ("summarizer", _as_is),
    "COMPACTOR_LLM_BASE_URL": ("llm.base_url", _as_is),
    "COMPACTOR_LLM_MODEL": ("llm.model", _as_is),
    "COMPACTOR_LLM_API_KEY_ENV": ("llm.api_key_env", _as_is),
    "COMPACTOR_LLM_TIMEOUT": ("llm.timeout_seconds", _as_is),
    "COMPACTOR_LLM_MAX_OUTPUT_TOKENS": ("llm.max_output_tokens", _as_is),
    "COMPACTOR_BACKGROUND": ("background.enabled", _parse_bool),
    "COMPACTOR_BACKGROUND_MAX_WAIT": ("background.max_wait_seconds", _as_is),
}
"""Environment variable -> (dotted setting, parser of its text)."""


def _set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``dotted`` in ``target``, creating missing sections.

    A section that holds something other than a table (``policy = 5`` in a
    file) is left as it is, so that validation reports it with its source
    instead of the new value silently replacing it.
    """
    *parents, leaf = dotted.split(".")
    node = target
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            return
        node = child
    node[leaf] = value


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` merged into a copy of ``base``, table by table (a non-table in ``base`` stays, as above)."""
    merged = dict(base)
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        elif isinstance(value, Mapping) and key in merged:
            continue
        else:
            merged[key] = dict(value) if isinstance(value, Mapping) else value
    return merged


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping) and path != "dedup.thresholds":
            flat.update(_flatten(value, path + "."))
        else:
            flat[path] = value
    return flat


def _read_file(path: Path) -> dict[str, Any]:
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".json"):
        raise ConfigError(f"settings file {path} must end in .toml or .json")
    from ccr.files import read_regular

    try:
        raw = read_regular(path, max_bytes=SETTINGS_FILE_MAX_BYTES)  # a FIFO or a device is refused
    except FileNotFoundError as exc:
        raise ConfigError(f"settings file {path} does not exist") from exc
    except OSError as exc:
        raise ConfigError(f"settings file {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        data = tomllib.loads(raw.decode("utf-8")) if suffix == ".toml" else json.loads(raw)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"settings file {path} is not valid {suffix[1:].upper()}: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"settings file {path} must hold a table of settings, not {type(data).__name__}")
    return data


def load_settings(
    file: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Settings from defaults < ``file`` < ``env`` < ``overrides``.

    ``env`` defaults to ``os.environ``; when ``file`` is None the file named
    by ``COMPACTOR_CONFIG`` (if any) is read. ``overrides`` takes nested
    mappings (``{"policy": {"context_window": 100000}}``) or dotted keys
    (``{"policy.context_window": 100000}``); a None value means "not given".

    Raises:
        ConfigError: the file is missing, unreadable or malformed, or any
            value is invalid; the message names the setting and its source.
    """
    environ = os.environ if env is None else env
    sources: dict[str, str] = {}
    data: dict[str, Any] = {}

    if file is None and environ.get(CONFIG_ENV, "").strip():
        file = Path(environ[CONFIG_ENV].strip())
    if file is not None:
        try:
            file_data = _read_file(Path(file))
            data = _merge(data, file_data)
            sources.update({path: f"{file}" for path in _flatten(file_data)})
        except RecursionError as exc:  # the parsers and the merge recurse once per level
            raise ConfigError(f"settings file {file} is nested too deeply to be settings") from exc

    for name, (dotted, parse) in ENV_VARS.items():
        raw = environ.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            value = parse(raw)
        except ValueError as exc:
            raise ConfigError(f"{name} ({dotted}): {exc}") from exc
        _set_dotted(data, dotted, value)
        sources[dotted] = name

    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            data = _merge(data, {key: value})
            sources.update({path: "override" for path in _flatten({key: value})})
        else:
            _set_dotted(data, key, value)
            sources[key] = "override"

    try:
        return Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, sources)) from exc


def _describe(exc: ValidationError, sources: Mapping[str, str]) -> str:
    problems = []
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        dotted = ".".join(loc) or "settings"
        origin = _origin(loc, sources)
        where = f" (from {origin})" if origin else ""
        problems.append(f"{dotted}{where}: {error['msg']}")
    return "invalid settings: " + "; ".join(problems)


def _origin(loc: list[str], sources: Mapping[str, str]) -> str | None:
    """Where the value at ``loc`` (or, for a whole section, one of its values) came from."""
    for n in range(len(loc), 0, -1):
        prefix = ".".join(loc[:n])
        if prefix in sources:
            return sources[prefix]
    prefix = ".".join(loc) + "."
    found = sorted({origin for path, origin in sources.items() if path.startswith(prefix)})
    return ", ".join(found) or None


def context_budget(settings: Settings) -> int | None:
    """The shared ceiling on the compacted context (``pipeline.context_tokens``), or None: none."""
    return settings.pipeline.context_tokens or None
