"""The CCR MCP server: lets a model bring back what a compaction dropped.

``ccr mcp`` runs it over stdio for Claude Code (the plugin's ``.mcp.json``
names it). Two tools:

- ``ccr_retrieve(handle, query=None, lines=None, bytes=None)`` answers like
  the agent-loop recovery tool (``ccr.recovery.recover``): the whole
  original, the best-matching units for a query, or a line or byte range. A
  bad or unknown handle is an error result the model can read, never a crash
  of the server. Its name is one of the recovery tools dedup leaves alone
  (Claude Code calls it ``mcp__<server>__ccr_retrieve``, which matches too).
- ``ccr_stats()``: the store's statistics as JSON.

The server is this project's own thin MCP layer (``ccr.mcp_stdio``),
not the official SDK (docs/ARCHITECTURE.md, "Why it is fast"). ``serve_opening`` is what ``ccr mcp`` runs: it
answers ``initialize`` before the store and the tools (``ccr._mcp_tools``)
load. ``serve_stdio`` runs any such server, and is what ``compactor memory mcp`` uses too.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports
from ccr.mcp_stdio import McpServer, Tool, bounded_lines, opening_server, serve_lines

if TYPE_CHECKING:
    from ccr._mcp_tools import STATS_TOOL_NAME, retrieve_text, stats_text
    from ccr.store import Store

__all__ = [
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "STATS_TOOL_NAME",
    "build_server",
    "retrieve_text",
    "serve",
    "serve_opening",
    "serve_stdio",
    "server_version",
    "stats_text",
]

SERVER_NAME = "ccr"
"""The server's name; Claude Code prefixes its tools with ``mcp__<name>__``."""

SERVER_INSTRUCTIONS = (
    "This server holds the exact text that context compaction removed from the conversation. "
    "When the conversation shows a marker such as <<ccr:ccr_...>>, call ccr_retrieve with it "
    "to read the original instead of guessing or running the tool again."
)


def build_server(store: Store) -> McpServer:
    """An MCP server (not yet running) whose tools answer from ``store``.

    The store must stay open while the server runs; the caller closes it.
    """
    from ccr._mcp_tools import tools_for

    return McpServer(SERVER_NAME, SERVER_INSTRUCTIONS, tools_for(store), version=server_version())


def server_version() -> str:
    """The installed distribution's version, as the servers' ``serverInfo`` says it."""
    from ccr.distribution import installed_version

    return installed_version("")


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


def serve_opening(open_store: Callable[[], Store]) -> None:
    """Serve the store ``open_store`` opens, answering ``initialize`` before it is opened.

    Once that answer is written, the store is opened and the tools are made
    in the background (``Preloading``), while the client reads it: the
    handshake does not wait for pydantic and SQLite to load. If the store
    cannot be opened, the tools are still listed and every call is an error
    result saying why (with its ``error_id``); once the client hangs up, the
    error is raised, so the exit code says it. The store is closed when the server ends.

    Raises:
        InputNotFound, InputError: as ``serve_stdio``.
        Whatever ``open_store`` raises (``StoreError``, ``StoreConfigError``).
    """
    with opening_server(SERVER_NAME, SERVER_INSTRUCTIONS, open_store, _tools_for, version=server_version()) as server:
        serve_stdio(server)


def _tools_for(store: Store) -> list[Tool]:
    from ccr._mcp_tools import tools_for  # pydantic and the store's models load with the tools

    return tools_for(store)


def serve_stdio(server: McpServer) -> None:
    """Run ``server`` on stdin/stdout; an end without an MCP client is an error.

    Raises:
        InputNotFound: stdin is closed: there is no client.
        InputError: stdin ended without an ``initialize`` request, or held
            lines that are not JSON-RPC messages.
        Whatever opening the tools' resource raised (``McpServer.failures``), once the client is gone.
    """
    from ccr.errors import InputError, InputNotFound

    if sys.stdin is None:
        raise InputNotFound("stdin is closed: no MCP client to serve")
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _exit_at_signal)
    stdin = sys.stdin.buffer
    session = serve_lines(server, bounded_lines(stdin), sys.stdout.buffer)
    if server.failures:  # every tool call was answered with it; the exit code says it too
        raise server.failures[0]
    if session.bad_lines:
        raise InputError(
            f"{session.bad_lines} line(s) on stdin were not JSON-RPC messages "
            f"(the first: {session.describe_first_bad()}; no line's bytes are shown); is this an MCP client?"
        )
    if not session.initialized:
        raise InputError("stdin ended before any MCP client sent 'initialize'")


__getattr__, __dir__ = lazy_exports(
    __name__,
    {"STATS_TOOL_NAME": "ccr._mcp_tools", "retrieve_text": "ccr._mcp_tools", "stats_text": "ccr._mcp_tools"},
    __all__,
)
