"""Skill discovery: find ``SKILL.md`` files under the configured roots.

A root holds one folder per skill (``<root>/<skill>/SKILL.md``), the layout
Claude Code uses for a project's ``.claude/skills/``, the user's
``~/.claude/skills/`` and a plugin's ``skills/``. The skill's name comes from
its front matter, else from its folder's name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from skills._frontmatter import FrontMatterError, split_front_matter
from skills.errors import SkillFileError
from skills.info import SkillInfo, SkillRoot, SkillSource

__all__ = ["SKILL_FILE", "default_roots", "discover", "parse_skill", "read_skill_body"]

SKILL_FILE = "SKILL.md"


def default_roots(
    cwd: str | os.PathLike[str] | None = None,
    *,
    home: str | os.PathLike[str] | None = None,
    plugin_dirs: Sequence[str | os.PathLike[str]] = (),
) -> list[SkillRoot]:
    """The usual roots, in precedence order: project, user, then each plugin's ``skills/``.

    ``home`` defaults to the user's home folder; ``cwd`` to the current folder.
    """
    project = Path(cwd if cwd is not None else os.getcwd())
    user = Path(home if home is not None else Path.home())
    roots = [
        SkillRoot(path=str(project / ".claude" / "skills"), source="project"),
        SkillRoot(path=str(user / ".claude" / "skills"), source="user"),
    ]
    roots.extend(SkillRoot(path=str(Path(p) / "skills"), source="plugin") for p in plugin_dirs)
    return roots


def discover(
    roots: Iterable[SkillRoot | str | os.PathLike[str]] | SkillRoot | str | os.PathLike[str],
    *,
    errors: list[SkillFileError] | None = None,
) -> list[SkillInfo]:
    """Every skill found under ``roots`` (a list, or a single root), root by root, each sorted by folder name.

    Missing roots are ignored (a user may have no skills). A skill file that
    cannot be read or parsed is left out; when ``errors`` is given its error is
    appended there so the caller can tell the user, and one bad file never
    hides the others.
    """
    if isinstance(roots, SkillRoot | str | os.PathLike):
        roots = [roots]  # one root, not the characters of its path
    found: list[SkillInfo] = []
    for root in roots:
        root = root if isinstance(root, SkillRoot) else SkillRoot(path=os.fspath(root))
        base = Path(root.path)
        if not base.is_dir():
            continue
        for skill_file in sorted(base.glob(f"*/{SKILL_FILE}")):
            try:
                found.append(parse_skill(skill_file, source=root.source))
            except SkillFileError as exc:
                if errors is not None:
                    errors.append(exc)
    return found


def parse_skill(path: str | os.PathLike[str], *, source: SkillSource = "other") -> SkillInfo:
    """The ``SkillInfo`` a ``SKILL.md`` file describes.

    Raises:
        SkillFileError: the file cannot be read, or its front matter is malformed.
    """
    fields, _ = _read(Path(path))
    skill_file = Path(path)
    name = fields.get("name", "").strip() or skill_file.parent.name
    return SkillInfo(
        name=name,
        description=fields.get("description", "").strip(),
        path=str(skill_file),
        directory=str(skill_file.parent),
        source=source,
        fields=fields,
    )


def read_skill_body(path: str | os.PathLike[str]) -> str:
    """The text of a ``SKILL.md`` after its front matter: what an invocation loads.

    Raises:
        SkillFileError: the file cannot be read, or its front matter is malformed.
    """
    _, body = _read(Path(path))
    return body.lstrip("\n")


def _read(path: Path) -> tuple[dict[str, str], str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise SkillFileError(str(path), f"cannot read: {exc.strerror or exc}") from exc
    try:
        return split_front_matter(text)
    except FrontMatterError as exc:
        raise SkillFileError(str(path), str(exc)) from exc
