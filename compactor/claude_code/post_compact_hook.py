"""The PostCompact hook (``compactor hook post-compact``): note Claude Code's own summary in the session record.

Claude Code 2.1.332 runs it after SessionStart, so the SessionStart text
only has the summary with clients that run PostCompact first
(``compactor.claude_code.session_start_hook.session_ledger`` gets the record
either way).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from compactor.claude_code.session_record import is_pending, load_session_record, save_session_record

if TYPE_CHECKING:
    from compactor.claude_code.hook_input import HookInput
    from compactor.claude_code.session_record import SessionRecord

__all__ = ["record_compact_summary"]


def record_compact_summary(hook: HookInput, home: Path | None = None) -> SessionRecord | None:
    """Handle a PostCompact event: note Claude Code's summary (and trigger) in the session's record.

    Only a session whose latest pre-compact hook wrote a record gets it (a
    session that stored nothing keeps no record, and a record whose latest
    pre-compact hook did not finish describes an older compaction, whose
    summary this is not); the record as saved, or
    None when there is none or the input carries no summary. Claude Code
    2.1.332 runs this after the SessionStart hook (``tests/e2e``), so that
    hook only sees the summary with clients that run PostCompact first;
    the record keeps it for whoever reads it later.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record cannot be read or written.
    """
    if hook.compact_summary is None:
        return None
    record = load_session_record(hook.session_id, home)
    if record is None or is_pending(hook.session_id, home):
        return None
    record = record.model_copy(
        update={
            "compact_summary": hook.compact_summary,
            "trigger": record.trigger or hook.trigger,
        }
    )
    save_session_record(record, home)
    return record
