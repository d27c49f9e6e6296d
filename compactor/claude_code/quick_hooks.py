"""What the hook commands need before settings, models or the store load: the session-start hook
answers most starts from its input alone.

Claude Code runs the SessionStart hook at every start of a session
(``startup``, ``resume``, ``clear``) and after each compaction. Only a start
after a compaction, of a session whose conversation was stored or with
memories configured, has anything to say. ``nothing_to_say`` decides from
the input bytes, the environment and whether the session's record exists,
importing the standard library only (no pydantic, no settings); when it is
not sure it says no, and the full hook (``compactor.claude_code.session_start_hook``)
runs, reporting any bad input.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping

from ccr.paths import default_store_path

__all__ = [
    "DEFAULT_LISTED_RESULTS",
    "HOOK_INPUT_MAX_BYTES",
    "SESSION_ID",
    "SESSION_ID_PATTERN",
    "mark_pending",
    "nothing_to_say",
]

DEFAULT_LISTED_RESULTS = 15
"""How many stored tool results the pre-compact hook's summary instructions name, largest first."""

HOOK_INPUT_MAX_BYTES = 1024 * 1024
"""Hook input larger than this is refused: Claude Code sends a few hundred bytes."""

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
"""A session id names a file under ``$COMPACTOR_HOME/sessions``: Claude Code's are UUIDs."""
SESSION_ID = re.compile(SESSION_ID_PATTERN.removesuffix("$"))
"""The pattern as ``re`` matches it: with ``fullmatch``, ``$`` would also accept a final newline."""

_OPTIONAL_TEXT = (
    "transcript_path",
    "cwd",
    "hook_event_name",
    "trigger",
    "custom_instructions",
    "source",
    "compact_summary",
)
"""``compactor.claude_code.hook_input.HookInput``'s optional text fields: another type there is bad input."""

_NAMING_MEMORY = ("COMPACTOR_MEMORY_DB", "COMPACTOR_CONFIG")
"""The settings that can name a memory store to recall from (a settings file may)."""


def nothing_to_say(data: bytes, environ: Mapping[str, str]) -> bool:
    """Whether the session-start hook certainly prints nothing (and reports nothing) for ``data``.

    True for a well-formed input whose ``source`` is not ``compact``, and
    for one after a compaction of a session with no record under
    ``$COMPACTOR_HOME/sessions`` while no memory store can be configured.
    """
    if len(data) > HOOK_INPUT_MAX_BYTES:
        return False
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    if not isinstance(value, dict):
        return False
    session_id = value.get("session_id")
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        return False
    if any(value.get(key) is not None and not isinstance(value[key], str) for key in _OPTIONAL_TEXT):
        return False
    if value.get("source") != "compact":
        return True
    if any(environ.get(name, "").strip() for name in _NAMING_MEMORY):
        return False
    sessions = default_store_path(environ).parent / "sessions"
    return not (sessions / f"{session_id}.json").exists()


def mark_pending(data: bytes, environ: Mapping[str, str]) -> None:
    """Before a pre-compact hook does anything else: mark the session's record as not describing this compaction.

    The marker (``<session_id>.pending`` beside the record, see
    ``compactor.claude_code.session_record``) is removed once the hook has
    written the new record or said that it failed; a hook that runs out of
    time leaves it, and the session-start hook then names no stored copy.
    Written only when the session has a record; the standard library only,
    so that it is done within the first milliseconds. A marker that cannot be
    written is left unwritten (the hook goes on).
    """
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return
    session_id = value.get("session_id") if isinstance(value, dict) else None
    if not isinstance(session_id, str) or not SESSION_ID.fullmatch(session_id):
        return
    sessions = default_store_path(environ).parent / "sessions"
    if sessions.is_symlink() or not (sessions / f"{session_id}.json").exists():
        return
    try:
        descriptor = os.open(
            sessions / f"{session_id}.pending", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600
        )
        os.close(descriptor)
    except OSError:
        pass
