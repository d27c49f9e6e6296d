"""The tuning cache: one JSON file per (session content, trial settings, project version and code).

Under ``$COMPACTOR_HOME/tune/`` (``~/.compactor/tune`` by default). A
rerun, or a space widened with new values, replays only what is not there
yet. Files are written to a temporary name and renamed, so an interrupted
run leaves whole results or none; an unreadable entry is treated as absent
and recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from ccr.distribution import installed_version
from compactor.tune.jobs import SessionResult

__all__ = ["ResultCache", "cache_key", "code_digest", "default_cache_dir", "project_version"]


_PACKAGES = ("compactor", "attachments", "ccr", "skills")
"""The project's top-level packages (``compactor.memory`` is inside ``compactor``)."""


@functools.cache
def project_version() -> str:
    """The installed version and a digest of the code (part of every cache key).

    The digest covers every module and template of the project's packages,
    so a change to the code, even without a version bump, is never answered
    with results the old code computed.
    """
    release = installed_version()
    roots = []
    for package in _PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is not None and spec.origin is not None:
            roots.append(Path(spec.origin).parent)
    return f"{release}+{code_digest(roots)}"


def code_digest(roots: list[Path]) -> str:
    """A short digest of every ``.py`` and ``.j2`` file under ``roots`` (names and bytes)."""
    digest = hashlib.sha256()
    for root in roots:
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".j2") and p.is_file()):
            digest.update(path.relative_to(root.parent).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def default_cache_dir() -> Path:
    """``$COMPACTOR_HOME/tune`` (``COMPACTOR_HOME`` defaults to ``~/.compactor``)."""
    home = os.environ.get("COMPACTOR_HOME", "").strip()
    return (Path(home) if home else Path.home() / ".compactor") / "tune"


def cache_key(session_hash: str, settings_json: str, project: str) -> str:
    """sha256 over the session's content hash, the trial's effective settings and the version."""
    canonical = json.dumps(
        {"session": session_hash, "settings": json.loads(settings_json), "version": project},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResultCache:
    """Session results by cache key, as files under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> SessionResult | None:
        """The cached result for ``key``, or None (also for a damaged entry)."""
        try:
            return SessionResult.model_validate_json(self._path(key).read_bytes())
        except (OSError, ValidationError):
            return None

    def put(self, key: str, result: SessionResult) -> None:
        """Store ``result`` under ``key`` (atomically: whole or not at all).

        Raises:
            OSError: the cache folder cannot be written.
        """
        from ccr.files import private_dir

        path = self._path(key)
        private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(result.model_copy(update={"cached": False}).model_dump_json())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
