"""The file rules for a database: private modes, symlink refusal, identity checks (standard library only).

A database may hold anything an agent ever saw, so its file and the SQLite
sidecars (``-wal``, ``-shm``, ``-journal``) are private (0600) and a folder
made for it is 0700. A symlink or a non-regular file at any of those paths is
refused rather than followed: a planted link could redirect the writes. A
file that is not SQLite is refused and left as it was. After SQLite opens
the file, ``check_identity`` confirms that it opened the very inode
validated here, so a swap between check and use is caught.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ccr.root_errors import InputNotFound, NotAStore, StoreError, UnsafeStorePath

__all__ = [
    "FileIdentity",
    "SIDECARS",
    "SQLITE_HEADER",
    "check_identity",
    "check_readable_file",
    "file_size",
    "prepare_file",
    "require_folder",
    "require_store_file",
    "tighten_modes",
]

SIDECARS = ("-wal", "-shm", "-journal", "-ack")
"""SQLite's own sidecars, and the count of acknowledged records a ccr store keeps beside it."""
SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

FileIdentity = tuple[int, int]
"""``(st_dev, st_ino)`` of the validated database file."""


def prepare_file(path: Path, *, kind: str = "ccr store") -> FileIdentity:
    """Create (if needed) and validate a database file for writing; return its identity.

    Creates a missing parent directory with mode 0700 and a missing file with
    mode 0600. A non-empty file that is not SQLite is refused before anything
    about it changes; an existing file is tightened only once it has proved
    to be one of ours (``tighten_modes``). Messages name the file a ``kind`` ("ccr store",
    "memory store"), so that they say which database it was.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not empty and not an SQLite database.
        StoreError: the directory or file cannot be created or opened.
    """
    parent = path.parent
    try:
        if not parent.exists():
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(parent, 0o700)
        if not parent.is_dir():
            raise UnsafeStorePath(f"{kind} directory is not a directory: {parent}")
    except OSError as exc:
        raise StoreError(f"cannot create {kind} directory {parent}: {exc.strerror or exc}") from exc
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    return _open_and_check(path, kind, flags, empty_allowed=True, opening="open", checking="secure")


def check_readable_file(path: Path, *, kind: str = "ccr store") -> FileIdentity:
    """Validate an existing database file for reading only; nothing is created or changed.

    ``kind`` is as ``prepare_file``'s.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not an SQLite database.
        StoreError: the file does not exist or cannot be read.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    return _open_and_check(path, kind, flags, empty_allowed=False, opening="read", checking="read")


def _open_and_check(
    path: Path, kind: str, flags: int, *, empty_allowed: bool, opening: str, checking: str
) -> FileIdentity:
    """Refuse unsafe sidecars, open ``path`` with ``flags`` (a created file gets mode 0600), and check it
    is a regular file holding an SQLite database (or empty, when ``empty_allowed``); its identity.

    ``opening`` and ``checking`` are the verbs a failure to open it, or to check it once open, is told with.

    Raises:
        UnsafeStorePath: the path or a sidecar is a symlink or not a regular file.
        NotAStore: the file is not an SQLite database.
        StoreError: the file cannot be opened or checked.
    """
    for candidate in (path, *(_sidecar(path, s) for s in SIDECARS)):
        _refuse_unsafe(candidate, kind)
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        if _is_symlink(path):
            raise UnsafeStorePath(f"{kind} path is a symlink: {path}") from exc
        raise StoreError(f"cannot {opening} {kind} file {path}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafeStorePath(f"{kind} path is not a regular file: {path}")
        if (st.st_size or not empty_allowed) and os.pread(fd, len(SQLITE_HEADER), 0) != SQLITE_HEADER:
            raise NotAStore(f"{path} is not a {kind} (not an SQLite database); left unchanged")
        return (st.st_dev, st.st_ino)
    except OSError as exc:
        raise StoreError(f"cannot {checking} {kind} file {path}: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)


def check_identity(path: Path, expected: FileIdentity, *, kind: str = "ccr store") -> None:
    """Confirm the path still names the validated file, and SQLite opened that file (``kind`` as ``prepare_file``'s).

    Raises:
        UnsafeStorePath: the path was replaced, or an open descriptor for it
            points at a different file.
    """
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError as exc:
        raise UnsafeStorePath(f"{kind} file vanished while opening: {path}") from exc
    if stat.S_ISLNK(st.st_mode) or (st.st_dev, st.st_ino) != expected:
        raise UnsafeStorePath(f"{kind} file was replaced while opening: {path}")
    for identity in _open_descriptors_for(path):
        if identity != expected:
            raise UnsafeStorePath(f"{kind} file was replaced while opening: {path}")


def tighten_modes(path: Path, *, kind: str = "ccr store") -> None:
    """Make the database file and its existing sidecars 0600, refusing unsafe sidecars (``kind`` as ``prepare_file``'s).

    Called once the file has proved to be one of ours, so that another program's
    file is never changed.

    Raises:
        UnsafeStorePath: a sidecar is a symlink or not a regular file.
    """
    for suffix in ("", *SIDECARS):
        sidecar = _sidecar(path, suffix)
        _refuse_unsafe(sidecar, kind)
        try:
            st = os.stat(sidecar, follow_symlinks=False)
            if st.st_mode & 0o077 and st.st_uid == os.geteuid():
                os.chmod(sidecar, 0o600, follow_symlinks=False)
        except FileNotFoundError:
            continue
        except (OSError, NotImplementedError):
            continue


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _is_symlink(path: Path) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def _refuse_unsafe(path: Path, kind: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot inspect {path}: {exc.strerror or exc}") from exc
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeStorePath(f"refusing symlinked {kind} path: {path}")
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeStorePath(f"refusing non-regular {kind} path: {path}")


def _open_descriptors_for(path: Path) -> list[FileIdentity]:
    """Identities of this process's open descriptors whose target is ``path`` (Linux only)."""
    fd_dir = "/proc/self/fd"
    if not os.path.isdir(fd_dir):
        return []
    target = os.path.realpath(path)
    found: list[FileIdentity] = []
    for name in os.listdir(fd_dir):
        try:
            if os.readlink(os.path.join(fd_dir, name)) != target:
                continue
            st = os.fstat(int(name))
        except (OSError, ValueError):
            continue
        found.append((st.st_dev, st.st_ino))
    return found


def file_size(path: Path) -> int:
    """The size of ``path`` without following a link; 0 when there is nothing to measure."""
    try:
        return os.stat(path, follow_symlinks=False).st_size
    except OSError:
        return 0


def require_store_file(path: Path, *, kind: str = "ccr store") -> None:
    """Refuse, for reading, a path the user named that holds no database: nothing there, or an empty file.

    What a careful reader does with a path it was given: a missing one is
    most likely a typo, and reading never creates anything (``kind`` as
    ``prepare_file``'s). An empty file beside a write-ahead log is a database
    being made, and passes.

    Raises:
        InputNotFound: nothing is at ``path``.
        NotAStore: an empty file is there (left as it is).
    """
    if not os.path.lexists(path):
        raise InputNotFound(f"no {kind} at {path}: check the path (reading never creates one)")
    if path.is_file() and file_size(path) == 0 and file_size(_sidecar(path, "-wal")) == 0:
        raise NotAStore(f"{path} is an empty file, not a {kind}; left unchanged")


def require_folder(path: Path, *, kind: str = "ccr store") -> None:
    """Refuse to make a database the user named in a folder that does not exist (``kind`` as ``prepare_file``'s).

    Making folders nobody asked for (a mistyped ``/tmp/tpyo/x.db``) scatters
    stores where no one will look; only the default location's folder is made.

    Raises:
        InputNotFound: the folder ``path`` would go in does not exist.
    """
    if not path.parent.is_dir():
        raise InputNotFound(
            f"no folder {path.parent} for the {kind} {path}: create it first (a {kind} you name is made "
            "only in a folder that exists)"
        )
