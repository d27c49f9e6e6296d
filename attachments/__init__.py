"""attachments: what a compaction restores (files, plan, skills, task status, deltas) under budgets.

Public names are imported on first use (``_EXPORTS``), so that
``compactor.core.config`` can import ``attachments.budgets`` without loading the
builders, their templates (jinja2) and the staleness watcher (watchfiles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compactor.core.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from attachments.attachment import Attachment, AttachmentSet
    from attachments.budgets import DEFAULT_BUDGETS, Budgets
    from attachments.builder import build_attachments
    from attachments.coverage import reread_coverage
    from attachments.deltas import Announced, announced_in, full_deltas, mark_announced, pending_deltas
    from attachments.errors import AttachmentsError, TailNotStored, WatchError
    from attachments.exclusions import (
        MEMORY_FILE_NAMES,
        is_memory_file,
        is_plan_file,
        normalize_path,
        read_paths,
    )
    from attachments.files import build_file_attachments, content_changed, current_content
    from attachments.invoked_skills import build_skill_attachment
    from attachments.plan import plan_file_attachment, plan_mode_attachment
    from attachments.reasons import SkipReason, reason
    from attachments.selection import (
        DEFAULT_ACTIVITY_FILE_TOKENS,
        DEFAULT_ACTIVITY_FILES,
        DEFAULT_STRATEGY,
        STRATEGIES,
        FileActivity,
        FileSelection,
        StrategyName,
        file_activity,
        newest_first,
        rank_files,
    )
    from attachments.sources import DiskFiles, FileOrigin, FileSource, RecordedFiles, slice_lines
    from attachments.staleness import StalenessWatcher, mark_stale
    from attachments.tasks import needs_status, task_status_attachments

__all__ = [
    "Announced",
    "Attachment",
    "AttachmentSet",
    "AttachmentsError",
    "Budgets",
    "DEFAULT_ACTIVITY_FILES",
    "DEFAULT_ACTIVITY_FILE_TOKENS",
    "DEFAULT_BUDGETS",
    "DEFAULT_STRATEGY",
    "DiskFiles",
    "FileActivity",
    "FileOrigin",
    "FileSelection",
    "FileSource",
    "MEMORY_FILE_NAMES",
    "RecordedFiles",
    "STRATEGIES",
    "SkipReason",
    "StalenessWatcher",
    "StrategyName",
    "TailNotStored",
    "WatchError",
    "announced_in",
    "build_attachments",
    "build_file_attachments",
    "build_skill_attachment",
    "content_changed",
    "current_content",
    "file_activity",
    "full_deltas",
    "is_memory_file",
    "is_plan_file",
    "mark_announced",
    "mark_stale",
    "needs_status",
    "newest_first",
    "normalize_path",
    "pending_deltas",
    "plan_file_attachment",
    "plan_mode_attachment",
    "rank_files",
    "read_paths",
    "reason",
    "reread_coverage",
    "slice_lines",
    "task_status_attachments",
]

_EXPORTS: dict[str, str] = {
    "Announced": "attachments.deltas",
    "Attachment": "attachments.attachment",
    "AttachmentSet": "attachments.attachment",
    "AttachmentsError": "attachments.errors",
    "Budgets": "attachments.budgets",
    "DEFAULT_ACTIVITY_FILES": "attachments.selection",
    "DEFAULT_ACTIVITY_FILE_TOKENS": "attachments.selection",
    "DEFAULT_BUDGETS": "attachments.budgets",
    "DEFAULT_STRATEGY": "attachments.selection",
    "DiskFiles": "attachments.sources",
    "FileActivity": "attachments.selection",
    "FileOrigin": "attachments.sources",
    "FileSelection": "attachments.selection",
    "FileSource": "attachments.sources",
    "MEMORY_FILE_NAMES": "attachments.exclusions",
    "RecordedFiles": "attachments.sources",
    "STRATEGIES": "attachments.selection",
    "SkipReason": "attachments.reasons",
    "StalenessWatcher": "attachments.staleness",
    "StrategyName": "attachments.selection",
    "TailNotStored": "attachments.errors",
    "WatchError": "attachments.errors",
    "announced_in": "attachments.deltas",
    "build_attachments": "attachments.builder",
    "build_file_attachments": "attachments.files",
    "build_skill_attachment": "attachments.invoked_skills",
    "content_changed": "attachments.files",
    "current_content": "attachments.files",
    "file_activity": "attachments.selection",
    "full_deltas": "attachments.deltas",
    "is_memory_file": "attachments.exclusions",
    "is_plan_file": "attachments.exclusions",
    "mark_announced": "attachments.deltas",
    "mark_stale": "attachments.staleness",
    "needs_status": "attachments.tasks",
    "newest_first": "attachments.selection",
    "normalize_path": "attachments.exclusions",
    "pending_deltas": "attachments.deltas",
    "plan_file_attachment": "attachments.plan",
    "plan_mode_attachment": "attachments.plan",
    "rank_files": "attachments.selection",
    "read_paths": "attachments.exclusions",
    "reason": "attachments.reasons",
    "reread_coverage": "attachments.coverage",
    "slice_lines": "attachments.sources",
    "task_status_attachments": "attachments.tasks",
}
"""Public name -> module defining it (add a line here with each new export)."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
