"""The memory MCP server's tools: remember, recall, supersede, history and forget, answered from a database.

Kept apart from ``compactor.memory.mcp_server`` because making them loads pydantic
(their argument models) and the database, which ``compactor memory mcp`` does in the
background once it has answered ``initialize`` (``ccr.mcp_stdio.Preloading``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from ccr.mcp_stdio import Tool, ToolError
from compactor.core.errors import CompactorError
from compactor.memory import answers
from compactor.memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB

__all__ = ["LEGACY_PREFIX", "NAME_PREFIX", "tools_for"]

NAME_PREFIX = "cavemem"
"""The tools' names are the seed's: ``cavemem_remember`` and so on."""
LEGACY_PREFIX = "memory"
"""Their names before (``memory_recall`` ...), still answered for one release."""

_ID = "a memory id: mem_ followed by 16 hex digits"


def tools_for(db: MemoryDB) -> list[Tool]:
    """The five ``cavemem_*`` tools, then their old ``memory_*`` names for one release, answering from ``db``.

    ``db`` must stay open while they are used. An old name takes the same
    arguments and answers what it answered before, with ``basis`` added
    (``compactor.memory.answers``: ``legacy``).
    """

    def answer(call: Callable[[], dict[str, Any]]) -> str:
        try:
            return json.dumps(call(), ensure_ascii=False)
        except CompactorError as exc:
            raise ToolError(f"{exc.error_id}: {exc}") from exc

    def tools(prefix: str, legacy: bool) -> list[Tool]:
        def remember(
            text: Annotated[str, Field(description="the fact to keep; at most 256 KiB of UTF-8")],
        ) -> str:
            return answer(lambda: answers.remember(db, text))

        def recall(
            query: Annotated[str, Field(description="what to recall, in words the memory would use")],
            limit: Annotated[int, Field(description="at most this many hits")] = DEFAULT_LIMIT,
            token_budget: Annotated[
                int, Field(description="at most this many tokens of hits; 0 means unlimited; negative is refused")
            ] = DEFAULT_TOKEN_BUDGET,
        ) -> str:
            return answer(lambda: answers.recall(db, query, limit=limit, token_budget=token_budget))

        def supersede(
            id: Annotated[str, Field(description=f"the current memory to replace: {_ID}")],
            text: Annotated[str, Field(description="the new version's text")],
        ) -> str:
            return answer(lambda: answers.supersede(db, id, text, legacy=legacy))

        def history(
            id: Annotated[str, Field(description=f"any version of the memory: {_ID}")],
        ) -> str:
            return answer(lambda: answers.history(db, id, legacy=legacy))

        def forget(
            id: Annotated[str, Field(description=f"the version to delete: {_ID}")],
        ) -> str:
            return answer(lambda: answers.forget(db, id))

        made = []
        for function in (remember, recall, supersede, history, forget):
            name = f"{prefix}_{function.__name__}"
            described = _DESCRIPTIONS[function.__name__]
            if legacy:
                described = f"Old name of {NAME_PREFIX}_{function.__name__}, kept for this release only. {described}"
            made.append(Tool.from_function(function, described, name=name))
        return made

    return [*tools(NAME_PREFIX, legacy=False), *tools(LEGACY_PREFIX, legacy=True)]


_DESCRIPTIONS = {
    "remember": "Keep a fact for later sessions. Answers {id, created_at, created, basis}; the same "
    "text twice is one memory. Text stored only as a superseded version is refused.",
    "recall": "The current memories that best match a query (BM25), within a token budget "
    "(default 2000). Answers {hits: [{id, text, score, tokens_added, basis, recovery_handle?}], basis}; "
    "an off-topic query answers no hits. A hit over 500 tokens, or cut to fit the budget, is its head "
    "plus the whole text's recovery_handle (read it with ccr_retrieve).",
    "supersede": "Replace a current memory by a new version, in one step. Answers {id, supersedes, "
    "created_at, basis}; the old version stays in its history and is never recalled again.",
    "history": "Every version of a memory, oldest first, from any version's id: {history: [...], basis}.",
    "forget": "Delete one version of a memory and link its neighbours; answers {forgotten, basis}. "
    "Forgetting the current version does not bring back the one it replaced.",
}
