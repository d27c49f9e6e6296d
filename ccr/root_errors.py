"""The root of every error the project raises, and the error concepts several packages share.

::

    CompactorError                  root of the whole project (ccr, skills, attachments, compactor)
    ├── UsageError                  the caller asked for something invalid (bad config, bad flag)
    │   ├── ConfigError             a setting or environment variable has a bad value
    │   └── InvalidRequest          a malformed request: a bad id, range, query or limit (id ``usage_error``)
    └── CompactorRuntimeError       valid request, failed while running
        ├── OutputWriteError        an output file could not be written (exit 73)
        ├── InputError              an input cannot be read (exit 65)
        │   └── InputNotFound       an input file does not exist, or stdin is closed (exit 66)
        ├── InputInvalid            an input is not what it must be, e.g. not UTF-8 (exit 65)
        └── StoreError              a store could not be opened, read or written (exit 73)
            ├── UnsafeStorePath     the store path is a symlink or not a regular file
            └── NotAStore           the file is not a store of that kind; left as it was

It lives in ``ccr``, the lowest package, so that every package's errors
derive from it and ``except compactor.CompactorError`` (the same class,
re-exported by ``compactor`` and ``compactor.core.errors``) catches every
error any package raises on purpose. Each concept here is one class: a
package that raises it re-exports this very class (``ccr.errors.StoreError``
and ``compactor.memory.errors.StoreError`` are ``StoreError``), so the
concept has one ``error_id`` whichever package raised it, and the message
says which store or input it was. Each class carries a stable ``error_id``
that the command lines print to stderr, and an ``exit_code`` they exit with.

Every usage mistake, whether argparse, a command or a library call found it,
reads ``usage_error`` (exit 2); a subclass names its own id only for a
concept a user acts on differently (``config_invalid``, ``output_refused``).
The classes are the one source of the ids: ``error_table()`` lists them.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CompactorError",
    "CompactorRuntimeError",
    "ConfigError",
    "ErrorRow",
    "InputError",
    "InputInvalid",
    "InputNotFound",
    "InvalidRequest",
    "NotAStore",
    "OutputWriteError",
    "StoreError",
    "UnsafeStorePath",
    "UsageError",
    "error_table",
]


class CompactorError(Exception):
    """Root of every error raised by the project."""

    error_id = "compactor_error"
    exit_code = 1


class UsageError(CompactorError):
    """The caller asked for something invalid."""

    error_id = "usage_error"
    exit_code = 2


class ConfigError(UsageError):
    """A setting, file or environment variable holds a bad value."""

    error_id = "config_invalid"


class InvalidRequest(UsageError):
    """A request is malformed: a bad id, range, query, limit or state; nothing was touched.

    A usage mistake like any other, so it has ``UsageError``'s id: a bad ``--limit`` reads the
    same whether argparse or the library found it.
    """


class CompactorRuntimeError(CompactorError):
    """A valid request failed while running."""

    error_id = "runtime_error"


class OutputWriteError(CompactorRuntimeError):
    """An output file (a page, a transcript, an archive) could not be written: the file system refused."""

    error_id = "output_write_failed"
    exit_code = 73


class InputError(CompactorRuntimeError):
    """An input given to a command line (a file, stdin) cannot be read."""

    error_id = "input_unreadable"
    exit_code = 65


class InputNotFound(InputError):
    """An input file does not exist or cannot be opened (or stdin is closed)."""

    error_id = "input_not_found"
    exit_code = 66


class InputInvalid(CompactorRuntimeError):
    """An input is not what it must be (for example, not UTF-8 text)."""

    error_id = "input_invalid"
    exit_code = 65


class StoreError(CompactorRuntimeError):
    """A store (ccr's, the memory database) could not be opened, read or written."""

    error_id = "store_error"
    exit_code = 73


class UnsafeStorePath(StoreError):
    """A store path is a symlink or not a regular file, or changed while opening."""

    error_id = "unsafe_store_path"


class NotAStore(StoreError):
    """A store path names a file that is not a store of that kind; it was left as it was."""

    error_id = "not_a_store"


class ErrorRow(NamedTuple):
    """One error id: the exit code the command lines exit with, and the classes that carry it.

    A named tuple, not a dataclass: this module loads with every command line, the status line
    included, which must not pay for importing ``dataclasses``.
    """

    error_id: str
    exit_code: int
    classes: tuple[str, ...]
    """``module.Class`` of every class with this id, the one that defines it first."""
    summary: str
    """The first line of the defining class's docstring."""


def error_table() -> list[ErrorRow]:
    """Every error id with its exit code, from the ``CompactorError`` classes defined so far, sorted by id.

    The classes are the one source: ids and exit codes are read from them,
    never written down twice. Only classes whose modules are imported are
    seen; ``compactor.cli.error_table`` imports every package's errors first.
    """
    import inspect

    classes: dict[str, list[type[CompactorError]]] = {}
    pending: list[type[CompactorError]] = [CompactorError]
    seen: set[type[CompactorError]] = set()
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        classes.setdefault(cls.error_id, []).append(cls)
        pending.extend(cls.__subclasses__())
    rows = []
    for error_id, members in classes.items():
        # The class that set the id (the others inherit it), then the rest by name.
        members.sort(key=lambda c: ("error_id" not in vars(c), c.__module__, c.__qualname__))
        first = members[0]
        doc = inspect.getdoc(first) or ""
        rows.append(
            ErrorRow(
                error_id=error_id,
                exit_code=first.exit_code,
                classes=tuple(f"{c.__module__}.{c.__qualname__}" for c in members),
                summary=doc.splitlines()[0] if doc else "",
            )
        )
    return sorted(rows, key=lambda row: row.error_id)
