"""skills: discovery of ``SKILL.md`` skills, invocation tracking, truncation, hot reload."""

from __future__ import annotations

from skills.discovery import SKILL_FILE, default_roots, discover, parse_skill, read_skill_body
from skills.errors import SkillFileError, SkillNotFound, SkillsError
from skills.info import SkillInfo, SkillRoot, SkillSource
from skills.invocations import invoked_skills, record_invocation
from skills.registry import SkillRegistry
from skills.truncate import LineCounts, fit_head, truncate_head
from skills.watcher import SkillWatcher

__all__ = [
    "LineCounts",
    "SKILL_FILE",
    "SkillFileError",
    "SkillInfo",
    "SkillNotFound",
    "SkillRegistry",
    "SkillRoot",
    "SkillSource",
    "SkillWatcher",
    "SkillsError",
    "default_roots",
    "discover",
    "fit_head",
    "invoked_skills",
    "parse_skill",
    "read_skill_body",
    "record_invocation",
    "truncate_head",
]
