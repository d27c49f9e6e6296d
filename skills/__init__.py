"""skills: discovery of ``SKILL.md`` skills, invocation tracking, truncation, hot reload.

Truncation (``truncate_head``, ``fit_head``, ``LineCounts``) is ``ccr.truncate``'s,
shared with file attachments and the recovery tool; it is re-exported here.
Public names are imported on first use (``_EXPORTS``), so that a package that
needs one value (``InvokedSkill``) does not load discovery and the watcher
(watchfiles).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ccr.truncate import LineCounts, fit_head, truncate_head
    from skills.discovery import SKILL_FILE, default_roots, discover, parse_skill, read_skill_body
    from skills.errors import SkillFileError, SkillNotFound, SkillsError
    from skills.info import SkillInfo, SkillRoot, SkillSource
    from skills.invocations import MAIN_AGENT, InvokedSkill, SkillState, invoked_skills, record_invocation
    from skills.registry import SkillRegistry
    from skills.watch_loop import WatchLoop
    from skills.watcher import SkillWatcher

__all__ = [
    "InvokedSkill",
    "LineCounts",
    "MAIN_AGENT",
    "SKILL_FILE",
    "SkillFileError",
    "SkillInfo",
    "SkillNotFound",
    "SkillRegistry",
    "SkillRoot",
    "SkillSource",
    "SkillState",
    "SkillWatcher",
    "SkillsError",
    "WatchLoop",
    "default_roots",
    "discover",
    "fit_head",
    "invoked_skills",
    "parse_skill",
    "read_skill_body",
    "record_invocation",
    "truncate_head",
]

_EXPORTS: dict[str, str] = {
    "InvokedSkill": "skills.invocations",
    "LineCounts": "ccr.truncate",
    "MAIN_AGENT": "skills.invocations",
    "SKILL_FILE": "skills.discovery",
    "SkillFileError": "skills.errors",
    "SkillInfo": "skills.info",
    "SkillNotFound": "skills.errors",
    "SkillRegistry": "skills.registry",
    "SkillRoot": "skills.info",
    "SkillSource": "skills.info",
    "SkillState": "skills.invocations",
    "SkillWatcher": "skills.watcher",
    "SkillsError": "skills.errors",
    "WatchLoop": "skills.watch_loop",
    "default_roots": "skills.discovery",
    "discover": "skills.discovery",
    "fit_head": "ccr.truncate",
    "invoked_skills": "skills.invocations",
    "parse_skill": "skills.discovery",
    "read_skill_body": "skills.discovery",
    "record_invocation": "skills.invocations",
    "truncate_head": "ccr.truncate",
}
"""Public name -> module defining it (add a line here with each new export)."""

__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
