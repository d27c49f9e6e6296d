"""attachments: what a compaction restores (files, plan, skills, task status, deltas) under budgets."""

from __future__ import annotations

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
from attachments.sources import DiskFiles, FileOrigin, FileSource, RecordedFiles, slice_lines
from attachments.staleness import StalenessWatcher, mark_stale
from attachments.tasks import needs_status, task_status_attachments

__all__ = [
    "Announced",
    "Attachment",
    "AttachmentSet",
    "AttachmentsError",
    "Budgets",
    "DEFAULT_BUDGETS",
    "DiskFiles",
    "FileOrigin",
    "FileSource",
    "MEMORY_FILE_NAMES",
    "RecordedFiles",
    "SkipReason",
    "StalenessWatcher",
    "TailNotStored",
    "WatchError",
    "announced_in",
    "build_attachments",
    "build_file_attachments",
    "build_skill_attachment",
    "content_changed",
    "current_content",
    "full_deltas",
    "is_memory_file",
    "is_plan_file",
    "mark_announced",
    "mark_stale",
    "needs_status",
    "normalize_path",
    "pending_deltas",
    "plan_file_attachment",
    "plan_mode_attachment",
    "read_paths",
    "reason",
    "reread_coverage",
    "slice_lines",
    "task_status_attachments",
]
