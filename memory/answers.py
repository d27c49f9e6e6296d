"""The JSON answers of the public surfaces (the CLI and the MCP tools), made in one place.

Each function validates its arguments as a public surface must (an explicit
``token_budget`` of 0 is unlimited, a negative one is refused), calls the
store, and returns a JSON-ready dict, so the CLI and the MCP server cannot
drift apart.
"""

from __future__ import annotations

from typing import Any

from memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB, check_id, check_text

__all__ = ["forget", "history", "recall", "remember", "supersede"]


def remember(db: MemoryDB, text: str) -> dict[str, Any]:
    """``{id, created_at, created}``.

    Raises:
        The errors of ``MemoryDB.remember``.
    """
    return db.remember(check_text(text)).model_dump(mode="json")


def recall(
    db: MemoryDB, query: str, *, limit: int = DEFAULT_LIMIT, token_budget: int = DEFAULT_TOKEN_BUDGET
) -> dict[str, Any]:
    """``{hits: [{id, text, score, tokens_added, basis, recovery_handle?}]}``.

    Raises:
        The errors of ``MemoryDB.recall``.
    """
    hits = db.recall(query, limit=limit, token_budget=token_budget)
    return {"hits": [h.model_dump(mode="json", exclude_none=True) for h in hits]}


def supersede(db: MemoryDB, old_id: str, text: str) -> dict[str, Any]:
    """The new version, as ``history`` lists it.

    Raises:
        The errors of ``MemoryDB.supersede``.
    """
    return db.supersede(check_id(old_id), check_text(text)).model_dump(mode="json")


def history(db: MemoryDB, mid: str) -> dict[str, Any]:
    """``{versions: [...]}``, oldest first.

    Raises:
        The errors of ``MemoryDB.history``.
    """
    return {"versions": [v.model_dump(mode="json") for v in db.history(check_id(mid))]}


def forget(db: MemoryDB, mid: str) -> dict[str, Any]:
    """``{forgotten: true|false}``.

    Raises:
        The errors of ``MemoryDB.forget``.
    """
    return {"forgotten": db.forget(check_id(mid))}
