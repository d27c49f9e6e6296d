"""File sources: where a restored file's current content comes from.

``DiskFiles`` reads the file system now, as a live session does.
``RecordedFiles`` serves a replay, where the files are not on this machine:
it rebuilds each file from what the recorded session showed of it (Read
results, Write contents, Edit replacements applied in order). A source
``origin`` says which it is, so the attachment can tell the model.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

__all__ = ["DiskFiles", "FileOrigin", "FileSource", "RecordedFiles", "slice_lines"]

FileOrigin = Literal["disk", "recorded"]


@runtime_checkable
class FileSource(Protocol):
    """Gives a file's current text, or ``None`` when it is deleted or unavailable.

    A source may also define ``origin`` (``"disk"`` or ``"recorded"``) and
    ``read_slice(path, offset, limit)``; both are optional.
    """

    def read(self, path: str) -> str | None: ...


def slice_lines(text: str, offset: int | None, limit: int | None) -> str:
    """Lines ``offset`` .. ``offset + limit - 1`` of ``text`` (1-based, as the Read tool takes them)."""
    lines = text.splitlines(keepends=True)
    start = max(offset or 1, 1) - 1
    end = len(lines) if limit is None else start + max(limit, 0)
    return "".join(lines[start:end])


class DiskFiles:
    """Reads files from disk as UTF-8 (undecodable bytes replaced); ``None`` when missing.

    Relative paths are taken from ``root`` (the session's working folder)
    when given, else from the process's current folder.
    """

    origin: FileOrigin = "disk"

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else None

    def read(self, path: str) -> str | None:
        """The file's text, or ``None`` when it is missing, unreadable or not a regular file.

        The file is opened without blocking and checked before reading, so a
        path that has become a named pipe or a device cannot stall compaction.
        """
        target = Path(path)
        if self.root is not None and not target.is_absolute():
            target = self.root / target
        try:
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except (OSError, ValueError):  # ValueError: a NUL byte in the path
            return None
        try:
            with open(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                    return None
                data = handle.read()
        except OSError:
            return None
        return data.decode("utf-8", errors="replace")

    def read_slice(self, path: str, offset: int | None, limit: int | None) -> str | None:
        text = self.read(path)
        return None if text is None else slice_lines(text, offset, limit)


class RecordedFiles:
    """A replay's view of the files: what the recorded session read and wrote.

    A file is known whole or line by line. A full read or a write makes it
    complete (kept as its text, which most reads and writes of a session
    are, so that they cost no splitting); a partial read adds the lines it
    showed. ``read`` answers only for complete files; ``read_slice`` also
    answers from the known lines. An edit that cannot be applied (its old
    text is not in what is known) means the record has lost track of the
    file, which is then forgotten rather than served wrong.
    """

    origin: FileOrigin = "recorded"

    def __init__(self) -> None:
        self._whole: dict[str, str] = {}
        self._lines: dict[str, dict[int, str]] = {}  # files known only in part, by 1-based line

    def __contains__(self, path: object) -> bool:
        return path in self._whole or path in self._lines

    def record_read(
        self,
        path: str,
        content: str,
        offset: int | None = None,
        *,
        total_lines: int | None = None,
        limit: int | None = None,
    ) -> None:
        """Remember what a Read showed of ``path``.

        ``offset`` is the first line shown (1-based), ``None`` for a read from
        the top; ``total_lines`` is the file's length when the recording says
        it; ``limit`` is the Read call's line limit, if it had one. A read
        from the top that is not known to be cut short (by ``total_lines``,
        or by showing as many lines as ``limit`` allowed) makes the file
        complete.
        """
        start = max(offset or 1, 1)
        # Claude Code counts lines as the parts between newlines, so a file
        # ending in a newline has one more "line" than splitlines() finds.
        shown = content.count("\n") + 1
        if total_lines is not None:
            whole = offset is None and shown >= total_lines
        else:
            whole = offset is None and (limit is None or shown < limit)
        if whole:
            self.record_write(path, content)
            return
        shown_lines = [
            line if line.endswith(("\n", "\r")) or (total_lines is not None and number >= total_lines) else line + "\n"
            for number, line in enumerate(content.splitlines(keepends=True), start)
        ]
        whole_text = self._whole.get(path)
        if whole_text is not None:
            lines = whole_text.splitlines(keepends=True)
            if lines[start - 1 : start - 1 + len(shown_lines)] == shown_lines and (
                total_lines is None or len(lines) <= total_lines
            ):
                return  # it showed only what is known already, as most rereads do
        complete = whole_text is not None
        known = self._known_lines(path)
        for number, line in enumerate(shown_lines, start):
            known[number] = line
        if total_lines is not None:
            for number in [n for n in known if n > total_lines]:
                del known[number]
            complete = complete or all(n in known for n in range(1, total_lines + 1))
        if complete:
            self.record_write(path, _joined(known))

    def record_write(self, path: str, content: str) -> None:
        """Remember that ``path`` now holds exactly ``content``."""
        self._whole[path] = content
        self._lines.pop(path, None)

    def apply_edit(
        self, path: str, old: str, new: str, replace_all: bool = False, *, original: str | None = None
    ) -> bool:
        """Apply an Edit's replacement to what is known of ``path``; whether it applied.

        ``original`` is the whole file before the edit when the recording
        carries it (Claude Code's Edit result does, as ``originalFile``): it
        makes the file complete first. An edit of a file the recording never
        showed is ignored; one whose ``old`` text is not found forgets the file.
        """
        if original is not None:
            self.record_write(path, original)
        text = self._whole.get(path)
        if text is not None:
            if old not in text:
                self.forget(path)
                return False
            self.record_write(path, text.replace(old, new) if replace_all else text.replace(old, new, 1))
            return True
        if path not in self._lines:
            return False
        return self._edit_partial(path, old, new, replace_all)

    def forget(self, path: str) -> None:
        """Stop serving ``path`` (deleted, or no longer known)."""
        self._whole.pop(path, None)
        self._lines.pop(path, None)

    def read(self, path: str) -> str | None:
        """The whole recorded content of ``path``, or ``None`` unless all of it is known."""
        return self._whole.get(path)

    def read_slice(self, path: str, offset: int | None, limit: int | None) -> str | None:
        """Lines ``offset`` .. ``offset + limit - 1``, or ``None`` unless all of them are known.

        With no ``limit``, the known lines from ``offset`` up to the first gap.
        """
        text = self._whole.get(path)
        if text is not None:
            return slice_lines(text, offset, limit)
        known = self._lines.get(path)
        if known is None:
            return None
        start = max(offset or 1, 1)
        if limit is None:
            end = start
            while end in known:
                end += 1
            end -= 1
            if end < start:
                return None
        else:
            end = start + limit - 1
            if any(n not in known for n in range(start, end + 1)):
                return None
        return "".join(known[n] for n in range(start, end + 1))

    def _known_lines(self, path: str) -> dict[int, str]:
        """The known lines of ``path`` by number, to be changed in place (a whole file is split first)."""
        text = self._whole.pop(path, None)
        if text is not None:
            self._lines[path] = dict(enumerate(text.splitlines(keepends=True), 1))
        return self._lines.setdefault(path, {})

    def _edit_partial(self, path: str, old: str, new: str, replace_all: bool) -> bool:
        known = self._lines[path]
        runs: list[list[int]] = []
        for number in sorted(known):
            if runs and runs[-1][-1] == number - 1:
                runs[-1].append(number)
            else:
                runs.append([number])
        rebuilt: dict[int, str] = {}
        shift = 0
        applied = False
        for run in runs:
            text = "".join(known[n] for n in run)
            if old in text and (replace_all or not applied):
                text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
                applied = True
            lines = text.splitlines(keepends=True)
            for i, line in enumerate(lines):
                rebuilt[run[0] + shift + i] = line
            shift += len(lines) - len(run)
        if not applied:
            self.forget(path)
            return False
        self._lines[path] = rebuilt
        return True


def _joined(known: Mapping[int, str]) -> str:
    """Known lines put back together in order."""
    return "".join(known[n] for n in sorted(known))
