"""A running session's context, folded from its transcript as it grows: what the status line and
``compactor watch`` show.

``LiveState`` is folded record by record from a Claude Code transcript and
kept per session under ``$COMPACTOR_HOME/statusline/`` (``load_live_state``,
``save_live_state``: a temporary file and a rename, so concurrent runs never
see half a file), so each run reads only the lines added since the last one
(``advance``). A transcript that shrank, or was replaced by another file,
is read again from its start.

The context estimate is Claude Code's own, as ``compactor replay`` makes it
until the first compaction: the last answer's ``usage`` total plus a rough
count (characters / 4, JSON file reads / 2, 2,000 per image or document)
of every newer message, with the records of one streamed answer taken as
one message (``compactor.claude_code.transcript``'s reader) and a record
appended twice counted once. The facts are the ledger's definitions
(``compactor.summarizers.facts``): touched and searched paths, the first
lines of shell commands, and the messages the user typed.

Standard library only (plus ``ccr.paths``): the status line runs after every
answer, and importing pydantic alone would cost three times starting Python.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import stat
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from ccr.paths import default_store_path
from compactor.claude_code.typed_records import refusal_reasons, typed_text
from compactor.core.client_text import take_queued

__all__ = [
    "LIVE_STATE_VERSION",
    "PACE_ANSWERS",
    "SESSION_ID",
    "LiveState",
    "advance",
    "live_state_path",
    "load_live_state",
    "rough_tokens",
    "save_live_state",
]

LIVE_STATE_VERSION = 2
"""Bumped when the fold changes: a state of another version is read again from the start."""

IMAGE_TOKENS = 2_000
PACE_ANSWERS = 10
"""The pace is the context's growth per answer over the last this many answers."""
TIMELINE_POINTS = 600
"""The timeline keeps at most this many points (halved, every other one, when full)."""

_READ_LINE = re.compile(r"\s*\d+(?:\u2192|\t)")
_JSON_FILES = (".json", ".jsonl", ".jsonc")
_PATH_KEYS = ("file_path", "notebook_path")
_SEARCH_TOOLS = frozenset({"Grep", "Glob", "LS"})
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
"""A key that names a state file as it is (``quick_hooks.SESSION_ID``'s pattern); any other is hashed."""
_FINGERPRINT_BYTES = 4096


class _Answer:
    """The streamed answer still open: later records with its message id merge into it."""

    __slots__ = ("after", "before", "dense", "images", "message_id", "plain", "usage")

    def __init__(
        self,
        message_id: str,
        plain: int = 0,
        dense: int = 0,
        images: int = 0,
        usage: int | None = None,
        before: int = 0,
        after: int = 0,
    ) -> None:
        self.message_id = message_id
        self.plain, self.dense, self.images = plain, dense, images
        self.usage = usage
        self.before = before
        """Counts of the messages between the previous usage anchor and this answer."""
        self.after = after
        """Counts of the messages after this answer (tool results between its records)."""

    @property
    def tokens(self) -> int:
        return _tokens(self.plain, self.dense, self.images)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


class LiveState:
    """Everything folded from a transcript so far; plain values, saved as JSON.

    A plain class rather than a dataclass: importing ``dataclasses`` (and the
    ``inspect`` it loads) cost about a fifth of starting Python, on every run.
    """

    def __init__(
        self,
        *,
        transcript: str = "",
        offset: int = 0,
        fingerprint: str = "",
        device: int = 0,
        inode: int = 0,
        lines: int = 0,
        version: int = LIVE_STATE_VERSION,
        client: str | None = None,
        model: str | None = None,
        session_id: str | None = None,
        usage: int | None = None,
        after: int = 0,
        total: int = 0,
        answer: _Answer | None = None,
        answers: int = 0,
        pace: list[int] | None = None,
        compactions: int = 0,
        last_pre_tokens: int | None = None,
        paths: dict[str, int] | None = None,
        commands: dict[str, int] | None = None,
        messages: dict[str, int] | None = None,
        reads: dict[str, int] | None = None,
        seen: list[str] | None = None,
        timeline: list[tuple[int, int]] | None = None,
        bad_lines: int = 0,
        queued: list[str] | None = None,
    ) -> None:
        self.transcript = transcript
        self.offset = offset
        """Bytes read so far (always at a line end)."""
        self.fingerprint = fingerprint
        """A checksum of the file's first bytes, to tell a replaced file from a grown one."""
        self.device, self.inode = device, inode
        self.lines = lines
        self.version = version
        self.client = client
        """The Claude Code version that wrote the latest record."""
        self.model = model
        self.session_id = session_id
        self.usage = usage
        """The usage total of the anchor: the last closed answer with usage."""
        self.after = after
        """Counts of the messages after the anchor (with no open answer)."""
        self.total = total
        """Counts of every message since the last compaction (for a context with no usage yet)."""
        self.answer = answer
        self.answers = answers
        """Answers (requests) since the start."""
        self.pace: list[int] = pace if pace is not None else []
        """The estimate after each of the last answers since the last compaction."""
        self.compactions = compactions
        self.last_pre_tokens = last_pre_tokens
        self.paths: dict[str, int] = paths if paths is not None else {}
        """Touched and searched paths, with the line that touched them last."""
        self.commands: dict[str, int] = commands if commands is not None else {}
        """First lines of shell commands, with how often they ran."""
        self.messages: dict[str, int] = messages if messages is not None else {}
        """What the user typed, with how often."""
        self.reads: dict[str, int] = reads if reads is not None else {}
        """Files read, with the line of the latest read."""
        self.seen: list[str] = seen if seen is not None else []
        """The uuids of the message records read (a record appended twice is skipped)."""
        self.timeline: list[tuple[int, int]] = timeline if timeline is not None else []
        """(line, context estimate) after each answer and at each compaction."""
        self.bad_lines = bad_lines
        self.queued: list[str] = queued if queued is not None else []
        """Messages the user queued while the agent worked, not yet taken by a request."""

    @property
    def tokens(self) -> int:
        """The context now, as Claude Code estimates it."""
        answer = self.answer
        if answer is not None:
            if answer.usage is not None:
                return answer.usage + answer.after
            if self.usage is not None:
                return self.usage + answer.before + answer.tokens + answer.after
            return self.total + answer.tokens
        return self.usage + self.after if self.usage is not None else self.total

    def to_json(self) -> dict[str, Any]:
        """The state as JSON values (shallow: a deep copy was most of a later run's save)."""
        data = dict(vars(self))
        data["answer"] = self.answer.to_json() if self.answer is not None else None
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LiveState:
        """A state saved by ``to_json``.

        Raises:
            ValueError: ``data`` is not one (another version, a missing or mistyped field).
        """
        if data.get("version") != LIVE_STATE_VERSION:
            raise ValueError("another version")
        values = dict(data)
        answer = values.get("answer")
        try:
            values["answer"] = _Answer(**answer) if isinstance(answer, dict) else None
            values["timeline"] = [(int(a), int(b)) for a, b in values.get("timeline", [])]
            state = cls(**values)
        except (TypeError, ValueError) as exc:
            raise ValueError(str(exc)) from exc
        if not isinstance(state.offset, int) or not isinstance(state.seen, list):
            raise ValueError("mistyped fields")
        return state


def _tokens(plain: int, dense: int, images: int) -> int:
    return math.ceil(plain / 4) + math.ceil(dense / 2) + images * IMAGE_TOKENS


def _utf16(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


def _is_json_read(text: str) -> bool:
    first = _READ_LINE.match(text)
    if first is None:
        return False
    return text[first.end() : first.end() + 1] in ("{", "[") and text.rstrip()[-1:] in ("}", "]")


def _sizes(content: Any) -> tuple[int, int, int]:
    """(plain characters, dense characters, images) of a message's content, as the rough counter sees it."""
    if isinstance(content, str):
        return (0, _utf16(content), 0) if _is_json_read(content) else (_utf16(content), 0, 0)
    plain = dense = images = 0
    stack = list(content) if isinstance(content, list) else []
    while stack:
        block = stack.pop(0)
        text: str | None = None
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = str(block.get("text", ""))
        elif kind == "thinking":
            text = str(block.get("thinking", ""))
        elif kind == "redacted_thinking":
            text = str(block.get("data", ""))
        elif kind == "tool_use":
            text = str(block.get("name", "")) + json.dumps(
                block.get("input", {}), ensure_ascii=False, separators=(",", ":")
            )
        elif kind == "tool_result":
            inner = block.get("content", "")
            if isinstance(inner, list):
                stack[0:0] = inner
                continue
            text = inner if isinstance(inner, str) else ""
        elif kind in ("image", "document"):
            images += 1
            continue
        else:
            text = json.dumps(block, ensure_ascii=False)
        if _is_json_read(text):
            dense += _utf16(text)
        else:
            plain += _utf16(text)
    return plain, dense, images


def rough_tokens(content: Any) -> int:
    """Claude Code's rough size of one message's content (``compactor.core.tokens.RoughCounter``)."""
    return _tokens(*_sizes(content))


# -- the fold ------------------------------------------------------------------------------


def _usage_total(message: Mapping[str, Any]) -> int | None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return None
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens")
    return sum(value for key in keys if isinstance(value := usage.get(key), int))


def _close(state: LiveState) -> None:
    answer = state.answer
    if answer is None:
        return
    if answer.usage is not None:
        state.usage, state.after = answer.usage, answer.after
    else:
        state.after = answer.before + answer.tokens + answer.after
    state.total += answer.tokens
    state.answer = None


def _add(state: LiveState, tokens: int) -> None:
    """A message that merges with nothing, after everything so far."""
    state.total += tokens
    if state.answer is not None:
        state.answer.after += tokens
    else:
        state.after += tokens


def _assistant(state: LiveState, message: Mapping[str, Any], line: int) -> None:
    plain, dense, images = _sizes(message.get("content", ""))
    usage = _usage_total(message)
    model = message.get("model")
    if usage == 0 or (isinstance(model, str) and model.startswith("<")):
        usage = None  # a synthetic answer (an API error, an interruption) was no request: no usage to anchor on
    message_id = message.get("id") if isinstance(message.get("id"), str) else None
    answer = state.answer
    if answer is not None and message_id is not None and answer.message_id == message_id:
        answer.plain += plain
        answer.dense += dense
        answer.images += images
        answer.usage = usage  # an answer's usage is its last record's
        if usage is not None:
            _sample(state, line, again=True)
    else:
        _close(state)
        state.answers += 1
        if message_id is None:
            tokens = _tokens(plain, dense, images)
            state.total += tokens
            if usage is not None:
                state.usage, state.after = usage, 0
            else:
                state.after += tokens
        else:
            state.answer = _Answer(message_id, plain, dense, images, usage, before=state.after)
        if usage is not None:
            _sample(state, line, again=False)
    if isinstance(model, str) and not model.startswith("<"):
        state.model = model
    content = message.get("content")
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            _tool_call(state, block, line)


def _sample(state: LiveState, line: int, *, again: bool) -> None:
    """The estimate once an answer's usage is known: the pace and the timeline (``again``: a later
    record of the same answer, which replaces its sample)."""
    tokens = state.tokens
    if again and state.pace:
        state.pace[-1] = tokens
    else:
        state.pace = [*state.pace[-PACE_ANSWERS:], tokens]
    if again and state.timeline:
        state.timeline[-1] = (line, tokens)
    else:
        _point(state, line)


def _tool_call(state: LiveState, block: Mapping[str, Any], line: int) -> None:
    name = block.get("name")
    tool_input = block.get("input")
    if not isinstance(tool_input, dict):
        return
    path = next(
        (v.strip() for k in _PATH_KEYS if isinstance(v := tool_input.get(k), str) and v.strip()),
        None,
    )
    if path is None and name in _SEARCH_TOOLS:
        value = tool_input.get("path")
        path = value.strip() if isinstance(value, str) and value.strip() else None
    if path is not None:
        state.paths.pop(path, None)
        state.paths[path] = line
        if name == "Read":
            state.reads.pop(path, None)
            state.reads[path] = line
    command = tool_input.get("command")
    if name == "Bash" and isinstance(command, str):
        first = next((part.strip() for part in command.splitlines() if part.strip()), None)
        if first:
            state.commands[first] = state.commands.get(first, 0) + 1


def _user(state: LiveState, record: Mapping[str, Any], message: Mapping[str, Any]) -> None:
    content = message.get("content", "")
    tokens = rough_tokens(content)
    results = isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    _add(state, tokens)
    if not results:
        _close(state)
    said = typed_text(record, message)
    if said is not None:
        state.messages[said] = state.messages.get(said, 0) + 1
    if results:
        for reason in refusal_reasons(content):
            state.messages[reason] = state.messages.get(reason, 0) + 1


def _queue(state: LiveState, record: Mapping[str, Any]) -> None:
    """A message the user queued: typed once a request takes it while the agent works (``remove``), as
    the transcript reader delivers it (``compactor.claude_code.transcript`` ``_deliver_queued``)."""
    for text in take_queued(state.queued, record.get("operation"), record.get("content")):
        state.messages[text] = state.messages.get(text, 0) + 1


def _boundary(state: LiveState, record: Mapping[str, Any], line: int) -> None:
    """A compaction: the context starts again from what Claude Code wrote after it."""
    meta = record.get("compactMetadata")
    pre = meta.get("preTokens") if isinstance(meta, dict) else None
    state.compactions += 1
    state.last_pre_tokens = pre if isinstance(pre, int) else state.tokens
    state.answer = None
    state.usage, state.after, state.total = None, 0, 0
    state.pace = []  # the timeline's next point, after the summary's answer, shows the drop


def _point(state: LiveState, line: int) -> None:
    state.timeline.append((line, state.tokens))
    if len(state.timeline) > TIMELINE_POINTS:
        state.timeline = state.timeline[::2]


def fold(state: LiveState, record: Mapping[str, Any], line: int) -> None:
    """Fold one transcript record (the JSON object on line ``line``) into ``state``."""
    kind = record.get("type")
    version = record.get("version")
    if isinstance(version, str):
        state.client = version
    session = record.get("sessionId")
    if isinstance(session, str):
        state.session_id = session
    if kind == "system" and record.get("subtype") == "compact_boundary":
        _boundary(state, record, line)
        return
    if kind == "queue-operation":
        _queue(state, record)
        return
    message = record.get("message")
    if kind not in ("user", "assistant") or not isinstance(message, dict) or record.get("isSidechain") is True:
        return
    if kind == "assistant":
        _assistant(state, message, line)
    else:
        _user(state, record, message)


# -- reading the file ----------------------------------------------------------------------


def _fingerprint(head: bytes) -> str:
    # zlib's checksums, not hashlib: loading OpenSSL cost more than the whole fold of a later run.
    return f"{len(head)}:{zlib.crc32(head):08x}{zlib.adler32(head):08x}"


def _open_regular(path: str) -> BinaryIO:
    """``path`` opened for reading without blocking on a FIFO or a device, which are refused.

    Raises:
        IsADirectoryError: a folder.
        OSError: not a regular file, or it cannot be opened.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "a folder", path)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def advance(state: LiveState | None, transcript: str | os.PathLike[str]) -> LiveState:
    """``state`` with the lines ``transcript`` gained since it was folded (a new state if it is None,
    of another file, or the file shrank or was replaced).

    Only whole lines are read: a last line still being written waits for the next call.

    Raises:
        OSError: the transcript cannot be opened or read.
    """
    path = os.fspath(transcript)
    with _open_regular(path) as handle:
        info = os.fstat(handle.fileno())
        head = handle.read(_FINGERPRINT_BYTES)
        same = (
            state is not None
            and state.transcript == path
            and (state.device, state.inode) == (info.st_dev, info.st_ino)
            and info.st_size >= state.offset
            and (state.offset == 0 or _fingerprint(head[: min(len(head), state.offset)]) == state.fingerprint)
        )
        if not same or state is None:
            state = LiveState(transcript=path, device=info.st_dev, inode=info.st_ino)
        handle.seek(state.offset)
        data = handle.read()
    seen = set(state.seen)
    start = 0
    end = data.rfind(b"\n") + 1
    for raw in data[:end].split(b"\n")[:-1] if end else []:
        state.lines += 1
        start += len(raw) + 1
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            state.bad_lines += 1
            continue
        if not isinstance(record, dict):
            state.bad_lines += 1
            continue
        uuid = record.get("uuid")
        if isinstance(uuid, str) and record.get("type") in ("user", "assistant"):
            if uuid in seen:
                continue  # a record appended twice: the reader keeps the first
            seen.add(uuid)
            state.seen.append(uuid)
        fold(state, record, state.lines)
    if state.offset == 0 or len(head) > state.offset:
        state.fingerprint = _fingerprint(head[: min(len(head), state.offset + start)])
    state.offset += start
    return state


# -- saving --------------------------------------------------------------------------------


def live_state_path(key: str, environ: Mapping[str, str] | None = None) -> Path:
    """``$COMPACTOR_HOME/statusline/<key>.json``; a key that is not a session id is hashed."""
    if SESSION_ID.fullmatch(key):
        name = key
    else:
        import hashlib  # only for a key that is no session id (Claude Code always sends one)

        name = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    return default_store_path(environ).parent / "statusline" / f"{name}.json"


def load_live_state(path: Path) -> LiveState | None:
    """The state saved at ``path``; None when there is none or it cannot be used (it is then rebuilt)."""
    try:
        with open(path, "rb") as handle:
            data = json.load(handle)
        return LiveState.from_json(data) if isinstance(data, dict) else None
    except (OSError, ValueError, RecursionError):
        return None


def save_live_state(state: LiveState, path: Path) -> None:
    """Save ``state`` at ``path`` whole or not at all (a temporary file, then a rename; 0600 in a 0700 folder).

    Raises:
        OSError: the folder or the file cannot be written.
    """
    folder = path.parent
    if not folder.is_dir():
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    # A name of this process's own (O_EXCL), not ``tempfile``, whose imports cost more than the write.
    temporary = folder / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(state.to_json(), handle, ensure_ascii=False, separators=(",", ":"))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
