"""Claude Code transcripts (JSONL session files): one folder for the format.

One public entry point per job:

- reading: ``read_transcript`` (one session, with its state rebuilt) and
  ``read_sessions`` (every session a file holds), in ``reader.py``;
  ``iter_records`` streams the raw JSON objects (``_lines.py``);
- writing: ``write_transcript`` (a transcript back as read, or a new chain
  of entries; ``compaction_entries`` are the records of one compaction as
  Claude Code writes them), in ``writer.py``;
- state rebuilding: ``StateBuilder`` (``state.py``), which a replay drives
  entry by entry;
- file effects: ``file_effect`` (``file_effects.py``), what one Read, Write
  or Edit did to a file;
- text: ``replace_lone_surrogates`` (``surrogates.py``), what the reader and
  the hooks' stdin do to escapes that no UTF-8 text holds.

The values they share (``Transcript``, ``TranscriptEntry``,
``RecordedCompaction``, ``Fragment``, ``ReadWarning``) live in ``_models.py``.
A change in Claude Code's format is this folder's work.
"""

from __future__ import annotations

from compactor.claude_code.transcript._lines import MAX_LINE_BYTES, Record, iter_records
from compactor.claude_code.transcript._models import (
    SHAPE_KINDS,
    Fragment,
    ReadWarning,
    RecordedCompaction,
    Transcript,
    TranscriptEntry,
    WarningKind,
)
from compactor.claude_code.transcript.file_effects import (
    FileEdit,
    FileEffect,
    FileRead,
    FileWrite,
    Replacement,
    file_effect,
    strip_line_numbers,
)
from compactor.claude_code.transcript.reader import (
    KNOWN_ENTRY_TYPES,
    check_transcript,
    read_sessions,
    read_transcript,
)
from compactor.claude_code.transcript.state import StateBuilder, parse_timestamp
from compactor.claude_code.transcript.surrogates import replace_lone_surrogates
from compactor.claude_code.transcript.writer import (
    boundary_entry,
    compaction_entries,
    refuse_overwriting,
    write_atomically,
    write_transcript,
)

__all__ = [
    "FileEdit",
    "FileEffect",
    "FileRead",
    "FileWrite",
    "Fragment",
    "KNOWN_ENTRY_TYPES",
    "MAX_LINE_BYTES",
    "ReadWarning",
    "Record",
    "RecordedCompaction",
    "Replacement",
    "SHAPE_KINDS",
    "StateBuilder",
    "Transcript",
    "TranscriptEntry",
    "WarningKind",
    "boundary_entry",
    "check_transcript",
    "compaction_entries",
    "file_effect",
    "iter_records",
    "parse_timestamp",
    "read_sessions",
    "read_transcript",
    "refuse_overwriting",
    "replace_lone_surrogates",
    "strip_line_numbers",
    "write_atomically",
    "write_transcript",
]
