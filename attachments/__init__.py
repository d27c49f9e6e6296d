"""attachments: what a compaction restores (files, plan, skills, task status, deltas) under budgets.

Public names are imported on first use (``_EXPORTS``), so that
``compactor.core.config`` can import ``attachments.budgets`` without loading the
builders, their templates (jinja2) and the staleness watcher (watchfiles).

The messages (``attachments.messages``), the session values attachments
restore (``attachments.state``) and the report entries
(``attachments.entries``) live here, the lowest package that builds them;
``compactor`` re-exports them under its own module names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from attachments.attachment import Attachment, AttachmentSet
    from attachments.bounds import (
        MAX_SETTING_NUMBER,
        within_bound,
    )
    from attachments.budgets import DEFAULT_BUDGETS, Budgets
    from attachments.builder import build_attachments
    from attachments.coverage import reread_coverage
    from attachments.deltas import Announced, announced_in, full_deltas, mark_announced, pending_deltas
    from attachments.entries import (
        AttachmentEntry,
        AttachmentType,
        SkippedEntry,
    )
    from attachments.errors import AttachmentsError, TailNotStored, WatchError
    from attachments.exclusions import (
        MEMORY_FILE_NAMES,
        is_memory_file,
        is_partial_read,
        is_plan_file,
        normalize_path,
        read_paths,
    )
    from attachments.files import build_file_attachments, content_changed, current_content
    from attachments.invoked_skills import build_skill_attachment
    from attachments.messages import (
        ContentBlock,
        DocumentBlock,
        ImageBlock,
        Message,
        RedactedThinkingBlock,
        TextBlock,
        ThinkingBlock,
        ToolResultBlock,
        ToolResultContent,
        ToolUseBlock,
        UnknownBlock,
        Usage,
    )
    from attachments.plan import PlanAge, plan_age, plan_file_attachment, plan_mode_attachment
    from attachments.readable import (
        readable_text,
    )
    from attachments.reasons import SkipReason, reason
    from attachments.render import (
        reminder_message,
        render_body,
        render_reminder,
        wrap,
    )
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
    from attachments.state import (
        AttachmentState,
        BackgroundTask,
        Plan,
        ReadFileEntry,
        TaskStatus,
    )
    from attachments.tasks import needs_status, task_status_attachments
    from attachments.worksites import LineRange, WorkSite, locate, work_sites

__all__ = [
    "Announced",
    "Attachment",
    "AttachmentEntry",
    "AttachmentSet",
    "AttachmentState",
    "AttachmentType",
    "AttachmentsError",
    "BackgroundTask",
    "Budgets",
    "ContentBlock",
    "DEFAULT_ACTIVITY_FILES",
    "DEFAULT_ACTIVITY_FILE_TOKENS",
    "DEFAULT_BUDGETS",
    "DEFAULT_STRATEGY",
    "DiskFiles",
    "DocumentBlock",
    "FileActivity",
    "FileOrigin",
    "FileSelection",
    "FileSource",
    "ImageBlock",
    "LineRange",
    "MAX_SETTING_NUMBER",
    "MEMORY_FILE_NAMES",
    "Message",
    "Plan",
    "PlanAge",
    "ReadFileEntry",
    "RecordedFiles",
    "RedactedThinkingBlock",
    "STRATEGIES",
    "SkipReason",
    "SkippedEntry",
    "StalenessWatcher",
    "StrategyName",
    "TailNotStored",
    "TaskStatus",
    "TextBlock",
    "ThinkingBlock",
    "ToolResultBlock",
    "ToolResultContent",
    "ToolUseBlock",
    "UnknownBlock",
    "Usage",
    "WatchError",
    "WorkSite",
    "announced_in",
    "build_attachments",
    "build_file_attachments",
    "build_skill_attachment",
    "content_changed",
    "current_content",
    "file_activity",
    "full_deltas",
    "is_memory_file",
    "is_partial_read",
    "is_plan_file",
    "locate",
    "mark_announced",
    "mark_stale",
    "needs_status",
    "newest_first",
    "normalize_path",
    "pending_deltas",
    "plan_age",
    "plan_file_attachment",
    "plan_mode_attachment",
    "rank_files",
    "read_paths",
    "readable_text",
    "reason",
    "reminder_message",
    "render_body",
    "render_reminder",
    "reread_coverage",
    "slice_lines",
    "task_status_attachments",
    "within_bound",
    "work_sites",
    "wrap",
]

_EXPORTS: dict[str, str] = {
    "PlanAge": "attachments.plan",
    "plan_age": "attachments.plan",
    "LineRange": "attachments.worksites",
    "WorkSite": "attachments.worksites",
    "locate": "attachments.worksites",
    "work_sites": "attachments.worksites",
    "Announced": "attachments.deltas",
    "Attachment": "attachments.attachment",
    "AttachmentEntry": "attachments.entries",
    "AttachmentSet": "attachments.attachment",
    "AttachmentState": "attachments.state",
    "AttachmentType": "attachments.entries",
    "AttachmentsError": "attachments.errors",
    "BackgroundTask": "attachments.state",
    "Budgets": "attachments.budgets",
    "ContentBlock": "attachments.messages",
    "DEFAULT_ACTIVITY_FILES": "attachments.selection",
    "DEFAULT_ACTIVITY_FILE_TOKENS": "attachments.selection",
    "DEFAULT_BUDGETS": "attachments.budgets",
    "DEFAULT_STRATEGY": "attachments.selection",
    "DiskFiles": "attachments.sources",
    "DocumentBlock": "attachments.messages",
    "FileActivity": "attachments.selection",
    "FileOrigin": "attachments.sources",
    "FileSelection": "attachments.selection",
    "FileSource": "attachments.sources",
    "ImageBlock": "attachments.messages",
    "MAX_SETTING_NUMBER": "attachments.bounds",
    "MEMORY_FILE_NAMES": "attachments.exclusions",
    "Message": "attachments.messages",
    "Plan": "attachments.state",
    "ReadFileEntry": "attachments.state",
    "RecordedFiles": "attachments.sources",
    "RedactedThinkingBlock": "attachments.messages",
    "STRATEGIES": "attachments.selection",
    "SkipReason": "attachments.reasons",
    "SkippedEntry": "attachments.entries",
    "StalenessWatcher": "attachments.staleness",
    "StrategyName": "attachments.selection",
    "TailNotStored": "attachments.errors",
    "TaskStatus": "attachments.state",
    "TextBlock": "attachments.messages",
    "ThinkingBlock": "attachments.messages",
    "ToolResultBlock": "attachments.messages",
    "ToolResultContent": "attachments.messages",
    "ToolUseBlock": "attachments.messages",
    "UnknownBlock": "attachments.messages",
    "Usage": "attachments.messages",
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
    "is_partial_read": "attachments.exclusions",
    "read_paths": "attachments.exclusions",
    "readable_text": "attachments.readable",
    "reason": "attachments.reasons",
    "reminder_message": "attachments.render",
    "render_body": "attachments.render",
    "render_reminder": "attachments.render",
    "reread_coverage": "attachments.coverage",
    "slice_lines": "attachments.sources",
    "task_status_attachments": "attachments.tasks",
    "within_bound": "attachments.bounds",
    "wrap": "attachments.render",
}
"""Public name -> module defining it (add a line here with each new export)."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
