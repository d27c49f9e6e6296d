"""The note the pre-compact hook prints for Claude Code's summarizer, built with format strings.

The hook runs before every compaction, where each import shows: this text
needs no template engine (jinja2 costs about as much to import as the rest
of the note's work).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pre_compact_note"]


def pre_compact_note(
    *, head: str, messages: int, size: int, results: Sequence[tuple[str, str, int]], unlisted: int, tool: str
) -> str:
    """The note: where the conversation is stored (``head``, a marker), the stored results listed
    (``(marker, what, bytes)``, largest first) and how many were left out, and how a summary
    should cite them. Ends with one newline."""
    lines = [
        f"compactor stored the conversation this compaction summarizes ({messages} messages, {size:,} bytes), "
        f"byte for byte, under the marker {head}. Nothing in it is lost: the tool `{tool}` brings back any part "
        "of it exactly, given a marker (and, to get less than the whole, a query or a line range). It is a "
        f'deferred tool: load it first by calling ToolSearch with the query "select:{tool}". From a shell, '
        "`ccr get` does the same.",
    ]
    if results:
        lines += ["", "Tool results stored on their own, largest first:"]
        lines += [f"- {marker}: {what} ({size_of:,} bytes)" for marker, what, size_of in results]
        if unlisted:
            lines.append(f"({unlisted} smaller stored result(s) not listed; they are all inside {head}.)")
    lines += [
        "",
        "For whoever writes the summary of this conversation:",
        f"- State near the top that the conversation before this point is stored as {head} and can be read "
        f"back with `{tool}`. Copy the marker exactly.",
    ]
    if results:
        lines.append(
            "- Wherever the summary mentions one of the tool results listed above (a file that was read, a "
            "command's output, a search), put its marker right next to that mention, exactly as written, so the "
            "exact text can be fetched later instead of running the tool again."
        )
    lines += [
        "- Copy markers only from this note; never make one up or change a character of one.",
        "- Prefer a marker to a long quote: a marker brings back the exact text when it is needed.",
    ]
    return "\n".join(lines).strip() + "\n"
