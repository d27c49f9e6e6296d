"""SkillRegistry: the catalog of skills found under a set of roots, reloadable.

The registry is the edge that touches the file system: it discovers skills,
reads a skill's body when it is invoked, and can be kept current by a
``SkillWatcher``. Reloading swaps the whole catalog at once, so a reader in
another thread sees either the old catalog or the new one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator

from skills.discovery import discover, read_skill_body
from skills.errors import SkillFileError, SkillNotFound
from skills.info import SkillInfo, SkillRoot
from skills.invocations import InvokedSkill, SkillState, record_invocation
from skills.watcher import SkillWatcher

__all__ = ["SkillRegistry"]


class SkillRegistry:
    """The skills under ``roots``, by name; the first root holding a name wins.

    ``roots`` is a list of roots, or a single one.
    """

    def __init__(
        self, roots: Iterable[SkillRoot | str | os.PathLike[str]] | SkillRoot | str | os.PathLike[str]
    ) -> None:
        if isinstance(roots, SkillRoot | str | os.PathLike):
            roots = [roots]  # one root, not the characters of its path
        self.roots: list[SkillRoot] = [r if isinstance(r, SkillRoot) else SkillRoot(path=os.fspath(r)) for r in roots]
        self._lock = threading.Lock()
        self._skills: dict[str, SkillInfo] = {}
        self._errors: list[SkillFileError] = []
        self._generation = 0
        self.reload()

    def reload(self) -> list[SkillInfo]:
        """Discover the roots again and replace the catalog; returns the new skills."""
        errors: list[SkillFileError] = []
        catalog: dict[str, SkillInfo] = {}
        for info in discover(self.roots, errors=errors):
            catalog.setdefault(info.name, info)
        with self._lock:
            self._skills = catalog
            self._errors = errors
            self._generation += 1
        return list(catalog.values())

    @property
    def generation(self) -> int:
        """How many times the catalog has been loaded (1 after construction)."""
        return self._generation

    @property
    def errors(self) -> list[SkillFileError]:
        """The skill files the last reload could not read or parse."""
        return list(self._errors)

    @property
    def skills(self) -> list[SkillInfo]:
        """Every skill in the catalog, in discovery order."""
        return list(self._skills.values())

    def names(self) -> list[str]:
        """The names in the catalog, in discovery order."""
        return list(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def __iter__(self) -> Iterator[SkillInfo]:
        return iter(self.skills)

    def __len__(self) -> int:
        return len(self._skills)

    def get(self, name: str) -> SkillInfo:
        """The skill called ``name``.

        Raises:
            SkillNotFound: no skill of that name is in the catalog.
        """
        try:
            return self._skills[name]
        except KeyError:
            raise SkillNotFound(f"no skill named {name!r} under the configured roots") from None

    def content(self, name: str) -> str:
        """The body of the skill called ``name``: the text an invocation loads.

        Raises:
            SkillNotFound: no skill of that name is in the catalog.
            SkillFileError: its ``SKILL.md`` can no longer be read.
        """
        return read_skill_body(self.get(name).path)

    def invoke(
        self,
        state: SkillState,
        name: str,
        *,
        agent_id: str | None = None,
        at: float | None = None,
    ) -> InvokedSkill:
        """Load the skill called ``name`` and record its invocation in ``state``.

        Raises:
            SkillNotFound: no skill of that name is in the catalog.
            SkillFileError: its ``SKILL.md`` can no longer be read.
        """
        info = self.get(name)
        return record_invocation(state, info, self.content(name), agent_id=agent_id, at=at)

    def watch(
        self,
        *,
        on_reload: Callable[[SkillRegistry], None] | None = None,
        debounce_ms: int = 1_600,
    ) -> SkillWatcher:
        """A started ``SkillWatcher`` that reloads this registry when a root changes."""
        return SkillWatcher(self, on_reload=on_reload, debounce_ms=debounce_ms).start()
