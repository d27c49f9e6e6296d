"""The CCR MCP server: lets a model bring back what a compaction dropped.

``ccr mcp`` runs it over stdio for Claude Code (the plugin's ``.mcp.json``
names it). Two tools:

- ``ccr_retrieve(handle, query=None, lines=None, bytes=None)`` answers like
  the agent-loop recovery tool (``compactor.recovery.recover``): the whole
  original, the best-matching units for a query, or a line or byte range. A
  bad or unknown handle is an error result the model can read, never a crash
  of the server. Its name is one of the recovery tools dedup leaves alone
  (Claude Code calls it ``mcp__<server>__ccr_retrieve``, which matches too).
- ``ccr_stats()``: the store's statistics as JSON.

The server is built with the official ``mcp`` SDK (an optional extra,
``pip install 'compactor[mcp]'``), imported only when a server is built, so
the rest of ``ccr`` works without it. Both SDK generations are accepted:
``MCPServer`` (2.x) and ``FastMCP`` (1.x).
"""

from __future__ import annotations

import importlib
import inspect
import io
import json
import os
import signal
import sys
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import Field

from ccr.store import Store
from compactor.errors import ConfigError
from compactor.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME, recover

__all__ = [
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "STATS_TOOL_NAME",
    "StdinWatch",
    "build_server",
    "load_sdk",
    "require_sdk",
    "retrieve_text",
    "serve",
    "serve_stdio",
    "stats_text",
]

SERVER_NAME = "ccr"
"""The server's name; Claude Code prefixes its tools with ``mcp__<name>__``."""

STATS_TOOL_NAME = "ccr_stats"

SERVER_INSTRUCTIONS = (
    "This server holds the exact text that context compaction removed from the conversation. "
    "When the conversation shows a marker such as <<ccr:ccr_...>>, call ccr_retrieve with it "
    "to read the original instead of guessing or running the tool again."
)

_STATS_DESCRIPTION = (
    "How much the recovery store holds: entries, payload bytes, byte budget and whether it is full, as JSON."
)

_SDK_GENERATIONS = (("mcp.server.mcpserver", "MCPServer"), ("mcp.server.fastmcp", "FastMCP"))
"""Where each generation of the SDK keeps its high-level server: 2.x first, then 1.x."""

_PROPERTIES: dict[str, Any] = RECOVERY_TOOL["input_schema"]["properties"]


def retrieve_text(
    store: Store,
    handle: str,
    query: str | None = None,
    lines: list[int] | None = None,
    byte_range: list[int] | None = None,
) -> tuple[str, bool]:
    """One ``ccr_retrieve`` call answered from ``store``: ``(text, is_error)``.

    Arguments left out are not passed on, so the answer is exactly what the
    agent-loop recovery tool gives for the same call.
    """
    call: dict[str, Any] = {"handle": handle}
    for key, value in (("query", query), ("lines", lines), ("bytes", byte_range)):
        if value is not None:
            call[key] = value
    answer = recover(store, call)
    return answer.content, answer.is_error


def stats_text(store: Store) -> str:
    """The store's statistics as one JSON object."""
    return store.stats().model_dump_json()


def load_sdk(who: str = "the CCR MCP server") -> tuple[Callable[..., Any], type[Exception]]:
    """The SDK's server class and the exception that turns into an error result (``who`` needs them).

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
    raise ConfigError(f"{who} needs the mcp package: pip install 'compactor[mcp]'")


def require_sdk() -> None:
    """Check that the ``mcp`` package can be imported, before anything is opened.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
    """
    load_sdk()


def build_server(store: Store) -> Any:
    """An MCP server (not yet running) whose tools answer from ``store``.

    The store must stay open while the server runs; the caller closes it.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
    """
    server_class, tool_error = load_sdk()
    server = server_class(SERVER_NAME, instructions=SERVER_INSTRUCTIONS, log_level="WARNING")
    options: dict[str, Any] = {}
    if "structured_output" in inspect.signature(server.tool).parameters:
        options["structured_output"] = False  # plain text content, as a Read result would be

    def ccr_retrieve(
        handle: Annotated[str, Field(description=_PROPERTIES["handle"]["description"])],
        query: Annotated[str | None, Field(description=_PROPERTIES["query"]["description"])] = None,
        lines: Annotated[list[int] | None, Field(description=_PROPERTIES["lines"]["description"])] = None,
        bytes: Annotated[list[int] | None, Field(description=_PROPERTIES["bytes"]["description"])] = None,  # noqa: A002
    ) -> str:
        text, is_error = retrieve_text(store, handle, query, lines, bytes)
        if is_error:
            raise tool_error(text)
        return text

    def ccr_stats() -> str:
        return stats_text(store)

    server.tool(name=RECOVERY_TOOL_NAME, description=RECOVERY_TOOL["description"], **options)(ccr_retrieve)
    server.tool(name=STATS_TOOL_NAME, description=_STATS_DESCRIPTION, **options)(ccr_stats)
    return server


class StdinWatch(io.RawIOBase):
    """stdin as the server reads it, noting whether a client said hello and what was not JSON-RPC.

    The SDK skips a line it cannot parse and ends quietly at end of input,
    so without this a server fed garbage, or nothing, would exit 0 as if a
    client had been served.
    """

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._partial = b""
        self.initialized = False
        self.bad_lines = 0
        self.first_bad: bytes | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        chunk = os.read(self._fd, len(buffer))
        self._watch(chunk)
        buffer[: len(chunk)] = chunk
        return len(chunk)

    def _watch(self, chunk: bytes) -> None:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop() if chunk else b""
        for line in lines:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                message = None
            if not isinstance(message, dict | list) or (isinstance(message, dict) and message.get("jsonrpc") != "2.0"):
                self.bad_lines += 1
                self.first_bad = self.first_bad or line[:80]
            elif isinstance(message, dict) and message.get("method") == "initialize":
                self.initialized = True


def _exit_at_interrupt(signum: int, frame: object) -> None:
    """Ctrl-C ends the server at once, even with its stdin still open.

    The SDK reads stdin in a worker thread that a KeyboardInterrupt cannot
    stop, so the process would live on until its client sends SIGTERM. The
    store is open read-only: there is nothing to flush.
    """
    sys.stdout.flush()
    os._exit(128 + signum)


def serve(store: Store) -> None:
    """Run the server on stdin/stdout until the client closes the connection.

    Raises:
        ConfigError: the ``mcp`` package is not installed.
        InputNotFound: stdin is closed: there is no client.
        InputError: stdin ended without an ``initialize`` request, or held
            lines that are not JSON-RPC messages.
    """
    serve_stdio(build_server(store))


def serve_stdio(server: Any) -> None:
    """Run an SDK ``server`` on stdin/stdout; an end without an MCP client is an error.

    Raises:
        InputNotFound: stdin is closed: there is no client.
        InputError: stdin ended without an ``initialize`` request, or held
            lines that are not JSON-RPC messages.
    """
    from ccr.errors import InputError, InputNotFound

    if sys.stdin is None:
        raise InputNotFound("stdin is closed: no MCP client to serve")
    signal.signal(signal.SIGINT, _exit_at_interrupt)
    watch = StdinWatch(sys.stdin.fileno())
    real_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BufferedReader(watch), encoding="utf-8", errors="replace")
    try:
        server.run("stdio")
    finally:
        sys.stdin = real_stdin
    if watch.bad_lines:
        raise InputError(
            f"{watch.bad_lines} line(s) on stdin were not JSON-RPC messages "
            f"(first: {watch.first_bad!r}); is this an MCP client?"
        )
    if not watch.initialized:
        raise InputError("stdin ended before any MCP client sent 'initialize'")
