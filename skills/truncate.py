"""Head-keeping truncation: ``ccr.truncate``'s, shared by skills, file attachments and the recovery tool.

Re-exported under its old path for code written against it; the project
imports ``ccr.truncate``.
"""

from __future__ import annotations

from ccr.truncate import LineCounts, fit_head, truncate_head

__all__ = ["LineCounts", "fit_head", "truncate_head"]
