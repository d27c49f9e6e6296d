"""Claude Code's settings file (``~/.claude/settings.json``): adding the ``statusLine`` entry.

The entry is added by inserting its text before the object's closing brace,
so every other byte of the file stays as it was; a backup of the file is
written first, and adding the same entry again changes nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ccr.files import write_output
from ccr.root_errors import InputError, InputInvalid, InvalidRequest, OutputWriteError

__all__ = [
    "BACKUP_SUFFIX",
    "Installed",
    "default_settings_path",
    "install_status_line",
    "status_line_command",
    "status_line_setting",
]

BACKUP_SUFFIX = ".compactor-backup"
"""The backup of a settings file is written beside it, under its name and this suffix."""

SETTINGS_MAX_BYTES = 4 * 1024 * 1024


def default_settings_path() -> Path:
    """``~/.claude/settings.json``: the user's own Claude Code settings."""
    return Path.home() / ".claude" / "settings.json"


def status_line_command() -> str:
    """The command Claude Code should run: this installation's ``compactor statusline``."""
    script = Path(sys.executable).parent / "compactor"
    found = str(script) if script.is_file() else shutil.which("compactor")
    if found:
        return f"{_quoted(found)} statusline"
    return f"{_quoted(sys.executable)} -m compactor statusline"


def _quoted(path: str) -> str:
    return path if all(c.isalnum() or c in "/._-+~" for c in path) else "'" + path.replace("'", "'\\''") + "'"


def status_line_setting(command: str | None = None) -> dict[str, Any]:
    """The ``statusLine`` value: a command, no padding."""
    return {"type": "command", "command": command or status_line_command(), "padding": 0}


@dataclass(frozen=True)
class Installed:
    """What ``install_status_line`` did: ``added``, ``replaced`` (with ``force``) or ``unchanged``."""

    settings: Path
    outcome: Literal["added", "replaced", "unchanged"]
    backup: Path | None


def install_status_line(path: Path, setting: dict[str, Any], *, force: bool = False) -> Installed:
    """Add ``setting`` as ``statusLine`` to the settings file ``path`` (made when missing).

    Raises:
        InvalidRequest: the file already has another ``statusLine`` (``force`` replaces it; the
            file is then written again as JSON with two-space indents).
        InputInvalid: the file is not a JSON object.
        InputError: the file cannot be read.
        OutputWriteError: the backup or the file cannot be written.
    """
    try:
        raw = path.read_bytes() if path.exists() else b""
    except OSError as exc:
        raise InputError(f"{path}: cannot read the settings ({exc.strerror})") from exc
    if len(raw) > SETTINGS_MAX_BYTES:
        raise InputInvalid(f"{path}: larger than {SETTINGS_MAX_BYTES} bytes; not a settings file")
    text = raw.decode("utf-8", "replace")
    data = _parsed(path, text)
    current = data.get("statusLine")
    if current == setting:
        return Installed(path, "unchanged", None)
    if current is not None and not force:
        raise InvalidRequest(
            f"{path} already has a statusLine ({json.dumps(current)[:120]}); "
            "pass --force to replace it (a backup is kept)"
        )
    outcome: Literal["added", "replaced"] = "added" if current is None else "replaced"
    if current is None:
        new_text = _inserted(text, setting)
    else:
        data["statusLine"] = setting
        new_text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    backup = _backup(path, raw) if raw else None
    try:
        write_output(path, [new_text.encode("utf-8")], what="settings", make_folders=True)
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot write the settings ({exc.strerror})") from exc
    return Installed(path, outcome, backup)


def _parsed(path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InputInvalid(f"{path}: not JSON ({exc}); nothing was changed") from exc
    if not isinstance(data, dict):
        raise InputInvalid(f"{path}: not a JSON object; nothing was changed")
    return data


def _inserted(text: str, setting: dict[str, Any]) -> str:
    """``text`` (a JSON object without ``statusLine``) with the entry added before its closing brace."""
    entry = '"statusLine": ' + json.dumps(setting, indent=2).replace("\n", "\n  ")
    end = text.rstrip().rfind("}")
    if end < 0:
        return "{\n  " + entry + "\n}\n"
    before = text[:end].rstrip()
    tail = text[end:]
    if before.endswith("{"):
        return before + "\n  " + entry + "\n" + tail
    return before + ",\n  " + entry + "\n" + tail


def _backup(path: Path, raw: bytes) -> Path:
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    try:
        write_output(backup, [raw], what="settings backup")
        os.chmod(backup, 0o600)
    except OSError as exc:
        raise OutputWriteError(f"{backup}: cannot write the backup ({exc.strerror}); nothing was changed") from exc
    return backup
