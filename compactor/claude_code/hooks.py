"""Claude Code hooks that make its own compaction reversible: one import for all of them.

Claude Code runs a hook command with the event as JSON on stdin
(``compactor.claude_code.hook_input``). Three events matter here, each in
its own module:

- **PreCompact** (``compactor.claude_code.pre_compact_hook``): before Claude
  Code summarizes, the conversation it summarizes is stored in CCR, and the
  hook prints extra instructions for the summarizer (keep the markers).
- **SessionStart** with source ``compact`` (``compactor.claude_code.session_start_hook``):
  after the compaction, a short reminder tells the model where that
  conversation is stored and how to bring any part of it back.
- **PostCompact** (``compactor.claude_code.post_compact_hook``): Claude
  Code's own summary is noted in the session record.

What the pre-compact hook stored is kept in the session record
(``compactor.claude_code.session_record``) for the hooks after it.

The functions are values in, text out, with the store, the transcript file
and the session record at the edges; ``compactor.cli.commands.hook`` is the
thin command line around them, and imports only the module of the event it
runs. The command line never blocks a compaction: on any failure it prints
nothing on stdout, says why on stderr and exits 0 (exit code 2 would stop
Claude Code from compacting at all, which leaves the user stuck at a full
context).
"""

from __future__ import annotations

from compactor.claude_code.hook_input import CLIENT_RETRIEVE_TOOL, HookInput, parse_hook_input
from compactor.claude_code.post_compact_hook import record_compact_summary
from compactor.claude_code.pre_compact_hook import (
    conversation_since_last_compaction,
    describe_call,
    kept_uuids,
    pre_compact,
    pre_compact_instructions,
    settle_kept_messages,
    store_conversation,
)
from compactor.claude_code.quick_hooks import DEFAULT_LISTED_RESULTS, HOOK_INPUT_MAX_BYTES
from compactor.claude_code.session_record import (
    SessionRecord,
    StoredResult,
    forget_latest_head,
    load_session_record,
    save_session_record,
    session_record_path,
    sessions_dir,
)
from compactor.claude_code.session_start_hook import (
    SESSION_START_MAX_CHARS,
    session_ledger,
    session_start,
    session_start_output,
    still_stored,
)

__all__ = [
    "CLIENT_RETRIEVE_TOOL",
    "DEFAULT_LISTED_RESULTS",
    "HOOK_INPUT_MAX_BYTES",
    "SESSION_START_MAX_CHARS",
    "HookInput",
    "SessionRecord",
    "StoredResult",
    "conversation_since_last_compaction",
    "describe_call",
    "forget_latest_head",
    "kept_uuids",
    "load_session_record",
    "parse_hook_input",
    "pre_compact",
    "pre_compact_instructions",
    "record_compact_summary",
    "save_session_record",
    "session_ledger",
    "session_record_path",
    "session_start",
    "session_start_output",
    "sessions_dir",
    "settle_kept_messages",
    "still_stored",
    "store_conversation",
]
