"""Which lines of a tool result report an error.

``error_lines`` finds the first line of a result that names an error, and
how many do: in a failed result any line with an error word, in one that did
not fail only a line shaped like a report (``error: ...``, ``ValueError:
...``, ``FAILED tests/...``, ``5 tests, 2 failures``), so that a git log
subject or a docstring that says "error" is not taken for a failure.
"""

from __future__ import annotations

import functools
import re

__all__ = ["error_detail", "error_lines"]

_ERROR_LINE = re.compile(
    r"\b(error|errors|exception|traceback|failed|failure|fatal|panic|cannot|denied)\b", re.IGNORECASE
)
_ERROR_WORDS = ("error", "exception", "traceback", "fail", "fatal", "panic", "cannot", "denied", "e  ", "** (")
"""Every match of the error patterns below holds one of these, lowercased, on its line."""
_REPORTED_ERROR = re.compile(
    r"^\s*(?:error|fatal|panic|traceback|exception|failed|fail\b|E {2,}|\*\* \()"
    r"|(?:error|exception|fatal)(?:\[\w+\])?:|\b[1-9]\d* (?:failed|failures?|errors?)\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A line of a result that did not fail but reports an error: ``error: ...``, ``ValueError: ...``,
``FAILED tests/...``, ``5 tests, 2 failures``."""
_LINE_WORD = r"\s*(?:error|fatal|panic|traceback|exception|failed|fail\b|e {2,}|\*\* \()"
_FIRST_LINE_WORD = re.compile(_LINE_WORD)
_LATER_LINE_WORD = re.compile(r"\n" + _LINE_WORD)
_ERROR_COLONS = tuple(re.compile(word + r"(?:\[\w+\])?:") for word in ("error", "exception", "fatal"))
_COUNTED = re.compile(r" (?:failed|failures?|errors?)\b")


def _may_report_error(low: str) -> bool:
    r"""Whether a lowercased result (lines joined by ``\n``) may hold a line ``_REPORTED_ERROR`` finds.

    ``_REPORTED_ERROR``'s branches in lower case, each written to start with
    a literal so that the scan jumps between its occurrences (the case-insensitive
    whole pattern, or a branch starting with ``^`` or ``\d``, tries every
    character: several times slower over a long result): a word after only
    blanks from a line start, ``error:`` (or ``exception``, ``fatal``, each
    maybe with ``[code]``), and a digit before `` failed``/`` errors``. The
    last is looser than its branch (any digit), which only costs a search of
    the lines with ``_REPORTED_ERROR`` itself, the one that decides.
    """
    if _FIRST_LINE_WORD.match(low) or _LATER_LINE_WORD.search(low):
        return True
    if any(colon.search(low) for colon in _ERROR_COLONS):
        return True
    for word in (" fail", " error"):
        at = low.find(word)
        while at != -1:
            if at and low[at - 1].isdecimal() and _COUNTED.match(low, at):
                return True
            at = low.find(word, at + 1)
    return False


@functools.lru_cache(maxsize=1024)
def error_lines(text: str, failed: bool) -> tuple[str | None, int]:
    """The first line of a tool result (as ``str.splitlines`` cuts it) that names an error, and how many do.

    A line of a ``failed`` result names one when ``_ERROR_LINE`` finds it,
    else only when it is shaped like one (``_REPORTED_ERROR``). That is what
    a search of each line with the pattern answers, found faster: most
    results are let go by the cheap tests on the whole lowercased text (an
    error word, then ``_may_report_error``), and of the rest only lines
    holding an error word, found with ``str.find``, are searched (running the
    case-insensitive pattern over every line of a long log costs several
    times more). The lines are joined with plain newlines first, so that a
    position's line is found by looking for ``\\n`` alone.
    """
    pattern = _ERROR_LINE if failed else _REPORTED_ERROR
    joined = "\n".join(text.splitlines())
    low = joined.lower()
    if not any(word in low for word in _ERROR_WORDS):
        return None, 0
    if not (_ERROR_LINE.search(joined) if failed else _may_report_error(low)):
        return None, 0
    if len(low) != len(joined):  # a character lowercased to two: positions no longer line up
        lines = [line for line in joined.split("\n") if pattern.search(line)]
        return (lines[0] if lines else None), len(lines)
    starts: set[int] = set()
    for word in _ERROR_WORDS:
        at = low.find(word)
        while at != -1:
            starts.add(low.rfind("\n", 0, at) + 1)
            end = low.find("\n", at)
            at = -1 if end == -1 else low.find(word, end)
    first: str | None = None
    count = 0
    for start in sorted(starts):
        stop = joined.find("\n", start)
        line = joined[start:] if stop == -1 else joined[start:stop]
        if pattern.search(line):
            count += 1
            first = line if first is None else first
    return first, count


_DETAIL = re.compile(
    r"\b(?:CONFLICT|FAIL|FAILED|ERROR|Error|error|panic|undefined|cannot|not found)\b"
    r"|^[\w./-]+\.\w+:\d+(?::\d+)?:\s"  # a compiler's or linter's diagnostic: path:line:col: message
)
_DETAIL_LINES = 6


def error_detail(text: str, first: str) -> list[str]:
    """Up to ``_DETAIL_LINES`` more lines of a failed output that name what failed, in order."""
    found: list[str] = []
    for line in text.splitlines()[:400]:
        line = line.strip()
        if line and line != first.strip() and _DETAIL.search(line) and " ".join(line.split())[:180] not in found:
            found.append(" ".join(line.split())[:180])
            if len(found) == _DETAIL_LINES:
                break
    return found
