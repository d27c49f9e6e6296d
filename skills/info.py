"""SkillInfo and SkillRoot: what a discovered skill is, and where skills are looked for."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["SkillInfo", "SkillRoot", "SkillSource"]

SkillSource = Literal["project", "user", "plugin", "other"]
"""Where a skill root comes from; earlier sources win when two skills share a name."""


class SkillRoot(BaseModel):
    """A folder holding one sub-folder per skill, each with a ``SKILL.md``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    source: SkillSource = "other"


class SkillInfo(BaseModel):
    """One skill as its ``SKILL.md`` front matter describes it.

    ``path`` is the ``SKILL.md`` file; ``fields`` keeps every front matter
    key as read (``name`` and ``description`` included). The body is not held
    here: it is read when the skill is invoked (``SkillRegistry.content``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    path: str
    directory: str
    source: SkillSource = "other"
    fields: dict[str, str] = Field(default_factory=dict)
