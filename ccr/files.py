"""Files a command reads or writes for the user: a read never blocks, a write never destroys.

Shared by every program of the project (``ccr`` and ``compactor``, with ``compactor memory``)
and importing nothing but ``ccr``'s own modules.

Reading (``open_regular``, ``read_regular``): the file is opened with
``O_NONBLOCK`` and checked with ``fstat`` before a byte is read, so a FIFO,
a device (``/dev/zero``, ``/dev/urandom``), a socket or a folder is refused
at once instead of blocking or reading forever; a size bound refuses a file
larger than the caller can hold.

Writing (``check_output``, ``write_output``, ``output_file``): one rule for
every output a user names. Refused (``OutputRefused``, exit 2), before any
work and again just before the rename:

- a path that is, or resolves to, an SQLite database (a ccr store, a memory
  database, anyone's), found by its header and not only by its name, or a
  sidecar (``-wal``, ``-shm``, ``-journal``) of one; and the configured
  store and memory database even while they do not exist yet;
- a path that is, or resolves to, an input of the command (same inode,
  through links);
- anything that is not a regular file: a device, a FIFO, a socket, a folder.

The bytes go to a temporary file created 0600 in the target's folder, are
flushed to disk, and the temporary file is renamed over the final name: a
rename replaces a symlink at that name rather than writing through it, and a
reader (or a ``kill -9``) never sees half a file. Missing folders, where
the caller asks for them, are made 0700 whatever the umask. A write the file
system refuses (a read-only folder, a full disk) is an ``OSError`` for the
caller to label (exit 73; ``describe_os_error`` names a full disk).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import BinaryIO

from ccr.errors import OutputRefused
from ccr.paths import default_store_path
from ccr.sqlite_kit.files import SIDECARS, SQLITE_HEADER

__all__ = [
    "MEMORY_DB_ENV",
    "FileTooLarge",
    "NotRegularFile",
    "check_output",
    "check_output_folder",
    "describe_mode",
    "describe_os_error",
    "known_databases",
    "open_regular",
    "output_file",
    "private_dir",
    "read_regular",
    "write_output",
]

MEMORY_DB_ENV = "COMPACTOR_MEMORY_DB"
"""Names the memory database (else ``$COMPACTOR_HOME/memory.db``); read here without importing ``compactor.memory``."""

PathLike = str | os.PathLike[str]


class NotRegularFile(OSError):
    """A file to read is a FIFO, device, socket or folder; it was not read (``strerror`` says which)."""


class FileTooLarge(OSError):
    """A file to read is larger than the reader's bound; nothing was read."""


def describe_mode(mode: int) -> str:
    """What kind of file ``mode`` (an ``st_mode``) is, in words."""
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def describe_os_error(exc: OSError) -> str:
    """An ``OSError`` in words for a message, a full disk named as such."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk is full ({exc.strerror or exc})"
    return str(exc.strerror or exc)


# -- reading -----------------------------------------------------------------------------


def open_regular(path: PathLike, *, max_bytes: int | None = None, buffering: int = -1) -> BinaryIO:
    """``path`` opened for binary reading, only if it is a regular file (no more than ``max_bytes``).

    ``buffering`` is ``open``'s (the default picks the usual buffer size).

    The open itself cannot block (``O_NONBLOCK``); the check is made on the
    descriptor (``fstat``), so the file checked is the file read.

    Raises:
        FileNotFoundError, PermissionError, OSError: the file cannot be opened.
        IsADirectoryError: it is a folder.
        NotRegularFile: it is a FIFO, device or socket.
        FileTooLarge: it holds more than ``max_bytes``.
    """
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(
                errno.EINVAL,
                f"is {describe_mode(st.st_mode)}, not a regular file; not read (it could block or never end)",
                os.fspath(path),
            )
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLarge(
                errno.EFBIG,
                f"holds {st.st_size:,} bytes, over the {max_bytes:,}-byte limit; not read",
                os.fspath(path),
            )
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb", buffering=buffering)
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: PathLike, *, max_bytes: int) -> bytes:
    """The whole of the regular file ``path``, refused above ``max_bytes`` (also if it grows while read).

    Raises:
        the errors of ``open_regular``.
    """
    with open_regular(path, max_bytes=max_bytes) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(errno.EFBIG, f"grew past the {max_bytes:,}-byte limit while read; not read", os.fspath(path))
    return data


# -- writing -----------------------------------------------------------------------------


def known_databases(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The store and memory database the settings name, whether or not they exist yet."""
    env = os.environ if environ is None else environ
    store = default_store_path(env)
    memory = env.get(MEMORY_DB_ENV, "").strip()
    return [store, Path(memory).expanduser() if memory else store.with_name("memory.db")]


def check_output(
    path: PathLike,
    *,
    inputs: Iterable[PathLike | None] = (),
    protected: Iterable[PathLike | None] = (),
    what: str = "output",
) -> Path:
    """Refuse an output path that would destroy something (see the module's rule); return it as a Path.

    ``inputs`` are the files the command reads; ``protected`` more files
    (such as a ``--store`` given on the command line) that must never be
    replaced, besides the configured store and memory database.

    Raises:
        OutputRefused: the path is a database, a sidecar of one, an input,
            or not a regular file (also through a symlink).
    """
    target = Path(path)
    if not target.name or target.name in (".", ".."):
        raise _refused(target, what, "it names a folder, not a file")
    try:
        link: os.stat_result | None = os.lstat(target)
    except OSError:
        link = None  # nothing there, or an unusable folder: the write itself will say (exit 73)
    followed = _stat(target) if link is not None else None
    for st in (link, followed):
        if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise _refused(target, what, f"it is {describe_mode(st.st_mode)}, not a regular file")
    if followed is not None and _is_sqlite(target):
        raise _refused(target, what, "it is an SQLite database (a store or memory database, by its header)")
    base = _sidecar_base(target)
    if base is not None and (_is_sqlite(base) or _same_name(base, _protected(protected))):
        raise _refused(target, what, f"it is a sidecar of the database {base}")
    for guarded, reason in (
        ((p for p in inputs if p is not None), "it is an input of this command"),
        (_protected(protected), "it is a store or memory database"),
    ):
        for other in guarded:
            if _same_file(target, Path(other), followed):
                raise _refused(target, what, f"{reason} ({other})")
    return target


def check_output_folder(
    path: PathLike,
    *,
    inputs: Iterable[PathLike | None] = (),
    protected: Iterable[PathLike | None] = (),
    what: str = "output folder",
) -> Path:
    """Refuse an output folder that is, or would take the name of, a database, a sidecar of one or an input.

    What is written inside it follows ``check_output``. Whether an existing
    path is a usable folder is the caller's to say.

    Raises:
        OutputRefused: as ``check_output``, for the folder's own name.
    """
    folder = Path(path)
    st = _stat(folder)
    if st is not None and stat.S_ISDIR(st.st_mode):
        return folder
    if st is not None and stat.S_ISREG(st.st_mode) and _is_sqlite(folder):
        raise _refused(folder, what, "it is an SQLite database (a store or memory database, by its header)")
    base = _sidecar_base(folder)
    guarded = _protected(protected)
    if base is not None and (_is_sqlite(base) or _same_name(base, guarded)):
        raise _refused(folder, what, f"it is a sidecar of the database {base}")
    for others, reason in (
        ([Path(p) for p in inputs if p is not None], "it is an input of this command"),
        (guarded, "it is a store or memory database"),
    ):
        for other in others:
            if _same_file(folder, other, st):
                raise _refused(folder, what, f"{reason} ({other})")
    return folder


def write_output(
    path: PathLike,
    chunks: Iterable[bytes],
    *,
    inputs: Iterable[PathLike | None] = (),
    protected: Iterable[PathLike | None] = (),
    what: str = "output",
    make_folders: bool = False,
) -> None:
    """Write ``chunks`` to ``path`` whole or not at all, by the module's rule (``make_folders``: 0700).

    Raises:
        OutputRefused: see ``check_output``.
        OSError: the file system refused (the final name is then unchanged,
            and no temporary file is left).
    """
    with output_file(path, inputs=inputs, protected=protected, what=what, make_folders=make_folders) as handle:
        for chunk in chunks:
            handle.write(chunk)


@contextlib.contextmanager
def output_file(
    path: PathLike,
    *,
    inputs: Iterable[PathLike | None] = (),
    protected: Iterable[PathLike | None] = (),
    what: str = "output",
    make_folders: bool = False,
) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through; it takes the final name only if the block ends normally.

    ``make_folders`` makes missing folders above it (0700); otherwise a missing folder is an ``OSError``.

    Raises:
        OutputRefused: see ``check_output`` (checked on entry and again before the rename).
        OSError: the file system refused; the final name is unchanged and no temporary file is left.
    """
    inputs, protected = list(inputs), list(protected)
    target = check_output(path, inputs=inputs, protected=protected, what=what)
    folder = target.parent
    if make_folders:
        private_dir(folder)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        check_output(target, inputs=inputs, protected=protected, what=what)
        os.rename(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(folder)


def private_dir(path: PathLike) -> Path:
    """Make ``path`` and any missing parents as folders of mode 0700 (whatever the umask); return it.

    Folders that already exist are left as they are.

    Raises:
        OSError: a folder cannot be made, or a part of the path is not a folder.
    """
    folder = Path(path)
    missing: list[Path] = []
    probe = folder
    while not os.path.isdir(probe):
        if os.path.lexists(probe):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(probe))
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for part in reversed(missing):
        try:
            os.mkdir(part, 0o700)
        except FileExistsError:
            if not os.path.isdir(part):
                raise
            continue
        os.chmod(part, 0o700)
    return folder


# -- helpers -----------------------------------------------------------------------------


def _refused(target: Path, what: str, reason: str) -> OutputRefused:
    return OutputRefused(f"{target}: refusing to write the {what} there: {reason}; nothing was changed")


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None  # a dangling symlink: the rename replaces the link itself


def _is_sqlite(path: Path) -> bool:
    """Whether ``path`` (through links) starts with the SQLite header; an unreadable file counts as one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return False
    except OSError:
        return True  # cannot prove it is not a database: leave it alone
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return os.pread(fd, len(SQLITE_HEADER), 0) == SQLITE_HEADER
    except OSError:
        return True
    finally:
        os.close(fd)


def _sidecar_base(path: Path) -> Path | None:
    for suffix in SIDECARS:
        if path.name.endswith(suffix) and len(path.name) > len(suffix):
            return path.with_name(path.name[: -len(suffix)])
    return None


def _protected(extra: Iterable[PathLike | None]) -> list[Path]:
    return [*known_databases(), *(Path(p) for p in extra if p is not None)]


def _same_name(path: Path, others: Iterable[Path]) -> bool:
    mine = _resolved(path)
    return any(_resolved(other) == mine for other in others)


def _same_file(target: Path, other: Path, target_stat: os.stat_result | None) -> bool:
    if _resolved(target) == _resolved(other):
        return True
    if target_stat is None:
        return False
    other_stat = _stat(other)
    return other_stat is not None and (other_stat.st_dev, other_stat.st_ino) == (target_stat.st_dev, target_stat.st_ino)


def _resolved(path: Path) -> Path:
    try:
        return Path(path).expanduser().resolve(strict=False)
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def _sync_folder(folder: Path) -> None:
    """Make the rename durable; a folder that cannot be opened or synced (some file systems) is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
