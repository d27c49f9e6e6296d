"""``compactor restore SESSION_ID|TRANSCRIPT [--before N] --output FILE``: undo compactions.

Writes the session as it stood before compaction N (default: the last one),
byte for byte, from the transcript lines stored in CCR before each
compaction (``compactor.claude_code.restore``). TRANSCRIPT is a file written by
``compactor replay --output`` (its boundaries name the stored lines) or a
Claude Code transcript whose compactions the plugin's PreCompact hook saw; a
SESSION_ID is looked up in the hook's records under ``$COMPACTOR_HOME/sessions``.
``--list`` prints a table of the compactions that can be undone instead
(``--json``: the rows as JSON), or, when there is none, why and what would
make undo possible.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

from ccr.cli_kit import write_stdout
from compactor.core.errors import InputInvalid, InputNotFound, UsageError
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
        InputInvalid: the session id is unusable, or ``source`` is a folder.
        TranscriptError: the transcript cannot be read.
    """
    from compactor.claude_code.restore import segment_from_metadata
    from compactor.claude_code.session_record import load_session_record
    from compactor.claude_code.transcript import iter_records

    path = Path(source).expanduser()
    if path.is_file():
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
    if path.is_dir():
        raise InputInvalid(f"{source}: is a folder, not a transcript")
    if "/" in source or source.endswith(".jsonl"):
        raise InputNotFound(f"{source}: no such transcript")
    recorded = load_session_record(source)
    if recorded is None:
        raise InputNotFound(f"{source}: no such transcript, and no session the hooks recorded under that id")
    transcript = Path(recorded.transcript_path) if recorded.transcript_path else None
    return list(recorded.segments), transcript


def run(args: argparse.Namespace) -> int:
    """Restore (or list); returns the exit code."""
    if not args.list and args.output is None:
        raise UsageError("--output FILE is required (or --list to see what can be undone)")
    segments, transcript = find_segments(args.source)
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
            write_stdout(render_list(args.source, segments, transcript) + "\n")
        return 0
    if args.json:
        raise UsageError("--json goes with --list (a restore writes the session to --output)")
    from ccr import open_store
    from compactor.claude_code.restore import restored_bytes
    from compactor.claude_code.transcript import refuse_overwriting, write_atomically

    refuse_overwriting(transcript, args.output, protected=[args.store])
    store = open_store(args.store, readonly=True)
    try:
        data = restored_bytes(segments, store, before=args.before)
    finally:
        store.close()
    write_atomically(args.output, [data], inputs=[transcript] if transcript is not None else [])
    lines = data.count(b"\n")
    print(
        f"compactor: restored the session before compaction {args.before or len(segments)}: "
        f"{lines:,} lines, {len(data):,} bytes -> {args.output}",
        file=sys.stderr,
    )
    return 0


def render_list(source: str, segments: list[TranscriptSegment], transcript: Path | None) -> str:
    """The ``--list`` table: one row per compaction that can be undone, then how to undo one; when
    there is none, why, and what would have made undo possible."""
    if not segments:
        return _why_nothing(source, transcript)
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
        "run with the plugin (claude --plugin-dir plugin), whose PreCompact hook stores them; for a replay, "
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
