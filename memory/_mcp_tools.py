"""The memory MCP server's tools: remember, recall, supersede, history and forget, answered from a database.

Kept apart from ``memory.mcp_server`` because making them loads pydantic
(their argument models) and the database, which ``memory mcp`` does in the
background once it has answered ``initialize`` (``compactor.mcp_stdio.Preloading``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from compactor.errors import CompactorError
from compactor.mcp_stdio import Tool, ToolError
from memory import answers
from memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB

__all__ = ["tools_for"]

_ID = "a memory id: mem_ followed by 16 hex digits"


def tools_for(db: MemoryDB) -> list[Tool]:
    """The five tools, answering from ``db`` (which must stay open while they are used)."""

    def answer(call: Callable[[], dict[str, Any]]) -> str:
        try:
            return json.dumps(call(), ensure_ascii=False)
        except CompactorError as exc:
            raise ToolError(f"{exc.error_id}: {exc}") from exc

    def memory_remember(
        text: Annotated[str, Field(description="the fact to keep; at most 256 KiB of UTF-8")],
    ) -> str:
        return answer(lambda: answers.remember(db, text))

    def memory_recall(
        query: Annotated[str, Field(description="what to recall, in words the memory would use")],
        limit: Annotated[int, Field(description="at most this many hits")] = DEFAULT_LIMIT,
        token_budget: Annotated[
            int, Field(description="at most this many tokens of hits; 0 means unlimited; negative is refused")
        ] = DEFAULT_TOKEN_BUDGET,
    ) -> str:
        return answer(lambda: answers.recall(db, query, limit=limit, token_budget=token_budget))

    def memory_supersede(
        id: Annotated[str, Field(description=f"the current memory to replace: {_ID}")],  # noqa: A002
        text: Annotated[str, Field(description="the new version's text")],
    ) -> str:
        return answer(lambda: answers.supersede(db, id, text))

    def memory_history(
        id: Annotated[str, Field(description=f"any version of the memory: {_ID}")],  # noqa: A002
    ) -> str:
        return answer(lambda: answers.history(db, id))

    def memory_forget(
        id: Annotated[str, Field(description=f"the version to delete: {_ID}")],  # noqa: A002
    ) -> str:
        return answer(lambda: answers.forget(db, id))

    descriptions = {
        "memory_remember": "Keep a fact for later sessions. Answers {id, created_at, created}; the same "
        "text twice is one memory. Text stored only as a superseded version is refused.",
        "memory_recall": "The current memories that best match a query (BM25), within a token budget "
        "(default 2000). Answers {hits: [{id, text, score, tokens_added, basis, recovery_handle?}]}; an "
        "off-topic query answers no hits. A hit cut to fit names the whole text's recovery_handle "
        "(read it with ccr_retrieve).",
        "memory_supersede": "Replace a current memory by a new version, in one step. Answers the new "
        "version; the old one stays in its history and is never recalled again.",
        "memory_history": "Every version of a memory, oldest first, from any version's id.",
        "memory_forget": "Delete one version of a memory and link its neighbours; answers {forgotten}. "
        "Forgetting the current version does not bring back the one it replaced.",
    }
    functions = (memory_remember, memory_recall, memory_supersede, memory_history, memory_forget)
    return [Tool.from_function(function, descriptions[function.__name__]) for function in functions]
