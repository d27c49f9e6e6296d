"""The memory MCP server: a model remembers, recalls, supersedes and forgets across sessions.

``memory mcp`` runs it over stdio (the plugin's ``.mcp.json`` names it beside
``ccr``). Five tools answer exactly what the CLI prints (``memory.answers``):
``memory_remember``, ``memory_recall``, ``memory_supersede``,
``memory_history`` and ``memory_forget``. A refused call (a negative budget,
an unknown id, text over 256 KiB) is an error result naming the error id,
never a crash of the server.

Built on the official ``mcp`` SDK (the ``mcp`` extra), imported only when a
server is built; both generations are accepted (``MCPServer`` 2.x,
``FastMCP`` 1.x). The server only ends well when its client spoke MCP:
``serve`` watches stdin on the way in, and a stdin that is closed, or that
ends without one JSON-RPC message, is an error (exit 66 or 65) instead of a
silent success.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import threading
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from compactor.errors import CompactorError, ConfigError
from memory import answers
from memory.errors import InputError, InputNotFound
from memory.store import DEFAULT_LIMIT, DEFAULT_TOKEN_BUDGET, MemoryDB

__all__ = ["SERVER_INSTRUCTIONS", "SERVER_NAME", "TOOL_NAMES", "build_server", "require_sdk", "serve"]

SERVER_NAME = "memory"
TOOL_NAMES = ("memory_remember", "memory_recall", "memory_supersede", "memory_history", "memory_forget")

SERVER_INSTRUCTIONS = (
    "This server keeps memories across sessions. Remember durable facts (decisions, conventions, "
    "what failed and why) with memory_remember; recall them with memory_recall before redoing work; "
    "when a fact changes, memory_supersede the old one instead of adding a contradiction."
)

_SDK_GENERATIONS = (("mcp.server.mcpserver", "MCPServer"), ("mcp.server.fastmcp", "FastMCP"))

_ID = "a memory id: mem_ followed by 16 hex digits"


def _sdk() -> tuple[Callable[..., Any], type[Exception]]:
    """The SDK's server class and the exception that becomes an error result.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
    """
    for server_module, server_class in _SDK_GENERATIONS:
        try:
            server = getattr(importlib.import_module(server_module), server_class)
            tool_error = importlib.import_module(f"{server_module}.exceptions").ToolError
        except (ImportError, AttributeError):
            continue
        return server, tool_error
    raise ConfigError("the memory MCP server needs the mcp package: pip install 'compactor[mcp]'")


def require_sdk() -> None:
    """Check that the ``mcp`` package can be imported, before anything is opened.

    Raises:
        ConfigError: it cannot.
    """
    _sdk()


def build_server(db: MemoryDB) -> Any:
    """An MCP server (not yet running) whose tools answer from ``db``, which must stay open.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
    """
    server_class, tool_error = _sdk()
    server = server_class(SERVER_NAME, instructions=SERVER_INSTRUCTIONS, log_level="WARNING")
    options: dict[str, Any] = {}
    if "structured_output" in inspect.signature(server.tool).parameters:
        options["structured_output"] = False

    def answer(call: Callable[[], dict[str, Any]]) -> str:
        try:
            return json.dumps(call(), ensure_ascii=False)
        except CompactorError as exc:
            raise tool_error(f"{exc.error_id}: {exc}") from exc

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
    for tool in (memory_remember, memory_recall, memory_supersede, memory_history, memory_forget):
        server.tool(name=tool.__name__, description=descriptions[tool.__name__], **options)(tool)
    return server


def serve(db: MemoryDB) -> None:
    """Run the server on stdin/stdout until the client hangs up.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
        InputNotFound: stdin is closed, or ended before any message.
        InputError: stdin ended without a single JSON-RPC message.
    """
    server = build_server(db)
    watch = _StdinWatch.install()
    server.run("stdio")
    watch.check()


class _StdinWatch:
    """Relays stdin to the server through a pipe, noting whether any line was a JSON-RPC message."""

    def __init__(self, source: int) -> None:
        self.lines = 0
        self.messages = 0
        self._source = source
        read_end, self._sink = os.pipe()
        os.dup2(read_end, 0)
        os.close(read_end)
        self._done = threading.Event()
        threading.Thread(target=self._relay, name="memory-mcp-stdin", daemon=True).start()

    @classmethod
    def install(cls) -> _StdinWatch:
        """Put the relay in front of the server's stdin.

        Raises:
            InputNotFound: stdin is closed.
        """
        if sys.stdin is None:
            raise InputNotFound("stdin is closed: an MCP client must write JSON-RPC messages to it")
        try:
            source = os.dup(0)
        except OSError as exc:
            raise InputNotFound(f"stdin is closed: {exc.strerror or exc}") from exc
        return cls(source)

    def check(self) -> None:
        """After the server stopped: fine if the client sent at least one message.

        Raises:
            InputNotFound: stdin ended before anything arrived.
            InputError: lines arrived, none of them a JSON-RPC message.
        """
        self._done.wait(timeout=1.0)
        if self.messages:
            return
        if not self.lines:
            raise InputNotFound("stdin ended before any MCP message arrived")
        raise InputError(f"stdin carried {self.lines} line(s) and not one JSON-RPC message: is this an MCP client?")

    def _relay(self) -> None:
        try:
            with os.fdopen(self._source, "rb", closefd=True) as source, os.fdopen(self._sink, "wb", 0) as sink:
                for line in source:
                    if line.strip():
                        self.lines += 1
                        self.messages += _is_message(line)
                    try:
                        sink.write(line)
                    except BrokenPipeError:
                        break
        except OSError:
            pass
        finally:
            self._done.set()


def _is_message(line: bytes) -> bool:
    try:
        value = json.loads(line)
    except ValueError:
        return False
    return isinstance(value, dict) and value.get("jsonrpc") == "2.0"
