"""The JSON answers of the public surfaces (the CLI and the MCP tools), made in one place.

Each function validates its arguments as a public surface must (an explicit
``token_budget`` of 0 is unlimited, a negative one is refused), calls the
store, and returns a JSON-ready dict, so the CLI and the MCP server cannot
drift apart.

The shapes are the seed's: every answer carries ``basis: "inferred"`` (its
counts and scores are estimates, never verified savings), ``history``
answers ``{history: [...]}`` and ``supersede`` answers ``{id, supersedes,
created_at}``. ``legacy=True`` adds what the answers held before, for one
release: ``versions`` beside ``history``, and the new version's every field
in ``supersede``. The command line and the MCP tools under their old
``memory_*`` names answer that way; the ``cavemem_*`` tools do not.
"""

from __future__ import annotations

from typing import Any, Literal

from compactor.memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB, check_id, check_text

__all__ = ["BASIS", "forget", "history", "recall", "remember", "supersede"]

BASIS: dict[str, Literal["inferred"]] = {"basis": "inferred"}
"""What every answer carries: its numbers are inferred."""


def remember(db: MemoryDB, text: str) -> dict[str, Any]:
    """``{id, created_at, created, basis}``.

    Raises:
        The errors of ``MemoryDB.remember``.
    """
    return {**db.remember(check_text(text)).model_dump(mode="json"), **BASIS}


def recall(
    db: MemoryDB, query: str, *, limit: int = DEFAULT_LIMIT, token_budget: int = DEFAULT_TOKEN_BUDGET
) -> dict[str, Any]:
    """``{hits: [{id, text, score, tokens_added, basis, recovery_handle?}], damaged?, basis}``.

    ``damaged`` lists, only when there are any, the ids of matching memories
    left out because their text no longer matches their id.

    Raises:
        The errors of ``MemoryDB.recall``.
    """
    hits = db.recall(query, limit=limit, token_budget=token_budget)
    answer: dict[str, Any] = {"hits": [h.model_dump(mode="json", exclude_none=True) for h in hits]}
    if db.damaged:
        answer["damaged"] = sorted(db.damaged)
    return {**answer, **BASIS}


def supersede(db: MemoryDB, old_id: str, text: str, *, legacy: bool = False) -> dict[str, Any]:
    """``{id, supersedes, created_at, basis}`` of the new version (``legacy``: all its fields).

    Raises:
        The errors of ``MemoryDB.supersede``.
    """
    new = db.supersede(check_id(old_id), check_text(text)).model_dump(mode="json")
    if legacy:
        return {**new, **BASIS}
    return {"id": new["id"], "supersedes": new["supersedes"], "created_at": new["created_at"], **BASIS}


def history(db: MemoryDB, mid: str, *, legacy: bool = False) -> dict[str, Any]:
    """``{history: [...], basis}``, oldest first (``legacy``: the same list as ``versions`` too).

    Raises:
        The errors of ``MemoryDB.history``.
    """
    versions = [v.model_dump(mode="json") for v in db.history(check_id(mid))]
    return {"history": versions, **({"versions": versions} if legacy else {}), **BASIS}


def forget(db: MemoryDB, mid: str) -> dict[str, Any]:
    """``{forgotten: true|false, basis}``.

    Raises:
        The errors of ``MemoryDB.forget``.
    """
    return {"forgotten": db.forget(check_id(mid)), **BASIS}
