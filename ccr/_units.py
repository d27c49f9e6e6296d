"""Split an original into whole units for query retrieval.

A unit is a span of the original that makes sense on its own: a JSONL line
(a transcript message), an object in a JSON array of objects, a numbered line
of tool output (a Claude Code Read result: ``     1→text`` or ``     1\ttext``),
a CSV row, or a blank-line paragraph. Spans are byte offsets into the original, so a unit is
always returned verbatim. Fewer than two units means "no units": the caller
returns the whole original instead of a fragment.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Segmentation", "UnitKind", "segment"]

UnitKind = Literal["jsonl", "json_array", "numbered_lines", "csv", "paragraph"]

_BLANK_LINE = re.compile(rb"^[ \t\r\f\v]*$")
_LONE_CR = re.compile("\r(?!\n)")
_NUMBERED = re.compile(rb" *(\d+)(?:\xe2\x86\x92|\t)")
"""A line as Claude Code's Read tool numbers it: the line number, then an arrow or a tab."""


class Segmentation(BaseModel):
    """How an original divides into units: a kept header and the unit spans."""

    model_config = ConfigDict(frozen=True)

    kind: UnitKind
    header: tuple[int, int] | None = None
    units: tuple[tuple[int, int], ...]


def segment(data: bytes) -> Segmentation | None:
    """The units of ``data``, trying each kind in turn; None when there are fewer than two."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for splitter in (_json_array, _jsonl, _numbered_lines, _csv, _paragraphs):
        seg = splitter(data, text)
        if seg is not None and len(seg.units) >= 2:
            return seg
    return None


def _lines(data: bytes) -> list[tuple[int, int]]:
    """Byte spans of the physical lines, each including its newline."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        spans.append((start, end))
        start = end
    return spans


def _jsonl(data: bytes, text: str) -> Segmentation | None:
    units: list[tuple[int, int]] = []
    for start, end in _lines(data):
        line = data[start:end].strip()
        if not line:
            continue
        if not line.startswith(b"{"):
            return None
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):  # too deep to parse is "not JSONL" here
            return None
        if not isinstance(value, dict):
            return None
        units.append((start, end))
    return Segmentation(kind="jsonl", units=tuple(units))


def _numbered_lines(data: bytes, text: str) -> Segmentation | None:
    """One unit per numbered line, from the first numbered line on.

    What comes before it is the header; a line without a number (a wrapped
    line, or a note the tool appended after the file) stays with the
    numbered line before it, so every byte after the header is in a unit.
    The numbers must count up by one, or this is not a numbered listing.
    """
    units: list[tuple[int, int]] = []
    header: tuple[int, int] | None = None
    expected: int | None = None
    for start, end in _lines(data):
        found = _NUMBERED.match(data, start, end)
        if found is not None:
            number = int(found.group(1))
            if expected is not None and number != expected:
                return None
            expected = number + 1
            units.append((start, end))
        elif units:
            units[-1] = (units[-1][0], end)
        elif header is None:
            header = (start, end)
        else:
            header = (header[0], end)
    if len(units) < 2:
        return None
    return Segmentation(kind="numbered_lines", header=header, units=tuple(units))


def _json_array(data: bytes, text: str) -> Segmentation | None:
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return None
    decoder = json.JSONDecoder()
    pos = len(text) - len(stripped) + 1
    char_spans: list[tuple[int, int]] = []
    ws = re.compile(r"\s*")
    while True:
        pos = ws.match(text, pos).end()  # type: ignore[union-attr]
        if pos < len(text) and text[pos] == "]" and not char_spans:
            pos += 1
            break
        try:
            value, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            return None
        if not isinstance(value, dict):
            return None
        char_spans.append((pos, end))
        pos = ws.match(text, end).end()  # type: ignore[union-attr]
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "]":
            pos += 1
            break
        return None
    if text[pos:].strip():
        return None
    return Segmentation(kind="json_array", units=tuple(_to_bytes(text, char_spans)))


def _to_bytes(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Convert increasing character spans to byte spans in one pass."""
    out: list[tuple[int, int]] = []
    char_pos = 0
    byte_pos = 0
    for start, end in spans:
        byte_pos += len(text[char_pos:start].encode("utf-8"))
        byte_start = byte_pos
        byte_pos += len(text[start:end].encode("utf-8"))
        out.append((byte_start, byte_pos))
        char_pos = end
    return out


def _csv(data: bytes, text: str) -> Segmentation | None:
    first = text.split("\n", 1)[0]
    if "," not in first or _LONE_CR.search(text):
        return None
    lines = _lines(data)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    records: list[tuple[int, int]] = []
    width: int | None = None
    consumed = 0
    try:
        for row in reader:
            first_line, consumed = consumed, reader.line_num
            if not row:
                continue
            if width is None:
                width = len(row)
                if width < 2:
                    return None
            elif len(row) != width:
                return None
            records.append((lines[first_line][0], lines[consumed - 1][1]))
    except (csv.Error, IndexError):
        return None
    if len(records) < 2:
        return None
    return Segmentation(kind="csv", header=records[0], units=tuple(records[1:]))


def _paragraphs(data: bytes, text: str) -> Segmentation | None:
    units: list[tuple[int, int]] = []
    start: int | None = None
    last_end = 0
    for line_start, line_end in _lines(data):
        if _BLANK_LINE.match(data[line_start:line_end].rstrip(b"\n")):
            if start is not None:
                units.append((start, last_end))
                start = None
        else:
            if start is None:
                start = line_start
            last_end = line_end
    if start is not None:
        units.append((start, last_end))
    return Segmentation(kind="paragraph", units=tuple(units))
