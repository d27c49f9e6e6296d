"""The compactor package's errors, under the project's root (``ccr.root_errors``, re-exported here).

::

    CompactorError                  root of the whole project (ccr, skills, attachments too)
    ├── UsageError                  the caller asked for something invalid (bad config, bad flag)
    │   ├── ConfigError             a setting or environment variable has a bad value
    │   └── InvalidRequest          a malformed request (shared: ccr and memory raise this class too)
    └── CompactorRuntimeError       valid request, failed while running
        ├── TranscriptError         a transcript could not be read (bad data under strict mode)
        │   ├── NotATranscript      the file holds no transcript record (empty, a report, random bytes)
        │   ├── TranscriptUnreadable  the file cannot be opened or read (also an InputError)
        │   └── TranscriptNotFound  the transcript file does not exist (also an InputNotFound)
        │       └── SessionNotFound  the file holds no session with the id asked for
        ├── OutputWriteError        an output file could not be written (exit 73)
        │   └── TranscriptWriteError  a transcript could not be written
        ├── InputError              an input cannot be read (exit 65)
        │   └── InputNotFound       an input file does not exist (exit 66)
        ├── InputInvalid            an input is not what it must be, e.g. not UTF-8 (exit 65)
        ├── StoreError              a store could not be opened, read or written (shared, exit 73)
        ├── DanglingReference       a dedup reference names a result known nowhere
        ├── MaskingHandleMismatch   the store answered handles that do not match the bytes masked
        ├── HookError               a hook could not keep its session record (exit 73)
        │   └── HookTimedOut        a hook ran past its time limit (it still exits 0)
        ├── SummarizerError         a summarizer failed (LLM error, malformed answer)
        └── CompactionFailed        compaction failed closed; messages stay unchanged
            ├── NothingToCompact    there is no conversation to compact
            ├── CompactionDidNotShrink  the compacted context is no smaller than the original
            └── CompactionDisabled  compaction is turned off in the settings

The root, ``UsageError``, ``ConfigError``, ``InvalidRequest``,
``CompactorRuntimeError``, ``OutputWriteError``, ``InputError``,
``InputNotFound``, ``InputInvalid`` and the ``StoreError`` family are defined in
``ccr.root_errors`` (the lowest package, so that every package's errors
derive from them) and re-exported here. Other packages hang their own trees
under ``CompactorError`` (``ccr.errors.CCRError``, ...). Each error carries
a stable ``error_id`` that the command line prints to stderr, and an
``exit_code`` it exits with.
"""

from __future__ import annotations

from ccr.root_errors import (
    CompactorError,
    CompactorRuntimeError,
    ConfigError,
    InputError,
    InputInvalid,
    InputNotFound,
    InvalidRequest,
    NotAStore,
    OutputWriteError,
    StoreError,
    UnsafeStorePath,
    UsageError,
)

__all__ = [
    "CompactionDidNotShrink",
    "CompactionDisabled",
    "CompactionFailed",
    "CompactorError",
    "CompactorRuntimeError",
    "ConfigError",
    "DanglingReference",
    "HookError",
    "HookTimedOut",
    "InputError",
    "InputInvalid",
    "InputNotFound",
    "InvalidRequest",
    "MaskingHandleMismatch",
    "NotAStore",
    "NotATranscript",
    "NothingToCompact",
    "OutputWriteError",
    "SessionNotFound",
    "StoreError",
    "SummarizerError",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptUnreadable",
    "TranscriptWriteError",
    "UnsafeStorePath",
    "UsageError",
]


class TranscriptError(CompactorRuntimeError):
    """A transcript could not be read: bad data under --strict, or a file that is none (see the subclasses)."""

    error_id = "transcript_invalid"
    exit_code = 65


class TranscriptNotFound(TranscriptError, InputNotFound):
    """The transcript file (or its folder) does not exist: a missing input, as for every command."""

    error_id = InputNotFound.error_id
    exit_code = InputNotFound.exit_code


class TranscriptUnreadable(TranscriptError, InputError):
    """The transcript cannot be opened or read (no permission, a folder, a device): an unreadable input."""

    error_id = InputError.error_id
    exit_code = InputError.exit_code


class NotATranscript(TranscriptError):
    """The file holds no record of a Claude Code transcript (empty, a report, random bytes)."""

    error_id = "not_a_transcript"


class SessionNotFound(TranscriptNotFound):
    """The transcript file holds no session with the id asked for."""

    error_id = "session_not_found"


class TranscriptWriteError(OutputWriteError):
    """A transcript could not be written (the file system refused)."""

    error_id = "transcript_write_failed"


class SummarizerError(CompactorRuntimeError):
    """A summarizer could not produce a summary."""

    error_id = "summarizer_failed"


class CompactionFailed(CompactorRuntimeError):
    """Compaction failed closed: the caller's messages are unchanged."""

    error_id = "compaction_failed"


class DanglingReference(CompactorRuntimeError):
    """A dedup reference names a result whose content is known nowhere (neither kept nor stored)."""

    error_id = "dedup_dangling_reference"


class NothingToCompact(CompactionFailed):
    """There is no conversation to compact."""

    error_id = "nothing_to_compact"


class CompactionDidNotShrink(CompactionFailed):
    """The compacted context would be no smaller than the conversation it replaces."""

    error_id = "compaction_did_not_shrink"


class CompactionDisabled(CompactionFailed):
    """Compaction is turned off (``policy.compact`` false, ``COMPACTOR_DISABLE_COMPACT``)."""

    error_id = "compaction_disabled"


class HookError(CompactorRuntimeError):
    """A hook could not keep its session record (the file system refused, or the file is damaged)."""

    error_id = "hook_failed"
    exit_code = 73


class HookTimedOut(HookError):
    """A hook ran past its time limit and gave up (it exits 0, so that Claude Code goes on)."""

    error_id = "hook_timed_out"


class MaskingHandleMismatch(CompactorRuntimeError):
    """The store answered handles that do not match the bytes a masking step stored: nothing was masked."""

    error_id = "masking_handle_mismatch"
    exit_code = 73
