"""``compactor restore SESSION_ID|TRANSCRIPT [--before N] --output FILE``: undo compactions.

Writes the session as it stood before compaction N (default: the last one),
byte for byte, from the transcript lines stored in CCR before each
compaction (``compactor.claude_code.restore``). TRANSCRIPT is a file written by
``compactor replay --output`` (its boundaries name the stored lines) or a
Claude Code transcript whose compactions the plugin's PreCompact hook saw; a
SESSION_ID is looked up in the hook's records under ``$COMPACTOR_HOME/sessions``.
``--list`` prints a table of the compactions that can be undone instead
(``--json``: the rows as JSON), or, when there is none, why and what would
make undo possible. A compaction can be undone only while the store holds
the stored lines of it and of every compaction before it (``ccr rm`` removes
them); the others are named, not listed. The output is never the
transcript the stored lines came from.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import stat
import sys
import textwrap
from pathlib import Path

from ccr.cli_kit import write_stdout
from compactor.core.errors import InputError, InputNotFound, OutputWriteError, UsageError
from compactor.engine.report import TranscriptSegment

__all__ = ["find_segments", "register", "render_list", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``restore`` subcommand."""
    parser = subparsers.add_parser(
        "restore",
        help="undo compactions: write the session as it stood before compaction N",
        description="Write a Claude Code session as it stood before compaction N (default: the last), "
        "byte for byte, from the transcript lines stored before each compaction. SESSION_ID|TRANSCRIPT "
        "is a transcript (written by 'compactor replay --output', or a Claude Code session the plugin "
        "hooks saw) or a session id the hooks recorded.",
    )
    parser.add_argument("source", metavar="SESSION_ID|TRANSCRIPT", help="a transcript file or a session id")
    parser.add_argument(
        "--before", type=int, metavar="N", help="undo compaction N and everything after it (1 is the first)"
    )
    parser.add_argument("--output", type=Path, metavar="FILE", help="where to write the restored session (JSONL)")
    parser.add_argument("--list", action="store_true", help="list the compactions that can be undone (a table)")
    parser.add_argument("--json", action="store_true", help="with --list: print the list as JSON")
    parser.add_argument("--store", type=Path, metavar="PATH", help="CCR store file (default: $COMPACTOR_HOME/ccr.db)")
    parser.set_defaults(func=run)


def find_segments(source: str) -> tuple[list[TranscriptSegment], Path | None]:
    """The stored segments of ``source`` (a transcript path or a session id) and the transcript's path.

    Raises:
        InputNotFound: neither a readable transcript nor a session the hooks recorded.
        InputInvalid: the session id is unusable.
        InputError: ``source`` is a folder, a device or another file that is not a regular one.
        TranscriptError: the transcript cannot be read.
    """
    from compactor.claude_code.restore import segment_from_metadata
    from compactor.claude_code.session_record import load_session_record
    from compactor.claude_code.transcript import iter_records

    path = Path(source).expanduser()
    mode = _mode(path, source)
    if mode is not None and stat.S_ISREG(mode):
        segments: list[TranscriptSegment] = []
        session_id: str | None = None
        for line in iter_records(path):
            data = line.data
            if session_id is None and isinstance(data.get("sessionId"), str):
                session_id = data["sessionId"]
            if data.get("type") == "system" and data.get("subtype") == "compact_boundary":
                segment = segment_from_metadata(data.get("compactMetadata"))
                if segment is not None:
                    segments.append(segment)
        if segments or session_id is None:
            return segments, path
        stored = load_session_record(session_id)
        return (list(stored.segments) if stored else []), path
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError(f"{source}: is a folder, not a transcript")
    if mode is not None:
        raise InputError(f"{source}: is not a regular file (a device, a FIFO or a socket), not a transcript")
    if "/" in source or source.endswith(".jsonl"):
        raise InputNotFound(f"{source}: no such transcript")
    recorded = load_session_record(source)
    if recorded is None:
        raise InputNotFound(f"{source}: no such transcript, and no session the hooks recorded under that id")
    transcript = Path(recorded.transcript_path) if recorded.transcript_path else None
    return list(recorded.segments), transcript


def _mode(path: Path, source: str) -> int | None:
    """``path``'s file type and mode, or None when nothing is there.

    Raises:
        InputNotFound: the name is longer than the file system takes (nothing can be there).
        InputError: the file system refused to look (no permission on a folder on the way).
    """
    try:
        return os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputNotFound(f"{_short(source)}: no such transcript: the name is too long for a file") from exc
        raise InputError(f"{_short(source)}: cannot look at it: {exc.strerror or exc}") from exc


def _short(name: str, limit: int = 80) -> str:
    """``name`` for a one-line message: its start and end when it is long."""
    return name if len(name) <= limit else f"{name[: limit // 2]}...{name[-limit // 4 :]} ({len(name):,} characters)"


def _store_path(store_path: Path | None) -> Path:
    from ccr import default_store_path

    return store_path if store_path is not None else default_store_path()


def _held(segments: list[TranscriptSegment], store_path: Path | None) -> list[bool]:
    """Whether the store holds each segment (read-only; a store that is not there holds none).

    Raises:
        ccr.StoreError: the store cannot be read.
    """
    from ccr import open_store

    path = _store_path(store_path)
    if not segments or not path.exists():
        return [False] * len(segments)
    with open_store(path, readonly=True) as store:
        return [store.contains(s.handle) for s in segments]


def _not_held(number: int, store_path: Path | None) -> str:
    """Why compaction ``number`` cannot be undone: the store does not hold its stored lines."""
    path = _store_path(store_path)
    where = f"the store {path}" if path.exists() else f"the store {path}, which does not exist,"
    return (
        f"{where} does not hold the stored lines of compaction {number} (removed with 'ccr rm' or 'ccr gc', "
        "or stored in another store: --store names it)"
    )


def _undoable(held: list[bool]) -> int:
    """How many compactions can be undone: compaction N needs the stored lines of 1..N."""
    count = 0
    while count < len(held) and held[count]:
        count += 1
    return count


def _refuse_the_original(output: Path, segments: list[TranscriptSegment]) -> None:
    """Refuse ``output`` when it is the transcript the stored lines came from (or a copy of it).

    Its first lines are then the first segment, byte for byte: restoring onto
    it would replace the session with an earlier state of itself.

    Raises:
        OutputRefused: ``output`` begins with the first stored segment.
    """
    from ccr import handle_for
    from ccr.errors import OutputRefused

    if not segments:
        return
    first = segments[0]
    try:
        if not output.is_file() or output.stat().st_size < first.bytes:
            return
        with output.open("rb") as handle:
            start = handle.read(first.bytes)
    except OSError:
        return  # the write itself says what is wrong with the path
    if handle_for(start) == first.handle:
        raise OutputRefused(
            f"{output}: is the transcript these compactions were stored from (its first lines are the stored "
            "ones); restoring onto it would overwrite the session: choose another path"
        )


def run(args: argparse.Namespace) -> int:
    """Restore (or list); returns the exit code."""
    if not args.list and args.output is None:
        raise UsageError("--output FILE is required (or --list to see what can be undone)")
    if args.json and not args.list:
        raise UsageError("--json goes with --list (a restore writes the session to --output)")
    recorded, transcript = find_segments(args.source)
    held = _held(recorded, args.store)
    segments = recorded[: _undoable(held)]
    if args.list:
        rows = [
            {
                "compaction": n,
                "first_line": s.first_line,
                "last_line": s.last_line,
                "bytes": s.bytes,
                "handle": s.handle,
            }
            for n, s in enumerate(segments, start=1)
        ]
        if args.json:
            write_stdout(json.dumps(rows, indent=2) + "\n")
        else:
            gone = _not_held(len(segments) + 1, args.store) if len(segments) < len(recorded) else None
            write_stdout(render_list(args.source, segments, transcript, gone=gone) + "\n")
        return 0
    from ccr import open_store
    from compactor.claude_code.restore import restored_bytes
    from compactor.claude_code.transcript import refuse_overwriting, write_atomically

    if args.before is not None and len(segments) < args.before <= len(recorded):
        raise InputNotFound(
            f"--before {args.before}: the stored lines of compaction {len(segments) + 1} are no longer in the "
            f"store (removed with 'ccr rm' or 'ccr gc'), so compactions {len(segments) + 1} to {len(recorded)} "
            f"cannot be undone" + (f"; 1 to {len(segments)} can" if segments else "")
        )
    if args.before is None and len(segments) < len(recorded):
        raise InputNotFound(
            f"the stored lines of compaction {len(segments) + 1} are no longer in the store (removed with "
            f"'ccr rm' or 'ccr gc'): "
            + (f"--before 1 to {len(segments)} can be undone" if segments else "nothing can be undone")
        )
    try:
        refuse_overwriting(transcript, args.output, protected=[args.store])
        _refuse_the_original(args.output, segments)
        store = open_store(args.store, readonly=True)
        try:
            data = restored_bytes(recorded, store, before=args.before)
        finally:
            store.close()
        write_atomically(args.output, [data], inputs=[transcript] if transcript is not None else [])
    except OSError as exc:  # the file system refused the name (too long, no such folder)
        from ccr.files import describe_os_error

        raise OutputWriteError(f"{_short(str(args.output))}: cannot write: {describe_os_error(exc)}") from exc
    lines = data.count(b"\n")
    print(
        f"compactor: restored the session before compaction {args.before or len(segments)}: "
        f"{lines:,} lines, {len(data):,} bytes -> {args.output}",
        file=sys.stderr,
    )
    return 0


def render_list(
    source: str, segments: list[TranscriptSegment], transcript: Path | None, *, gone: str | None = None
) -> str:
    """The ``--list`` table: one row per compaction that can be undone, then how to undo one; when
    there is none, why, and what would have made undo possible. ``gone`` says why the compactions
    after those cannot be undone (the store does not hold the stored lines of the next one)."""
    if gone is not None:
        gone = f"The later compactions cannot be undone: {gone}."
    if not segments:
        return f"nothing to undo: {source}: {gone}" if gone else _why_nothing(source, transcript)
    from ccr.progress import human_count

    rows = [("compaction", "lines", "size", "stored as")]
    rows += [
        (str(n), f"{s.first_line:,}-{s.last_line:,}", human_count(s.bytes, "bytes"), s.handle)
        for n, s in enumerate(segments, start=1)
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    table = [
        "  ".join(cell.rjust(w) if i < 3 else cell for i, (cell, w) in enumerate(zip(row, widths, strict=True)))
        for row in rows
    ]
    n = len(segments)
    return "\n".join(
        [
            (
                f"{n} compaction{'s' if n != 1 else ''} of {source} can be undone; each stored the lines "
                "the session had gained since the one before:"
            ),
            "",
            *table,
            "",
            *([gone] if gone else []),
            f"undo compaction N and everything after it: compactor restore {source} --before N --output FILE",
        ]
    )


def _why_nothing(source: str, transcript: Path | None) -> str:
    """Why nothing can be undone: no compaction at all, or compactions whose lines no one stored."""
    from compactor.claude_code.transcript import iter_records

    boundaries = 0
    if transcript is not None and transcript.is_file():
        boundaries = sum(
            1
            for line in iter_records(transcript)
            if line.data.get("type") == "system" and line.data.get("subtype") == "compact_boundary"
        )
    how = (
        "Undo is possible for the compactions whose lines were stored before they happened: in Claude Code, "
        'run with compactor\'s plugin installed (claude --plugin-dir "$(compactor plugin path)"), whose '
        "PreCompact hook stores them; for a replay, "
        "write the compacted session with 'compactor replay SESSION --output FILE' and list FILE."
    )
    if transcript is None or not transcript.is_file():
        why = f"nothing to undo: no compaction of {source} had its lines stored."
    elif boundaries == 0:
        why = f"nothing to undo: {source} holds no compaction."
    else:
        why = (
            f"nothing to undo: {source} holds {boundaries} compaction{'s' if boundaries != 1 else ''}, "
            "but none had its lines stored before it happened."
        )
    return why + "\n" + textwrap.fill(how, width=78, break_on_hyphens=False, break_long_words=False)
