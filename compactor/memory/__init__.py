"""compactor.memory: what an agent learned, kept across sessions.

::

    from compactor.memory import open_memory
    with open_memory() as mem:                  # $COMPACTOR_HOME/memory.db
        mem.remember("The payments service retries 3 times, then gives up")
        hits = mem.recall("payments retries")  # BM25, within 2,000 tokens

Names are exported lazily, so that ``compactor memory --help`` starts without loading
the store, pydantic or the token counter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from compactor.memory.errors import (
        AlreadyStored,
        BrokenChain,
        DamagedMemory,
        InvalidRequest,
        InvalidText,
        MemoriesError,
        MemoryConflict,
        MemoryNotFound,
        NotCurrent,
        StoreError,
        SupersededText,
        TextTooLarge,
    )
    from compactor.memory.models import Hit, Memory, Remembered
    from compactor.memory.store import (
        DEFAULT_HIT_TOKENS,
        DEFAULT_LIMIT,
        DEFAULT_THRESHOLD,
        DEFAULT_TOKEN_BUDGET,
        MAX_TEXT_BYTES,
        MemoryDB,
        default_memory_path,
        memory_id,
        open_memory,
    )

__all__ = [
    "AlreadyStored",
    "BrokenChain",
    "DEFAULT_HIT_TOKENS",
    "DEFAULT_LIMIT",
    "DEFAULT_THRESHOLD",
    "DEFAULT_TOKEN_BUDGET",
    "DamagedMemory",
    "Hit",
    "InvalidRequest",
    "InvalidText",
    "MAX_TEXT_BYTES",
    "MemoriesError",
    "Memory",
    "MemoryConflict",
    "MemoryDB",
    "MemoryNotFound",
    "NotCurrent",
    "Remembered",
    "StoreError",
    "SupersededText",
    "TextTooLarge",
    "default_memory_path",
    "memory_id",
    "open_memory",
]

_EXPORTS: dict[str, str] = {
    **{
        name: "compactor.memory.errors"
        for name in (
            "AlreadyStored",
            "BrokenChain",
            "DamagedMemory",
            "InvalidRequest",
            "InvalidText",
            "MemoriesError",
            "MemoryConflict",
            "MemoryNotFound",
            "NotCurrent",
            "StoreError",
            "SupersededText",
            "TextTooLarge",
        )
    },
    **{name: "compactor.memory.models" for name in ("Hit", "Memory", "Remembered")},
    **{
        name: "compactor.memory.store"
        for name in (
            "DEFAULT_HIT_TOKENS",
            "DEFAULT_LIMIT",
            "DEFAULT_THRESHOLD",
            "DEFAULT_TOKEN_BUDGET",
            "MAX_TEXT_BYTES",
            "MemoryDB",
            "default_memory_path",
            "memory_id",
            "open_memory",
        )
    },
}
"""Public name -> module defining it, imported on first use."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
