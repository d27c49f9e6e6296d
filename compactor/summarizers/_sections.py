"""The sections of a summary in Claude Code's layout (``N. <title>:`` headings), read back.

The session ledger reads a summary it did not write (Claude Code's, after a
compaction) through these: they need only ``re``, so reading one does not
import the extractive summarizer and its templates.
"""

from __future__ import annotations

import re

__all__ = ["section_body", "section_items", "section_lines"]

_HEADING = re.compile(r"^\s*\d+\.\s+(?P<title>[^\n:]+):\s*$", re.MULTILINE)


def section_body(summary: str, title: str) -> str:
    """The text under ``N. <title>:`` in a summary (any case), up to the next heading."""
    headings = list(_HEADING.finditer(summary))
    for index, heading in enumerate(headings):
        if heading.group("title").strip().lower() == title.lower():
            end = headings[index + 1].start() if index + 1 < len(headings) else len(summary)
            return summary[heading.end() : end]
    return ""


def section_lines(summary: str, title: str) -> list[str]:
    """The non-empty lines of a summary section, stripped."""
    return [line.strip() for line in section_body(summary, title).splitlines() if line.strip()]


def section_items(summary: str, title: str) -> list[str]:
    """The ``- item`` entries of a summary section, without their bullets; an item's
    continuation lines (a multi-line user message) stay with it."""
    items: list[str] = []
    for line in section_body(summary, title).strip("\n").splitlines():
        if line.startswith("- "):
            items.append(line[2:])
        elif items:
            items[-1] += "\n" + line
    return [item.rstrip() for item in items]
