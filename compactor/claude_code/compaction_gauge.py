"""How far the next compaction is: Claude Code's thresholds for a window and client, and the figures
a ``compactor.claude_code.live_state.LiveState`` gives against them (what the status line shows).

The arithmetic is ``compactor.engine.policy``'s, without pydantic (the
status line runs after every answer); a test keeps the two equal.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import re
from collections.abc import Mapping
from typing import NamedTuple

from ccr.paths import default_store_path
from compactor.claude_code.live_state import PACE_ANSWERS, SESSION_ID, LiveState

__all__ = [
    "AUTOCOMPACT_BUFFER",
    "FILES_RESTORED",
    "OLD_CLIENT_RESERVE",
    "SUMMARY_RESERVE_CAP",
    "Figures",
    "Limits",
    "figures",
    "limits_for",
    "restored_otherwise",
    "stored_spans",
]

MAX_OUTPUT_TOKENS = 32_000
"""``compactor.core.config.DEFAULT_MAX_OUTPUT_TOKENS``: the model's maximum output."""
SUMMARY_RESERVE_CAP = 20_000
"""``DEFAULT_SUMMARY_RESERVE_CAP``: what Claude Code 2.1 reserves for the summary, at most."""
OLD_CLIENT_RESERVE = 32_000
"""What clients before 2.1 reserved: the whole maximum output (2.0.65 compacted at 155,317)."""
AUTOCOMPACT_BUFFER = 13_000
"""``DEFAULT_AUTOCOMPACT_BUFFER``: auto-compact at effective window - 13,000."""
WARNING_BUFFER = 20_000
BLOCKING_BUFFER = 3_000
FILES_RESTORED = 5
"""Claude Code restores the 5 files read most recently."""
_MEMORY_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md"})


class Limits(NamedTuple):
    """``compactor.engine.policy.Thresholds`` for one window, worked out without pydantic."""

    context_window: int
    summary_reserve: int
    effective_window: int
    auto_compact: int
    warning: int
    blocking: int
    auto_enabled: bool = True


def _client_before(version: str | None, major: int, minor: int) -> bool:
    if not version:
        return False
    parts = re.findall(r"\d+", version)[:2]
    if len(parts) < 2:
        return False
    return (int(parts[0]), int(parts[1])) < (major, minor)


def limits_for(
    context_window: int,
    *,
    client: str | None = None,
    max_output_tokens: int = MAX_OUTPUT_TOKENS,
    environ: Mapping[str, str] | None = None,
) -> Limits:
    """The thresholds Claude Code works with for ``context_window`` (``compactor.engine.policy``'s arithmetic).

    A client before 2.1 reserved the whole maximum output; Claude Code's own
    ``CLAUDE_CODE_AUTO_COMPACT_WINDOW`` (a smaller window),
    ``CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`` (1-100, only lowers) and
    ``DISABLE_AUTO_COMPACT``/``DISABLE_COMPACT`` are honoured, as the client does.
    """
    env = os.environ if environ is None else environ
    window = context_window
    override = _positive(env.get("CLAUDE_CODE_AUTO_COMPACT_WINDOW"))
    if override is not None:
        window = min(window, override)
    cap = OLD_CLIENT_RESERVE if _client_before(client, 2, 1) else SUMMARY_RESERVE_CAP
    reserve = min(max_output_tokens, cap)
    effective = window - reserve
    auto = effective - AUTOCOMPACT_BUFFER
    pct = _positive(env.get("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"))
    if pct is not None and pct <= 100:
        auto = min(auto, int(effective * pct / 100))
    enabled = not any(_truthy(env.get(name)) for name in ("DISABLE_AUTO_COMPACT", "DISABLE_COMPACT"))
    base = auto if enabled else effective
    return Limits(
        context_window=window,
        summary_reserve=reserve,
        effective_window=effective,
        auto_compact=auto,
        warning=base - WARNING_BUFFER,
        blocking=effective - BLOCKING_BUFFER,
        auto_enabled=enabled,
    )


def _positive(value: str | None) -> int | None:
    try:
        number = int(str(value).strip())
    except ValueError:
        return None
    return number if number > 0 else None


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "yes", "on")


class Figures(NamedTuple):
    """What the status line says: the context against the threshold, the pace, what a compaction keeps."""

    tokens: int
    threshold: int
    limits: Limits
    tokens_left: int
    per_answer: int | None
    """The context's growth per answer lately (None before two answers)."""
    answers_left: int | None
    paths: int
    commands: int
    messages: int
    files: list[str]
    stored: int
    compactions: int

    @property
    def used(self) -> float:
        """The share of the threshold used (1.0 at the threshold)."""
        return self.tokens / self.threshold if self.threshold > 0 else 1.0


def restored_otherwise(path: str) -> bool:
    """Whether a read file comes back some other way than as a file attachment: a memory file
    (``CLAUDE.md`` and kin, ``.claude/rules/``) or a plan (``.claude/plans/``), as
    ``attachments.exclusions`` decides."""
    parts = path.replace("\\", "/").split("/")
    if parts[-1] in _MEMORY_FILES:
        return True
    pairs = list(itertools.pairwise(parts))
    return any(a == ".claude" and b == "rules" for a, b in pairs) or any(
        a == ".claude" and b == "plans" for a, b in pairs[:-1]
    )


def figures(state: LiveState, limits: Limits, *, stored: int = 0) -> Figures:
    """The status line's figures for ``state`` under ``limits``; ``stored``: spans already in the store."""
    tokens = state.tokens
    threshold = limits.auto_compact if limits.auto_enabled else limits.effective_window
    left = max(0, threshold - tokens)
    pace = state.pace[-(PACE_ANSWERS + 1) :]
    per = (pace[-1] - pace[0]) // (len(pace) - 1) if len(pace) > 1 else None
    answers_left = math.ceil(left / per) if per is not None and per > 0 else None
    restorable = [p for p in state.reads if not restored_otherwise(p)]
    files = sorted(restorable, key=lambda p: state.reads[p], reverse=True)[:FILES_RESTORED]
    return Figures(
        tokens=tokens,
        threshold=threshold,
        limits=limits,
        tokens_left=left,
        per_answer=per,
        answers_left=answers_left,
        paths=len(state.paths),
        commands=len(state.commands),
        messages=len(state.messages),
        files=files,
        stored=stored,
        compactions=state.compactions,
    )


def stored_spans(session_id: str, environ: Mapping[str, str] | None = None) -> int:
    """The spans the plugin's hooks stored for ``session_id``: the distinct handles its record names
    (``$COMPACTOR_HOME/sessions/<id>.json``, ``compactor.claude_code.session_record``); 0 without one."""
    if not SESSION_ID.fullmatch(session_id):
        return 0
    record = default_store_path(environ).parent / "sessions" / f"{session_id}.json"
    try:
        with open(record, "rb") as handle:
            data = json.load(handle)
    except (OSError, ValueError, RecursionError):
        return 0
    if not isinstance(data, dict):
        return 0
    handles: set[str] = set()
    for name in ("head_handle", "dropped_handle", "ledger_handle"):
        if isinstance(data.get(name), str):
            handles.add(data[name])
    for name in ("earlier_heads", "earlier_dropped"):
        handles.update(h for h in data.get(name) or [] if isinstance(h, str))
    for result in data.get("results") or []:
        if isinstance(result, dict) and isinstance(result.get("handle"), str):
            handles.add(result["handle"])
    return len(handles)
