"""The memory MCP server: a model remembers, recalls, supersedes and forgets across sessions.

``memory mcp`` runs it over stdio (the plugin's ``.mcp.json`` names it beside
``ccr``). Five tools answer exactly what the CLI prints (``memory.answers``):
``memory_remember``, ``memory_recall``, ``memory_supersede``,
``memory_history`` and ``memory_forget``. A refused call (a negative budget,
an unknown id, text over 256 KiB) is an error result naming the error id,
never a crash of the server.

Built on the project's own thin MCP layer (``compactor.mcp_stdio``, not the
SDK: see there why) and served the way ``ccr mcp`` is
(``ccr.mcp_server.serve_stdio``: the same stdin checks): a stdin that is closed is an error (exit
66), and one that ends without an ``initialize`` request or holds lines that
are not JSON-RPC is an error (exit 65), never a silent success.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from ccr import errors as ccr_errors
from ccr.mcp_server import serve_stdio, server_version
from compactor.errors import CompactorError
from compactor.mcp_stdio import McpServer, Tool, ToolError
from memory import answers
from memory.errors import InputError, InputNotFound
from memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB

__all__ = ["SERVER_INSTRUCTIONS", "SERVER_NAME", "TOOL_NAMES", "build_server", "serve"]

SERVER_NAME = "memory"
TOOL_NAMES = ("memory_remember", "memory_recall", "memory_supersede", "memory_history", "memory_forget")

SERVER_INSTRUCTIONS = (
    "This server keeps memories across sessions. Remember durable facts (decisions, conventions, "
    "what failed and why) with memory_remember; recall them with memory_recall before redoing work; "
    "when a fact changes, memory_supersede the old one instead of adding a contradiction."
)

_ID = "a memory id: mem_ followed by 16 hex digits"


def build_server(db: MemoryDB) -> McpServer:
    """An MCP server (not yet running) whose tools answer from ``db``, which must stay open."""

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
    tools = [Tool.from_function(function, descriptions[function.__name__]) for function in functions]
    return McpServer(SERVER_NAME, SERVER_INSTRUCTIONS, tools, version=server_version())


def serve(db: MemoryDB) -> None:
    """Run the server on stdin/stdout until the client hangs up (``ccr.mcp_server.serve_stdio``).

    Raises:
        InputNotFound: stdin is closed.
        InputError: stdin ended without an ``initialize`` request, or held lines that are not JSON-RPC.
    """
    try:
        serve_stdio(build_server(db))
    except ccr_errors.InputNotFound as exc:
        raise InputNotFound(str(exc)) from exc
    except ccr_errors.InputError as exc:
        raise InputError(str(exc)) from exc
