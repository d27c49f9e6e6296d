"""Old module paths, kept importable after the layout moved them.

``compactor`` was one flat folder until 0.2. Code written against those
paths (``from compactor.replay import replay``) keeps working: a finder,
put first on ``sys.meta_path`` when ``compactor`` is imported, answers each
old name with the module that now lives at the new one, the same object, so
``compactor.replay is compactor.claude_code.replay`` and no class exists
twice. Modules later moved down to a lower package (``compactor.cli.kit``,
``compactor.core.lazy``, ``compactor.view.progress``,
``compactor.view.readable``) are aliased the same way. Nothing in the
project imports an old path (the layering test checks it). The top-level ``memory`` package is not aliased: it is
``compactor.memory`` now (CHANGELOG.md has the note).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    import importlib.abc

__all__ = ["MOVED", "install"]

MOVED: dict[str, str] = {
    **{
        f"compactor.{name}": f"compactor.core.{name}"
        for name in ("messages", "session", "ledger", "tokens", "calibration", "config", "errors")
    },
    **{
        f"compactor.{name}": f"compactor.engine.{name}"
        for name in (
            "pipeline",
            "policy",
            "rounds",
            "spans",
            "masking",
            "cache",
            "dedup",
            "orchestrator",
            "report",
            "survival",
        )
    },
    **{
        f"compactor.{name}": f"compactor.claude_code.{name}"
        for name in ("hooks", "transcript", "restore", "replay", "plugin")
    },
    **{f"compactor.{name}": f"compactor.view.{name}" for name in ("html_report", "chart", "readable", "progress")},
    "compactor.provider_compaction": "compactor.summarizers.provider_compaction",
    "compactor.commands": "compactor.cli.commands",
    "compactor.recovery": "ccr.recovery",
    "compactor.mcp_stdio": "ccr.mcp_stdio",
    # Later, plumbing every package shares went down to the lowest package (tests/test_layering.py).
    **{old: "ccr.progress" for old in ("compactor.progress", "compactor.view.progress")},
    **{old: "attachments.readable" for old in ("compactor.readable", "compactor.view.readable")},
    "compactor.core.lazy": "ccr.lazy",
    "compactor.cli.kit": "ccr.cli_kit",
}
"""Old dotted module name -> where it lives now. A submodule of a moved package follows it."""


_PREFIXES = tuple(sorted({old.split(".")[0] + "." for old in MOVED}))


def _target(fullname: str) -> str | None:
    if not fullname.startswith(_PREFIXES):
        return None
    if fullname in MOVED:
        return MOVED[fullname]
    for old, new in MOVED.items():
        if fullname.startswith(old + "."):
            return new + fullname[len(old) :]
    return None


class _Alias:
    """Finds an old name and loads it as the module at its new name.

    A finder and a loader by shape (``find_spec``; ``create_module`` and
    ``exec_module``), as the import system asks: deriving from
    ``importlib.abc`` would import ``importlib.resources`` and more at every
    start of the ``compactor`` command, a hook's included.
    """

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = _target(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, cast("importlib.abc.Loader", self), is_package=False)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = _target(spec.name)
        assert new is not None
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__  # the import system overwrites it next; exec_module puts it back
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (it ran under its new name); give the module back its own spec."""
        alias = module.__spec__
        if alias is not None and alias.loader_state is not None:
            module.__spec__ = alias.loader_state


_FINDER = _Alias()


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (once), before the finder that would load a second copy."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
