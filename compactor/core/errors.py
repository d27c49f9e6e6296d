"""The compactor package's errors, and the root of every error in the project.

::

    CompactorError                  root of the whole project (ccr, attachments, skills too)
    ├── UsageError                  the caller asked for something invalid (bad config, bad flag)
    │   └── ConfigError             a setting or environment variable has a bad value
    └── CompactorRuntimeError       valid request, failed while running
        ├── TranscriptError         a transcript could not be read (bad data under strict mode)
        │   └── TranscriptNotFound  the transcript file does not exist
        │       └── SessionNotFound  the file holds no session with the id asked for
        ├── OutputWriteError        an output file could not be written (exit 73)
        │   └── TranscriptWriteError  a transcript could not be written
        ├── InputNotFound           an input file does not exist (exit 66)
        ├── InputInvalid            an input is not what it must be, e.g. not UTF-8 (exit 65)
        ├── DanglingReference       a dedup reference names a result known nowhere
        ├── HookError               a hook could not keep its session record (exit 73)
        ├── SummarizerError         a summarizer failed (LLM error, malformed answer)
        └── CompactionFailed        compaction failed closed; messages stay unchanged
            ├── NothingToCompact    there is no conversation to compact
            ├── CompactionDidNotShrink  the compacted context is no smaller than the original
            └── CompactionDisabled  compaction is turned off in the settings

Other packages hang their own trees under ``CompactorError``
(``ccr.errors.CCRError``, ...). Each error carries a stable ``error_id`` that
the command line prints to stderr, and an ``exit_code`` it exits with.
"""

from __future__ import annotations

__all__ = [
    "CompactionDidNotShrink",
    "CompactionDisabled",
    "CompactionFailed",
    "CompactorError",
    "CompactorRuntimeError",
    "ConfigError",
    "DanglingReference",
    "HookError",
    "InputInvalid",
    "InputNotFound",
    "NothingToCompact",
    "OutputWriteError",
    "SessionNotFound",
    "SummarizerError",
    "TranscriptError",
    "TranscriptNotFound",
    "TranscriptWriteError",
    "UsageError",
]


class CompactorError(Exception):
    """Root of every error raised by the project."""

    error_id = "compactor_error"
    exit_code = 1


class UsageError(CompactorError):
    """The caller asked for something invalid."""

    error_id = "usage_error"
    exit_code = 2


class ConfigError(UsageError):
    """A setting, file or environment variable holds a bad value."""

    error_id = "config_invalid"


class CompactorRuntimeError(CompactorError):
    """A valid request failed while running."""

    error_id = "runtime_error"


class TranscriptError(CompactorRuntimeError):
    """A transcript could not be read: missing, unreadable, or bad data under --strict."""

    error_id = "transcript_invalid"
    exit_code = 65


class TranscriptNotFound(TranscriptError):
    """The transcript file (or its folder) does not exist."""

    error_id = "transcript_not_found"
    exit_code = 66


class SessionNotFound(TranscriptNotFound):
    """The transcript file holds no session with the id asked for."""

    error_id = "session_not_found"


class OutputWriteError(CompactorRuntimeError):
    """An output file (a page, a transcript) could not be written: the file system refused."""

    error_id = "output_write_failed"
    exit_code = 73


class TranscriptWriteError(OutputWriteError):
    """A transcript could not be written (the file system refused)."""

    error_id = "transcript_write_failed"


class SummarizerError(CompactorRuntimeError):
    """A summarizer could not produce a summary."""

    error_id = "summarizer_failed"


class CompactionFailed(CompactorRuntimeError):
    """Compaction failed closed: the caller's messages are unchanged."""

    error_id = "compaction_failed"


class InputNotFound(CompactorRuntimeError):
    """An input file does not exist or cannot be opened."""

    error_id = "input_not_found"
    exit_code = 66


class InputInvalid(CompactorRuntimeError):
    """An input is not what it must be (for example, not UTF-8 text)."""

    error_id = "input_invalid"
    exit_code = 65


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
