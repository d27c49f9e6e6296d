"""Undo: a session as it stood before compaction N, byte for byte.

Before a compaction on a transcript (a replay, or Claude Code's own with the
plugin's PreCompact hook), the transcript's own lines since the previous
compaction are stored in CCR exactly as the file holds them: a *segment*
(``report.TranscriptSegment``). Segments 1..N joined are the file as it stood
when compaction N happened, so ``compactor restore`` can write it back, and
``claude --resume`` opens it as the conversation before that compaction.
``segment_request`` names a segment and the record that stores it without
storing it, so that a replay stores it in the compaction's own transaction
(``compact(..., also_store=...)``); ``store_segment`` stores it at once.

Where the segments are listed: a replay's ``--output`` file names each in its
``compact_boundary`` record (``compactMetadata.compactorTranscript``); the
PreCompact hook lists them in the session's record under
``$COMPACTOR_HOME/sessions``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ccr import PutRequest, Store, handle_for
from compactor.core.errors import InputInvalid, InputNotFound, UsageError
from compactor.engine.segment import TranscriptSegment

__all__ = [
    "SEGMENT_KEY",
    "read_lines",
    "restored_bytes",
    "segment_from_metadata",
    "segment_request",
    "store_segment",
]

SEGMENT_KEY = "compactorTranscript"
"""The key in a ``compact_boundary``'s ``compactMetadata`` that names the segment stored before it."""


def read_lines(path: Path, first_line: int, last_line: int | None = None) -> tuple[bytes, int]:
    """The exact bytes of lines ``first_line``..``last_line`` (1-based, inclusive) and the last line read.

    ``last_line`` None reads through the last complete line (a line still
    being written, with no newline yet, is left for the next segment).

    Raises:
        InputNotFound: the file cannot be read.
    """
    from ccr.files import open_regular

    chunks: list[bytes] = []
    last = 0
    try:
        with open_regular(path) as handle:
            for number, line in enumerate(handle, start=1):
                past_the_end = number > last_line if last_line is not None else not line.endswith(b"\n")
                if past_the_end:
                    break
                last = number
                if number >= first_line:
                    chunks.append(line)
    except OSError as exc:
        raise InputNotFound(f"{path}: cannot read the transcript: {exc.strerror or exc}") from exc
    return b"".join(chunks), last


def segment_request(
    path: Path,
    *,
    first_line: int,
    last_line: int | None = None,
    producer: str,
    metadata: Mapping[str, Any] | None = None,
) -> tuple[PutRequest, TranscriptSegment] | None:
    """The record storing lines ``first_line``..``last_line`` of ``path`` byte-exact, and the segment naming it.

    Nothing is stored: the segment names the record's content handle, and
    must not be used before the record is stored. None if there are no lines.

    Raises:
        InputNotFound: the transcript cannot be read.
    """
    data, last = read_lines(path, first_line, last_line)
    if not data:
        return None
    request = PutRequest(
        data=data,
        content_type="application/x-ndjson",
        producer=producer,
        metadata={"kind": "transcript", "first_line": first_line, "last_line": last, **(metadata or {})},
    )
    segment = TranscriptSegment(handle=handle_for(data), first_line=first_line, last_line=last, bytes=len(data))
    return request, segment


def store_segment(
    path: Path,
    store: Store,
    *,
    first_line: int,
    last_line: int | None = None,
    producer: str,
    metadata: Mapping[str, Any] | None = None,
) -> TranscriptSegment | None:
    """Store lines ``first_line``..``last_line`` of the transcript at ``path`` byte-exact; None if there are none.

    Raises:
        InputNotFound: the transcript cannot be read.
        ccr.BudgetExceeded, ccr.StoreError: the store refused; nothing was stored.
    """
    named = segment_request(path, first_line=first_line, last_line=last_line, producer=producer, metadata=metadata)
    if named is None:
        return None
    request, segment = named
    handle = store.put_many([request])[0]
    return segment if handle == segment.handle else segment.model_copy(update={"handle": handle})


def segment_from_metadata(metadata: object) -> TranscriptSegment | None:
    """The segment a boundary's ``compactMetadata`` names, if it names a valid one."""
    if not isinstance(metadata, dict) or not isinstance(metadata.get(SEGMENT_KEY), dict):
        return None
    try:
        return TranscriptSegment.model_validate(metadata[SEGMENT_KEY])
    except ValueError:
        return None


def restored_bytes(segments: Sequence[TranscriptSegment], store: Store, *, before: int | None = None) -> bytes:
    """The transcript as it stood before compaction ``before`` (1-based; None: the last one).

    Raises:
        UsageError: there is no compaction ``before``.
        InputInvalid: the segments do not follow each other line by line.
        ccr.HandleNotFound: the store does not hold a segment.
        ccr.CorruptRecord: a stored segment no longer matches its handle.
    """
    if not segments:
        raise UsageError("no stored compaction to undo: nothing was recorded before any compaction")
    count = len(segments) if before is None else before
    if not 1 <= count <= len(segments):
        raise UsageError(f"--before {before}: compactions 1 to {len(segments)} can be undone")
    chosen = segments[:count]
    for previous, current in itertools.pairwise(chosen):
        if current.first_line != previous.last_line + 1:
            raise InputInvalid(
                f"stored segments do not join: lines {previous.first_line}-{previous.last_line} "
                f"then {current.first_line}-{current.last_line}"
            )
    if chosen[0].first_line != 1:
        raise InputInvalid(f"the first stored segment starts at line {chosen[0].first_line}, not 1")
    return b"".join(store.get(segment.handle) for segment in chosen)
