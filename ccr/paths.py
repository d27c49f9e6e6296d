"""Where the store file lives by default.

The rules for opening it safely (private modes, symlinks refused, identity
checks) are the SQLite kit's (``ccr.sqlite_kit.files``), shared with the
memory database. This module stays free of ``sqlite3`` so that finding the
home folder (the hooks' session records) loads nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["DEFAULT_HOME", "HOME_ENV", "default_store_path"]

HOME_ENV = "COMPACTOR_HOME"
DEFAULT_HOME = "~/.compactor"


def default_store_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$COMPACTOR_HOME/ccr.db``; ``COMPACTOR_HOME`` defaults to ``~/.compactor``.

    Defined here, beside the home folder's name, so that finding the home
    folder (the hooks' session records) does not import the backends.
    """
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV) or DEFAULT_HOME
    return Path(home).expanduser() / "ccr.db"
