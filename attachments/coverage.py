"""Re-read coverage: how well a compaction's file attachments anticipated later reads."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["reread_coverage"]


def reread_coverage(restored: Iterable[str], read_before: Iterable[str], read_after: Iterable[str]) -> float | None:
    """Of the files read before a compaction and read again after it, the fraction restored.

    ``restored`` are the paths the file attachments carried. Returns ``None``
    when no file read before was read again (nothing to anticipate). Paths
    are compared as given; normalize them first if they may differ in form.
    """
    reread = set(read_before) & set(read_after)
    if not reread:
        return None
    return len(reread & set(restored)) / len(reread)
