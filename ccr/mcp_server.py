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

The server is this project's own thin MCP layer (``compactor.mcp_stdio``),
not the official SDK, whose import alone costs more than the whole start
should: see that module. ``serve_stdio`` runs any such server, and is what
``memory mcp`` uses too.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Annotated, Any

from pydantic import Field

from ccr.store import Store
from compactor.mcp_stdio import McpServer, Tool, ToolError, serve_lines
from compactor.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME, recover

__all__ = [
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "STATS_TOOL_NAME",
    "build_server",
    "retrieve_text",
    "serve",
    "serve_stdio",
    "server_version",
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


def build_server(store: Store) -> McpServer:
    """An MCP server (not yet running) whose tools answer from ``store``.

    The store must stay open while the server runs; the caller closes it.
    """

    def ccr_retrieve(
        handle: Annotated[str, Field(description=_PROPERTIES["handle"]["description"])],
        query: Annotated[str | None, Field(description=_PROPERTIES["query"]["description"])] = None,
        lines: Annotated[list[int] | None, Field(description=_PROPERTIES["lines"]["description"])] = None,
        bytes: Annotated[list[int] | None, Field(description=_PROPERTIES["bytes"]["description"])] = None,  # noqa: A002
    ) -> str:
        text, is_error = retrieve_text(store, handle, query, lines, bytes)
        if is_error:
            raise ToolError(text)
        return text

    def ccr_stats() -> str:
        return stats_text(store)

    return McpServer(
        SERVER_NAME,
        SERVER_INSTRUCTIONS,
        [Tool.from_function(ccr_retrieve, RECOVERY_TOOL["description"], name=RECOVERY_TOOL_NAME),
         Tool.from_function(ccr_stats, _STATS_DESCRIPTION, name=STATS_TOOL_NAME)],
        version=server_version(),
    )


def server_version() -> str:
    """The installed distribution's version, as the servers' ``serverInfo`` says it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("compactor")
    except PackageNotFoundError:
        return ""


def _exit_at_signal(signum: int, frame: object) -> None:
    """Ctrl-C or SIGTERM ends the server at once, even with its stdin still open.

    Without this a SIGINT would surface as a KeyboardInterrupt traceback
    mid-read. The stores are served read-only or commit each call: there is
    nothing to flush but stdout.
    """
    sys.stdout.flush()
    os._exit(128 + signum)


def serve(store: Store) -> None:
    """Run the server on stdin/stdout until the client closes the connection.

    Raises:
        InputNotFound: stdin is closed: there is no client.
        InputError: stdin ended without an ``initialize`` request, or held
            lines that are not JSON-RPC messages.
    """
    serve_stdio(build_server(store))


def serve_stdio(server: McpServer) -> None:
    """Run ``server`` on stdin/stdout; an end without an MCP client is an error.

    Raises:
        InputNotFound: stdin is closed: there is no client.
        InputError: stdin ended without an ``initialize`` request, or held
            lines that are not JSON-RPC messages.
    """
    from ccr.errors import InputError, InputNotFound

    if sys.stdin is None:
        raise InputNotFound("stdin is closed: no MCP client to serve")
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _exit_at_signal)
    stdin = sys.stdin.buffer
    session = serve_lines(server, iter(stdin.readline, b""), sys.stdout.buffer)
    if session.bad_lines:
        raise InputError(
            f"{session.bad_lines} line(s) on stdin were not JSON-RPC messages "
            f"(first: {session.first_bad!r}); is this an MCP client?"
        )
    if not session.initialized:
        raise InputError("stdin ended before any MCP client sent 'initialize'")
