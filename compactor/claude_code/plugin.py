"""Where the Claude Code plugin folder of this installation is (``compactor plugin path``).

A checkout (or an editable install of one) has it at ``plugin/``, beside the
packages, with the marketplace that lists it in ``.claude-plugin/`` at the
root. A wheel installs the same two as data files, in the same layout, under
``<prefix>/share/compactor/`` (``plugin/`` and ``.claude-plugin/marketplace.json``),
where ``<prefix>`` is the environment's data folder (the virtual
environment, or ``~/.local`` for ``pip install --user``). Either folder can
be given to Claude Code: the plugin to ``claude --plugin-dir``, the
marketplace to ``claude plugin marketplace add``.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

from compactor.core.errors import InputNotFound

__all__ = ["PLUGIN_NAME", "SHARE_DIR", "find_marketplace", "find_plugin", "is_plugin", "plugin_candidates"]

PLUGIN_NAME = "compactor"
"""The plugin's name in ``plugin.json`` and in the marketplace (``compactor@compactor``)."""

SHARE_DIR = Path("share") / "compactor"
"""Where a wheel puts the plugin and its marketplace, under the environment's data folder."""


def is_plugin(folder: Path) -> bool:
    """Whether ``folder`` is compactor's plugin: its ``.claude-plugin/plugin.json`` names it."""
    try:
        manifest = json.loads((folder / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("name") == PLUGIN_NAME


def _data_folders() -> list[Path]:
    """The data folders a wheel of this Python can have been installed into, the one holding this code first."""
    package_root = Path(__file__).resolve().parents[2]
    schemes = [sysconfig.get_default_scheme(), sysconfig.get_preferred_scheme("user")]
    paths = [sysconfig.get_paths(scheme) for scheme in dict.fromkeys(schemes)]
    ordered = sorted(paths, key=lambda p: Path(p["purelib"]).resolve() != package_root)
    folders = [Path(p["data"]) for p in ordered] + [Path(sys.prefix)]
    return list(dict.fromkeys(folders))


def plugin_candidates(package_root: Path | None = None, data_folders: Sequence[Path] | None = None) -> list[Path]:
    """Where the plugin folder may be, in the order they are tried.

    ``package_root`` is the folder that holds the ``compactor`` package (a
    checkout's root, or ``site-packages``); ``data_folders`` the environment's
    data folders (default: those of the running Python, the one this code is
    installed in first).
    """
    root = Path(__file__).resolve().parents[2] if package_root is None else package_root
    folders: Iterable[Path] = _data_folders() if data_folders is None else data_folders
    return [root / "plugin", *(folder / SHARE_DIR / "plugin" for folder in folders)]


def find_plugin(package_root: Path | None = None, data_folders: Sequence[Path] | None = None) -> Path:
    """The plugin folder of this installation (arguments as for :func:`plugin_candidates`).

    Raises:
        InputNotFound: no candidate holds compactor's plugin (an installation without its data files).
    """
    candidates = plugin_candidates(package_root, data_folders)
    for candidate in candidates:
        if is_plugin(candidate):
            return candidate.resolve()
    tried = ", ".join(str(c) for c in candidates)
    raise InputNotFound(
        f"the Claude Code plugin folder is not installed (looked in {tried}); "
        "install compactor from a wheel or a checkout (pip install /path/to/compactor)"
    )


def find_marketplace(package_root: Path | None = None, data_folders: Sequence[Path] | None = None) -> Path:
    """The folder whose ``.claude-plugin/marketplace.json`` lists the plugin :func:`find_plugin` finds.

    Raises:
        InputNotFound: no plugin folder, or no marketplace beside it.
    """
    plugin = find_plugin(package_root, data_folders)
    folder = plugin.parent
    try:
        manifest = json.loads((folder / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputNotFound(f"no usable marketplace beside the plugin folder {plugin}: {exc}") from exc
    listed = manifest.get("plugins") if isinstance(manifest, dict) else None
    if not isinstance(listed, list) or not any(
        isinstance(p, dict) and p.get("name") == PLUGIN_NAME and p.get("source") == f"./{plugin.name}" for p in listed
    ):
        raise InputNotFound(f"the marketplace in {folder} does not list the plugin folder {plugin}")
    return folder
