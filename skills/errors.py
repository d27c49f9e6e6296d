"""The skills package's errors.

::

    CompactorError (ccr.root_errors, the project's root)
    └── SkillsError                 root of the skills package
        ├── SkillFileError          a SKILL.md could not be read or its front matter is malformed
        └── SkillNotFound           no skill of that name is in the catalog
"""

from __future__ import annotations

from ccr.root_errors import CompactorError

__all__ = ["SkillFileError", "SkillNotFound", "SkillsError"]


class SkillsError(CompactorError):
    """Root of every error the skills package raises."""

    error_id = "skills_error"


class SkillFileError(SkillsError):
    """A ``SKILL.md`` file could not be read, or its front matter is malformed."""

    error_id = "skill_file_invalid"
    exit_code = 65

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path


class SkillNotFound(SkillsError):
    """The catalog holds no skill of the requested name."""

    error_id = "skill_not_found"
    exit_code = 66
