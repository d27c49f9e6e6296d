"""Make a corpus of tagged replicas of the real transcripts, for tuning at corpus scale.

Usage: ``python benchmarks/make_corpus.py OUT [--sessions 200]``

Writes ``OUT/copy-NNN-<name>.jsonl``: the main-session transcripts under
``../shared/transcripts`` in turn, each copy made distinct so that nothing
one copy counts, deduplicates or parses is reused by another:

- every UUID in a line (session id, message uuids and parents, preserved
  message lists) is replaced by one derived from the copy number and the
  original, the same everywhere in the copy, so each copy is a session of
  its own with its chain intact;
- every text and thinking block and every tool result's text gets a line
  naming the copy, and so does the file content Claude Code recorded for a
  Read; every tool call's input gets the tag under ``COPY_KEY``. So each
  copy's message and text counts, dedup hashes and restored files are its
  own. What a worker may still reuse from another copy of the same original
  is what real sessions of one project share too: the count of a line of
  the same file (a restored file is counted line by line) and of the same
  skill's text (about an eighth of the texts counted, on the real sessions).

The copies keep the originals' shapes (compactions, reads, edits), so a
replay does the same kind of work on each. ``OUT`` must lie outside the
repository (a temporary or output folder): the copies hold the real
transcripts' text.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _common import REPO, shared_sessions  # noqa: E402  (needs the folder on sys.path)

__all__ = ["COPY_KEY", "DEFAULT_SESSIONS", "long_session", "make_corpus", "tag_record"]

DEFAULT_SESSIONS = 200

COPY_KEY = "corpus_copy"
"""The key a copy's tag is under in each tool call's input."""

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NAMESPACE = uuid.UUID("5f1c2a8e-3b7d-4c6a-9e0f-2d4b6a8c0e12")


def _tag_text(text: str, tag: str) -> str:
    return f"{text}\n{tag}"


def _tag_content(content: Any, tag: str) -> Any:
    """Message content with ``tag`` on every text and thinking block and tool result text, and in every tool
    call's input (under ``COPY_KEY``, which no tool reads)."""
    if isinstance(content, str):
        return _tag_text(content, tag)
    if not isinstance(content, list):
        return content
    tagged = []
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in ("text", "thinking") and isinstance(block.get(kind), str):
            block = {**block, kind: _tag_text(block[kind], tag)}
        elif kind == "tool_use" and isinstance(block.get("input"), dict):
            block = {**block, "input": {**block["input"], COPY_KEY: tag}}
        elif isinstance(block, dict) and block.get("type") == "tool_result":
            block = {**block, "content": _tag_content(block.get("content"), tag)}
        tagged.append(block)
    return tagged


def tag_record(record: dict[str, Any], tag: str) -> dict[str, Any]:
    """``record`` with ``tag`` added to its message's texts, to a recorded Read's file content and to a
    message the user queued (the reader delivers it to the model)."""
    if record.get("type") == "queue-operation" and isinstance(record.get("content"), str):
        return {**record, "content": _tag_text(record["content"], tag)}
    message = record.get("message")
    if isinstance(message, dict) and "content" in message:
        record = {**record, "message": {**message, "content": _tag_content(message["content"], tag)}}
    result = record.get("toolUseResult")
    if isinstance(result, dict) and isinstance(result.get("file"), dict):
        file = result["file"]
        if isinstance(file.get("content"), str):
            record = {
                **record,
                "toolUseResult": {**result, "file": {**file, "content": _tag_text(file["content"], tag)}},
            }
    return record


def _copy_line(line: str, number: int, tag: str) -> str:
    """One transcript line of copy ``number``: its UUIDs derived anew, its texts tagged."""
    if not line.strip():
        return line
    renamed = _UUID.sub(lambda m: str(uuid.uuid5(_NAMESPACE, f"{number}:{m.group(0)}")), line)
    try:
        record = json.loads(renamed)
    except ValueError:
        return renamed  # a damaged line stays damaged, as in the original
    if not isinstance(record, dict):
        return renamed
    return json.dumps(tag_record(record, tag), ensure_ascii=False) + "\n"


def make_corpus(out: Path, sessions: int = DEFAULT_SESSIONS, sources: list[Path] | None = None) -> list[Path]:
    """Write ``sessions`` tagged copies of ``sources`` (default: the real transcripts) into ``out``.

    Raises:
        ValueError: ``out`` is inside the repository.
        FileNotFoundError: there is no transcript to copy.
    """
    if out.resolve().is_relative_to(REPO):
        raise ValueError(f"{out} is inside the repository; write the corpus to a temporary or output folder")
    originals = sources if sources is not None else shared_sessions()
    if not originals:
        raise FileNotFoundError("no transcript to copy (../shared/transcripts is absent)")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for number in range(sessions):
        source = originals[number % len(originals)]
        name = source.parent.name if source.stem == "session" else source.stem
        target = out / f"copy-{number:03d}-{name}.jsonl"
        tag = f"[corpus copy {number}]"
        with (
            source.open(encoding="utf-8", errors="surrogateescape") as lines,
            target.open("w", encoding="utf-8", errors="surrogateescape") as copy,
        ):
            for line in lines:
                copy.write(_copy_line(line, number, tag))
        written.append(target)
    return written


def long_session(source: Path, target: Path, min_bytes: int) -> Path:
    """Write at ``target`` one session of at least ``min_bytes``: tagged copies of ``source`` end to end.

    Each copy is made distinct as in ``make_corpus`` (UUIDs derived anew,
    texts tagged), but keeps the source's session id, and its first root
    record takes the previous copy's last record as its parent: the file
    reads as one session whose main chain runs through every copy.

    Raises:
        ValueError: ``source`` is empty (no copy would ever grow the file).
    """
    lines = source.read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True)
    if not any(line.strip() for line in lines):
        raise ValueError(f"{source} holds no record to copy")
    first: Any = next((json.loads(line) for line in lines if line.strip().startswith("{")), {})
    session_id = first.get("sessionId") if isinstance(first, dict) else None
    written = 0
    last_uuid: str | None = None
    with target.open("w", encoding="utf-8", errors="surrogateescape") as out:
        number = 0
        while written < min_bytes:
            rooted = False
            for line in lines:
                copied = _copy_line(line, number, f"[long session copy {number}]")
                record = json.loads(copied) if copied.strip() else None
                if isinstance(record, dict):
                    if session_id is not None:
                        record["sessionId"] = session_id
                    if not rooted and isinstance(record.get("uuid"), str) and record.get("parentUuid") is None:
                        record["parentUuid"], rooted = last_uuid, True
                    if isinstance(record.get("uuid"), str) and record.get("isSidechain") is not True:
                        last_uuid = record["uuid"]
                    copied = json.dumps(record, ensure_ascii=False) + "\n"
                out.write(copied)
                written += len(copied.encode("utf-8", "surrogateescape"))
            number += 1
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write tagged replicas of the real transcripts (a tuning corpus).")
    parser.add_argument("out", type=Path, help="folder to write the copies into")
    parser.add_argument("--sessions", type=int, default=DEFAULT_SESSIONS, help=f"copies (default {DEFAULT_SESSIONS})")
    args = parser.parse_args(argv)
    try:
        written = make_corpus(args.out, args.sessions)
    except (ValueError, FileNotFoundError) as exc:
        print(f"make_corpus: {exc}", file=sys.stderr)
        return 2
    size = sum(p.stat().st_size for p in written) / 1e6
    print(f"wrote {len(written)} sessions ({size:.0f} MB) in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
