"""A small reader for the YAML front matter at the top of a ``SKILL.md``.

Skill front matter is a flat mapping of short strings (``name``,
``description`` and a few optional keys). This reader covers what skill files
use: ``key: value`` lines, single- or double-quoted values, ``|`` and ``>``
block scalars, plain values continued on indented lines, and ``- item``
lists (kept as one comma-joined string). It avoids a YAML dependency for two
fields.
"""

from __future__ import annotations

import re

__all__ = ["FrontMatterError", "split_front_matter"]

_FENCE = "---"
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")


class FrontMatterError(ValueError):
    """The front matter block is opened but malformed."""


def split_front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter fields and the body after it.

    A text that does not start with a ``---`` line has no front matter: the
    fields are empty and the body is the whole text.

    Raises:
        FrontMatterError: the block is never closed, or a line is not ``key: value``.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != _FENCE:
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].strip() == _FENCE:
            break
    else:
        raise FrontMatterError("front matter opened with '---' is never closed")
    fields = _parse_fields([line.rstrip("\r\n") for line in lines[1:end]])
    return fields, "".join(lines[end + 1 :])


def _parse_fields(lines: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        match = _KEY.match(line)
        if match is None or line[0].isspace():
            raise FrontMatterError(f"line {i + 2}: expected 'key: value', got {line.strip()!r}")
        key, raw = match.group(1), match.group(2).strip()
        i += 1
        continued: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0].isspace()):
            continued.append(lines[i])
            i += 1
        while continued and not continued[-1].strip():
            continued.pop()
        fields[key] = _value(raw, continued)
    return fields


def _value(raw: str, continued: list[str]) -> str:
    if raw[:1] in ("|", ">"):
        block = _dedent(continued)
        if raw[0] == "|":
            return "\n".join(block)
        return _fold(block)
    items = [line.strip() for line in continued]
    if not raw and items and all(item.startswith("- ") or item == "-" for item in items if item):
        return ", ".join(_unquote(item[1:].strip()) for item in items if item)
    if raw.startswith("[") and raw.endswith("]"):
        return ", ".join(_unquote(part.strip()) for part in raw[1:-1].split(",") if part.strip())
    text = " ".join(part for part in [raw, *items] if part)
    return _unquote(_strip_comment(text))


def _strip_comment(text: str) -> str:
    """``text`` without a trailing `` # comment``; a quoted value keeps what is inside its quotes."""
    if text[:1] in ("'", '"'):
        end = _closing_quote(text)
        if end > 0 and text[end + 1 :].strip().startswith("#"):
            return text[: end + 1]
        return text
    cut = text.find(" #")
    return text if cut < 0 else text[:cut].rstrip()


def _closing_quote(text: str) -> int:
    """Where the quote opening ``text`` closes (``''`` and ``\\"`` are escapes), or -1."""
    quote, i = text[0], 1
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            if quote == "'" and text[i + 1 : i + 2] == "'":
                i += 2
                continue
            return i
        i += 1
    return -1


_ESCAPE = re.compile(r"\\(.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "\\": "\\", "/": "/", " ": " "}


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == '"':
        # One pass, so that an escaped backslash is never read again as the start of another escape.
        return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), text[1:-1])
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return text


def _dedent(lines: list[str]) -> list[str]:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return [line[cut:] if line.strip() else "" for line in lines]


def _fold(lines: list[str]) -> str:
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines:
        if line:
            current.append(line)
        else:
            paragraphs.append(" ".join(current))
            current = []
    paragraphs.append(" ".join(current))
    return "\n".join(paragraphs).strip("\n")
