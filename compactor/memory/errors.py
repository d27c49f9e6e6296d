"""Errors of the memory store, all under the project's root ``compactor.core.errors.CompactorError``.

::

    MemoriesError                        root of the memory store's own errors
    ├── MemoryConfigError (ConfigError)  COMPACTOR_MEMORY_DB names no usable path (exit 2)
    ├── InvalidText (runtime)            empty, whitespace-only or not UTF-8 text (exit 65)
    │   └── TextTooLarge                 text over 256 KiB (``memory_too_large``, exit 65)
    ├── MemoryNotFound (runtime)         no memory has this id (exit 66)
    ├── MemoryConflict (runtime)         the request contradicts what is stored (exit 65)
    │   ├── SupersededText               the text exists only as a superseded version
    │   ├── NotCurrent                   the memory to supersede is no longer current
    │   └── AlreadyStored                the new version's text is already stored
    ├── BrokenChain (runtime)            a version chain is broken or has a cycle (exit 65)
    └── DamagedMemory (runtime)          a stored text no longer matches its id (exit 65)

The shared concepts the memory store raises are ``ccr.root_errors``'
classes (re-exported by ``compactor.core.errors``), re-exported here as
themselves: ``InvalidRequest`` (a bad id, query, limit, budget or threshold,
exit 2), ``InputError`` (the command line's input cannot be read, exit 65),
``InputNotFound`` (stdin is closed, exit 66), ``StoreError`` (the database
could not be opened, read or written, exit 73), ``UnsafeStorePath`` and
``NotAStore``; their messages say "memory database". ``except StoreError``
catches the memory store's errors and ccr's alike, and ``except
CompactorError`` everything the memory store raises; ``MemoriesError``
catches only its own concepts. Each class has a stable ``error_id`` and
``exit_code`` for the command line and the MCP tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from compactor.core.errors import (
    CompactorError,
    CompactorRuntimeError,
    ConfigError,
    InputError,
    InputNotFound,
    InvalidRequest,
    NotAStore,
    StoreError,
    UnsafeStorePath,
)

__all__ = [
    "AlreadyStored",
    "BrokenChain",
    "DamagedMemory",
    "InputError",
    "InputNotFound",
    "InvalidRequest",
    "InvalidText",
    "MemoriesError",
    "MemoryConfigError",
    "MemoryConflict",
    "MemoryNotFound",
    "NotAStore",
    "NotCurrent",
    "StoreError",
    "SupersededText",
    "TextTooLarge",
    "UnsafeStorePath",
]


class MemoriesError(CompactorError):
    """Root of the memory store's own errors (the shared concepts it raises are not ``MemoriesError``)."""

    error_id = "memory_error"
    exit_code = 1


class MemoryConfigError(MemoriesError, ConfigError):
    """The configured memory database path is unusable (for example empty)."""

    error_id = "memory_config_invalid"
    exit_code = 2


class InvalidText(MemoriesError, CompactorRuntimeError):
    """The text to remember is empty, whitespace only, or not UTF-8."""

    error_id = "memory_invalid_text"
    exit_code = 65


class TextTooLarge(InvalidText):
    """The text to remember is over 256 KiB of UTF-8."""

    error_id = "memory_too_large"


class MemoryNotFound(MemoriesError, CompactorRuntimeError):
    """No memory has this id."""

    error_id = "memory_not_found"
    exit_code = 66


class MemoryConflict(MemoriesError, CompactorRuntimeError):
    """The request contradicts what is stored; nothing was changed."""

    error_id = "memory_conflict"
    exit_code = 65


class SupersededText(MemoryConflict):
    """The text is stored only as a superseded version, which recall never returns."""

    error_id = "memory_superseded"


class NotCurrent(MemoryConflict):
    """The memory to supersede has already been superseded."""

    error_id = "memory_not_current"


class AlreadyStored(MemoryConflict):
    """The new version's text is the old one's, or is already stored as another memory."""

    error_id = "memory_exists"


class BrokenChain(MemoriesError, CompactorRuntimeError):
    """A version chain points at a missing memory, disagrees with itself, or loops."""

    error_id = "memory_broken_chain"
    exit_code = 65


class DamagedMemory(MemoriesError, CompactorRuntimeError):
    """A stored memory's text no longer matches its id (it was changed on disk): it is never given out as intact.

    ``ids`` names the damaged memories; ``compactor memory forget ID`` removes one.
    """

    error_id = "memory_damaged"
    exit_code = 65

    def __init__(self, message: str, ids: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ids = list(ids)
