"""What Claude Code sends a hook: the JSON on stdin, parsed and checked (``parse_hook_input``).

Also the name under which Claude Code knows the retrieve tool, which every
hook's text gives the model.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from compactor.claude_code.quick_hooks import HOOK_INPUT_MAX_BYTES, SESSION_ID_PATTERN
from compactor.claude_code.transcript.surrogates import replace_lone_surrogates
from compactor.core.errors import InputInvalid

__all__ = ["CLIENT_RETRIEVE_TOOL", "HookInput", "parse_hook_input"]


CLIENT_RETRIEVE_TOOL = "mcp__plugin_compactor_ccr__ccr_retrieve"
"""The retrieve tool as Claude Code names it: plugin ``compactor``, MCP server ``ccr``.

Claude Code defers MCP tools: the model loads one with ToolSearch
(``select:<name>``) before it can call it, so the texts say so."""


class HookInput(BaseModel):
    """The JSON Claude Code sends a hook on stdin; fields of other events are kept, not checked.

    ``session_id`` names a file under ``$COMPACTOR_HOME/sessions``, so it is
    limited to letters, digits, ``.``, ``_`` and ``-`` (Claude Code uses UUIDs).
    """

    model_config = ConfigDict(extra="allow")

    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    transcript_path: str | None = None
    cwd: str | None = None
    hook_event_name: str | None = None
    trigger: str | None = None
    """PreCompact: ``manual`` or ``auto``."""
    custom_instructions: str | None = None
    """PreCompact: the text after ``/compact``."""
    source: str | None = None
    """SessionStart: ``startup``, ``resume``, ``clear`` or ``compact``."""
    compact_summary: str | None = None
    """PostCompact: the summary Claude Code wrote."""

    @field_validator("transcript_path", "cwd")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        if value is not None and "\x00" in value:
            raise ValueError("holds a NUL character, which no file name can")
        return value


def parse_hook_input(data: bytes, *, warn: Callable[[str], None] | None = None) -> HookInput:
    """Parse the hook's stdin.

    A lone surrogate escape (``"\\ud800"``, which no UTF-8 text holds) is read
    as U+FFFD, and ``warn`` hears how many there were.

    Raises:
        InputInvalid: too large, not UTF-8 JSON, not an object, or without a usable ``session_id``.
    """
    if len(data) > HOOK_INPUT_MAX_BYTES:
        raise InputInvalid(f"hook input is {len(data):,} bytes, more than {HOOK_INPUT_MAX_BYTES:,}")
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputInvalid(f"hook input is not UTF-8 (byte {exc.start})") from exc
    except json.JSONDecodeError as exc:
        raise InputInvalid(f"hook input is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:
        raise InputInvalid("hook input is JSON nested too deeply") from exc
    except ValueError as exc:  # an integer of more digits than int() reads
        raise InputInvalid("hook input holds a number too long to read") from exc
    if not isinstance(value, dict):
        raise InputInvalid(f"hook input must be a JSON object, got {type(value).__name__}")
    value, replaced = replace_lone_surrogates(value)
    if replaced and warn is not None:
        warn(f"hook input: {replaced:,} lone surrogate escape(s) (not text) read as U+FFFD")
    try:
        return HookInput.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in exc.errors())
        raise InputInvalid(f"hook input: {problems}") from exc
