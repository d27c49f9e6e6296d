"""Why a candidate attachment was left out: stable ids that start each ``SkippedEntry.reason``.

A reason reads ``<id>: <detail>``; tools group by the id, people read the detail.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["SkipReason", "reason"]

SkipReason = Literal[
    "plan_file",
    "memory_file",
    "read_in_tail",
    "beyond_max_files",
    "unavailable",
    "over_item_budget",
    "over_total_budget",
]


def reason(kind: SkipReason, detail: str) -> str:
    """The ``reason`` text of a skipped entry: its stable id, then a sentence."""
    return f"{kind}: {detail}"
