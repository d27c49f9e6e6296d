"""Streaming JSONL lines: one JSON object per line, bad lines reported and skipped.

Lines are read in binary with a bounded ``readline`` and decoded one at a
time, so memory stays bounded by the longest accepted line however large the
file is; a line longer than the limit is skipped in chunks, never held whole.

A line is parsed by pydantic-core's JSON parser (jiter, already loaded with
pydantic), about twice as fast as ``json`` on transcript lines; it checks the
UTF-8 itself. It refuses a few lines ``json`` takes (a lone surrogate escape,
nesting deeper than 200) and every line ``json`` refuses; any line it refuses
goes to ``json``, which reads the first kind and names the fault in the
others, so what is read and what is reported are ``json``'s.

Text is text wherever it comes from: a lone surrogate escape (``"\\ud800"``,
which no UTF-8 can hold) is replaced by U+FFFD with a warning that counts
them, so that everything after the reader can encode what it reads; the
transcript's own bytes, stored before a compaction, keep the escape as the
file held it. An integer too long for Python to read (more than 4,300
digits) and a file whose lines end in CR alone are named as such.
"""

from __future__ import annotations

import errno
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic_core import from_json

from compactor.claude_code.transcript._models import SHAPE_KINDS, ReadWarning, WarningKind
from compactor.claude_code.transcript.surrogates import replace_lone_surrogates
from compactor.core.errors import TranscriptError, TranscriptNotFound, TranscriptUnreadable

__all__ = ["MAX_LINE_BYTES", "Record", "Reporter", "iter_records", "make_reporter"]

MAX_LINE_BYTES = 32 * 1024 * 1024
"""Longest line accepted (32 MiB); a longer one is skipped with a warning."""

_SKIP_CHUNK = 1024 * 1024

MAX_INTEGER = 10**21
"""Largest integer a line may hold: JavaScript, which writes the transcripts, writes larger numbers with
an exponent, and one far larger (a usage of 4,000 digits) would overflow every float it meets later."""

_LONG_DIGITS = re.compile(rb"\d{22}")
"""A run of digits long enough to be an integer over ``MAX_INTEGER``: only then is the record searched."""

_READ_BUFFER = 1024 * 1024
"""Bytes read at a time: transcript lines run to hundreds of KB, and ``readline`` over the usual 8 KB
buffer joins such a line from many small reads (a third of the time of reading the lines of a 4 MB file)."""


class Record(NamedTuple):
    """One JSON object read from a transcript line (``line`` is 1-based)."""

    line: int
    data: dict[str, Any]


Reporter = Callable[[int | None, WarningKind, str], None]
"""Reports a problem at a line: collects it, passes it on, or raises (strict)."""


def make_reporter(
    file: str,
    *,
    strict: bool,
    warn: Callable[[ReadWarning], None] | None,
    sink: list[ReadWarning] | None = None,
) -> Reporter:
    """A ``Reporter`` for ``file``: strict raises, otherwise collect and call ``warn``.

    The shapes Claude Code writes itself (``SHAPE_KINDS``) are collected and
    passed on even under ``strict``: they are repaired, not bad data.

    Raises (from the returned function):
        TranscriptError: in strict mode, on the first problem.
    """

    def report(line: int | None, kind: WarningKind, message: str) -> None:
        warning = ReadWarning(file=file, line=line, kind=kind, message=message)
        if strict and kind not in SHAPE_KINDS:
            raise TranscriptError(str(warning))
        if sink is not None:
            sink.append(warning)
        if warn is not None:
            warn(warning)

    return report


def iter_records(
    path: str | Path,
    *,
    strict: bool = False,
    warn: Callable[[ReadWarning], None] | None = None,
    max_line_bytes: int = MAX_LINE_BYTES,
    on_read: Callable[[int], None] | None = None,
) -> Iterator[Record]:
    """Yield every JSON object in a JSONL file with its line number.

    ``on_read(n)`` hears of every ``n`` bytes read (for a progress bar).

    Blank lines are skipped silently. A malformed, truncated, non-UTF-8,
    too-long or non-object line is reported through ``warn`` (or raises under
    ``strict``) and skipped; the lines after it are still read.

    Raises:
        TranscriptNotFound: the file does not exist.
        TranscriptError: the file cannot be read, or (strict) a line is bad.
    """
    report = make_reporter(str(path), strict=strict, warn=warn)
    yield from _iter_records(Path(path), report, max_line_bytes, on_read)


def _iter_records(
    path: Path, report: Reporter, max_line_bytes: int, on_read: Callable[[int], None] | None = None
) -> Iterator[Record]:
    from ccr.files import open_regular

    try:
        # A FIFO or a device is refused, never read (it could block).
        handle = open_regular(path, buffering=_READ_BUFFER)
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise TranscriptNotFound(f"{path}: no such transcript") from exc
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            raise _unopenable(path, exc) from exc
        shown = f"{str(path)[:60]}... ({len(str(path)):,} characters)"
        raise TranscriptNotFound(f"{shown}: no such transcript: the name is too long for a file") from exc
    with handle:
        number = 0
        while True:
            try:
                chunk = handle.readline(max_line_bytes + 1)
            except OSError as exc:
                raise TranscriptUnreadable(f"{path}:{number + 1}: cannot read: {exc.strerror or exc}") from exc
            if not chunk:
                return
            if on_read is not None:
                on_read(len(chunk))
            number += 1
            complete = chunk.endswith(b"\n")
            if not complete and len(chunk) > max_line_bytes:
                size = len(chunk) + _skip_rest_of_line(handle)
                report(
                    number,
                    "line_too_long",
                    f"line of {size:,} bytes exceeds the {max_line_bytes:,}-byte limit; skipped",
                )
                continue
            record = _parse_line(chunk, number, complete, report)
            if record is not None:
                yield Record(number, record)


def _unopenable(path: Path, exc: OSError) -> TranscriptUnreadable:
    if isinstance(exc, IsADirectoryError):
        return TranscriptUnreadable(f"{path}: is a directory, not a transcript")
    return TranscriptUnreadable(f"{path}: cannot open: {exc.strerror or exc}")


def _skip_rest_of_line(handle: Any) -> int:
    skipped = 0
    while True:
        more = handle.readline(_SKIP_CHUNK)
        skipped += len(more)
        if not more or more.endswith(b"\n"):
            return skipped


def _parse_line(chunk: bytes, number: int, complete: bool, report: Reporter) -> dict[str, Any] | None:
    raw = chunk.rstrip(b"\r\n")
    if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        data = from_json(raw, cache_strings="keys")
    except ValueError:  # blank, bad, or only ``json`` reads it: ``json`` decides and names the fault
        return _parse_with_json(raw, number, complete, report)
    return _object(data, number, report, raw)


def _parse_with_json(raw: bytes, number: int, complete: bool, report: Reporter) -> dict[str, Any] | None:
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        report(number, "invalid_utf8", f"not valid UTF-8 at byte {exc.start}; skipped")
        return None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if b"\r" in raw.strip(b"\r"):
            lines = raw.count(b"\r") + 1
            report(
                number,
                "cr_line_endings",
                f"lines end in CR alone, not LF or CRLF: {lines:,} lines read as one; skipped",
            )
        elif complete:
            report(number, "malformed_json", f"malformed JSON at column {exc.colno} ({exc.msg}); skipped")
        else:
            report(number, "truncated_line", f"truncated last line ({exc.msg}); skipped")
        return None
    except RecursionError:
        report(number, "malformed_json", "JSON nested too deeply; skipped")
        return None
    except ValueError as exc:  # an integer of more digits than int() reads (sys.get_int_max_str_digits)
        del exc  # its text names a Python setting, not the file
        limit = sys.get_int_max_str_digits()
        report(number, "number_too_long", f"holds an integer of more than {limit:,} digits, too long to read; skipped")
        return None
    data, replaced = replace_lone_surrogates(data)
    if replaced:
        report(
            number,
            "lone_surrogate",
            f"{replaced:,} lone surrogate escape(s) (\\ud800-\\udfff alone, not text) read as U+FFFD; "
            "the stored copy of the line keeps them",
        )
    return _object(data, number, report, raw)


def _object(data: Any, number: int, report: Reporter, raw: bytes) -> dict[str, Any] | None:
    """``data`` when the line held a JSON object of numbers a transcript can hold, else reported and skipped."""
    if not isinstance(data, dict):
        report(number, "not_an_object", f"expected a JSON object, got {type(data).__name__}; skipped")
        return None
    if _LONG_DIGITS.search(raw) is not None and _has_huge_integer(data):
        report(
            number,
            "number_too_long",
            "holds an integer of more than 21 digits, which no transcript holds (JavaScript writes such a number "
            "with an exponent); skipped",
        )
        return None
    return data


def _has_huge_integer(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_INTEGER:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
