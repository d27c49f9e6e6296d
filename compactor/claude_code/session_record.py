"""The session record: what the pre-compact hook stored for a session, kept for the hooks after it.

A record lives at ``$COMPACTOR_HOME/sessions/<session_id>.json`` (0600, in
a 0700 folder that must not be a symlink), written whole or not at all; a
newer record keeps the heads of the session's earlier compactions.

A record never grows past what it can be read back with
(``SESSION_RECORD_MAX_BYTES``): the ledger copy it carries for the
session-start text has its long texts cut (a 9 MB message would be kept
three times: as a message, the goal and the request; the whole ledger is
stored in CCR, ``ledger_handle``), and only if that is not enough is it left
out. While a pre-compact hook runs, a marker beside the record
(``<session_id>.pending``) says that the record does not describe this
compaction yet; a hook that ran out of time leaves it, so the session-start
text never names an older compaction's stored copy as the one just made.
"""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ccr import default_store_path
from compactor.claude_code.quick_hooks import SESSION_ID, SESSION_ID_PATTERN
from compactor.core.errors import CompactorError, HookError, InputInvalid
from compactor.core.ledger import SessionLedger
from compactor.engine.segment import TranscriptSegment

__all__ = [
    "RECORD_SALVAGE_MAX_BYTES",
    "RECORD_TEXT_MAX_CHARS",
    "SESSION_RECORD_MAX_BYTES",
    "SessionRecord",
    "StoredResult",
    "announced_handle",
    "clear_pending",
    "forget_latest_head",
    "is_pending",
    "load_session_record",
    "pending_marker_path",
    "save_session_record",
    "session_record_path",
    "sessions_dir",
]

SESSION_RECORD_MAX_BYTES = 16 * 1024 * 1024
"""Largest session record read back (a record names a compaction's handles: a few KiB); none is written larger."""

RECORD_TEXT_MAX_CHARS = 10_000
"""Longest text of the ledger copy in a record that would not fit whole: the session-start text it is
kept for holds at most 10,000 characters in all."""

RECORD_SALVAGE_MAX_BYTES = 256 * 1024 * 1024
"""Largest record a pre-compact hook reads to carry its earlier heads on (older versions wrote records
over ``SESSION_RECORD_MAX_BYTES``)."""


class StoredResult(BaseModel):
    """One tool result stored on its own: what it was and where it is."""

    model_config = ConfigDict(extra="forbid")

    handle: str
    tool: str
    what: str
    """The tool with its file path, command or pattern, on one line."""
    bytes: int
    path: str | None = None
    """The file the call read, wrote or edited, when it named one."""


class SessionRecord(BaseModel):
    """What the pre-compact hook stored for a session, for the session-start hook to mention.

    ``head_handle`` is None when the latest pre-compact hook failed: the
    reminder then says nothing rather than point at an older conversation as
    if it were the one just compacted.
    """

    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(pattern=SESSION_ID_PATTERN)
    head_handle: str | None
    """What the pre-compact hook stored: everything the summarizer saw, under the handle the
    summarizer was told, the summary names and the session-start text announces. It never changes."""
    summarized_handle: str | None = None
    """The same as ``head_handle`` (records of older versions could differ: there it is what the summarizer saw)."""
    dropped_handle: str | None = None
    """Exactly what the compaction dropped (``head_handle`` without the messages Claude Code kept
    verbatim), once a later hook has read the boundary; None until then, or when it kept nothing."""
    kept_messages: int = 0
    """How many of the summarized messages Claude Code kept verbatim (in no head yet)."""
    earlier_heads: list[str] = Field(default_factory=list)
    """The ``head_handle`` of each earlier compaction of this session, oldest first: the handles
    that were announced, and that the earlier summaries name."""
    earlier_dropped: list[str] = Field(default_factory=list)
    """What each earlier compaction dropped exactly, oldest first (its ``dropped_handle``, else its
    head): with ``head_handle`` they hold each message of the session once."""
    compact_summary: str | None = None
    """Claude Code's own summary of this compaction, from the PostCompact hook; None while unknown
    (before that hook has run, or with a client that has no PostCompact: the transcript shows the
    summary once the client has written the boundary, after its hooks)."""
    transcript_path: str | None = None
    trigger: str | None = None
    messages: int = 0
    bytes: int = 0
    results: list[StoredResult] = Field(default_factory=list)
    """Every tool result stored on its own, largest first."""
    stored_at: float = 0.0
    segments: list[TranscriptSegment] = Field(default_factory=list)
    """The transcript's own lines stored before each compaction, oldest first (``compactor restore``)."""
    store: str | None = None
    """The store file the pre-compact hook wrote to (None: the default one, as records of older versions)."""
    ledger: SessionLedger | None = None
    """The session's ledger as of the latest pre-compact hook: every fact of the whole transcript
    (``compactor.core.ledger``), for the session-start text; None for records of older versions."""
    ledger_handle: str | None = None
    """The ledger's full listing, stored with the conversation."""


def sessions_dir(home: Path | None = None) -> Path:
    """``$COMPACTOR_HOME/sessions`` (``home`` replaces ``$COMPACTOR_HOME``)."""
    return (default_store_path().parent if home is None else home) / "sessions"


def session_record_path(session_id: str, home: Path | None = None) -> Path:
    """Where a session's record lives.

    Raises:
        InputInvalid: the session id could escape the sessions folder.
    """
    if not SESSION_ID.fullmatch(session_id):
        raise InputInvalid(f"unusable session id {session_id!r}")
    return sessions_dir(home) / f"{session_id}.json"


def pending_marker_path(session_id: str, home: Path | None = None) -> Path:
    """The marker a pre-compact hook leaves while it runs (``hook.py`` writes it with the standard library).

    Raises:
        InputInvalid: the session id could escape the sessions folder.
    """
    return session_record_path(session_id, home).with_suffix(".pending")


def load_session_record(
    session_id: str, home: Path | None = None, *, max_bytes: int = SESSION_RECORD_MAX_BYTES
) -> SessionRecord | None:
    """The session's record, or None when the session never stored anything.

    ``max_bytes`` bounds the read (a larger record is damaged: ``HookError``).

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record exists but cannot be read or is damaged.
    """
    from ccr.files import read_regular

    path = session_record_path(session_id, home)
    _refuse_symlinked_folder(path.parent)
    try:
        data = read_regular(path, max_bytes=max_bytes)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HookError(f"cannot read session record {path}: {exc.strerror or exc}") from exc
    try:
        return SessionRecord.model_validate_json(data)
    except ValidationError as exc:
        raise HookError(f"session record {path} is damaged: {exc.error_count()} problem(s)") from exc


def save_session_record(record: SessionRecord, home: Path | None = None) -> Path:
    """Write ``record``, keeping the heads of the session's earlier compactions; returns the path.

    The folder is created 0700 and the file 0600 (it names files and
    commands of the session), written whole or not at all, and never larger
    than ``SESSION_RECORD_MAX_BYTES`` (see the module docstring).

    Raises:
        HookError: the file system refused, or the record cannot fit even without its ledger copy.
    """
    path = session_record_path(record.session_id, home)
    try:
        previous = load_session_record(record.session_id, home, max_bytes=RECORD_SALVAGE_MAX_BYTES)
    except HookError:
        previous = None  # a damaged record is replaced, not merged
    earlier = list(previous.earlier_heads) if previous else []
    earlier_dropped = list(previous.earlier_dropped or previous.earlier_heads) if previous else []
    announced = announced_handle(previous) if previous else None
    if previous and previous.head_handle and announced and announced != announced_handle(record):
        earlier.append(announced)
        earlier_dropped.append(previous.dropped_handle or previous.head_handle)
    ours = {record.head_handle, record.dropped_handle}
    record = record.model_copy(
        update={
            "earlier_heads": [h for h in earlier if h not in ours],
            "earlier_dropped": [h for h in earlier_dropped if h not in ours],
        }
    )
    from ccr.files import describe_os_error, private_dir, write_output

    data = _fitting(record)
    try:
        private_dir(path.parent)
        _refuse_symlinked_folder(path.parent)
        write_output(path, [data], what="session record")
    except OSError as exc:
        raise HookError(f"cannot write session record {path}: {describe_os_error(exc)}") from exc
    except CompactorError as exc:  # the output rule refused the name (a folder or a device is there)
        raise HookError(f"cannot write session record {path}: {exc}") from exc
    return path


def clear_pending(session_id: str, home: Path | None = None) -> None:
    """Remove the session's pending marker: its record describes the latest compaction again.

    Raises:
        InputInvalid: the session id is unusable.
    """
    with contextlib.suppress(OSError):
        pending_marker_path(session_id, home).unlink(missing_ok=True)


def is_pending(session_id: str, home: Path | None = None) -> bool:
    """Whether a pre-compact hook of the session started and neither finished nor said it failed.

    Raises:
        InputInvalid: the session id is unusable.
    """
    return pending_marker_path(session_id, home).exists()


def _fitting(record: SessionRecord) -> bytes:
    """``record`` as it is written: whole when it fits the read limit, else with its ledger copy cut, else without.

    Raises:
        HookError: it does not fit even without the ledger copy.
    """
    data = record.model_dump_json(indent=2).encode("utf-8")
    if len(data) <= SESSION_RECORD_MAX_BYTES:
        return data
    if record.ledger is not None:
        cut = SessionLedger.model_validate(_cut_texts(record.ledger.model_dump(), RECORD_TEXT_MAX_CHARS))
        data = record.model_copy(update={"ledger": cut}).model_dump_json(indent=2).encode("utf-8")
        if len(data) <= SESSION_RECORD_MAX_BYTES:
            return data
        data = record.model_copy(update={"ledger": None}).model_dump_json(indent=2).encode("utf-8")
        if len(data) <= SESSION_RECORD_MAX_BYTES:
            return data
    raise HookError(
        f"the session record of {record.session_id} would hold {len(data):,} bytes, over the "
        f"{SESSION_RECORD_MAX_BYTES:,} it can be read back with; not written"
    )


def _cut_texts(value: Any, limit: int) -> Any:
    """``value`` (plain JSON-like data) with every string longer than ``limit`` characters cut to ``limit``."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "\u2026"
    if isinstance(value, list):
        return [_cut_texts(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: _cut_texts(item, limit) for key, item in value.items()}
    return value


def announced_handle(record: SessionRecord) -> str | None:
    """The head the summarizer saw (a record of an older version kept it in ``summarized_handle``)."""
    return record.summarized_handle or record.head_handle


def _refuse_symlinked_folder(folder: Path) -> None:
    """The sessions folder must be a real folder: through a link the records would land elsewhere.

    Raises:
        HookError: ``folder`` is a symlink.
    """
    if folder.is_symlink():
        raise HookError(
            f"refusing the symlinked sessions folder {folder}: session records are kept only in a real folder"
        )


def forget_latest_head(session_id: str, home: Path | None = None) -> None:
    """After a failed pre-compact hook: keep the earlier heads, but name no latest one.

    Raises:
        InputInvalid: the session id is unusable.
        HookError: the record cannot be read or written.
    """
    previous = load_session_record(session_id, home, max_bytes=RECORD_SALVAGE_MAX_BYTES)
    if previous is None or previous.head_handle is None:
        clear_pending(session_id, home)
        return
    save_session_record(
        previous.model_copy(
            update={
                "head_handle": None,
                "summarized_handle": None,
                "dropped_handle": None,
                "kept_messages": 0,
                "results": [],
                "compact_summary": None,
                "stored_at": time.time(),
            }
        ),
        home,
    )
    clear_pending(session_id, home)
