"""The distribution this code is installed as: its name on the package index and its version.

The import packages (``compactor``, ``ccr``, ...) and the commands keep
their names; the distribution is named differently because ``compactor``
on the package index is an unrelated project.
"""

from __future__ import annotations

__all__ = ["DISTRIBUTION", "installed_version"]

DISTRIBUTION = "context-compactor"
"""The ``[project] name`` in pyproject.toml: what ``pip install`` and ``importlib.metadata`` call it."""


def installed_version(default: str = "unknown") -> str:
    """The installed distribution's version, or ``default`` when it is not installed (a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return default
