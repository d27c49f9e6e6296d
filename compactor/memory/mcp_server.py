"""The memory MCP server: a model remembers, recalls, supersedes and forgets across sessions.

``compactor memory mcp`` runs it over stdio (the plugin's ``.mcp.json`` names it beside
``ccr``). Five tools, named as the seed names them, answer in the seed's
shapes (``compactor.memory.answers``): ``cavemem_remember``, ``cavemem_recall``,
``cavemem_supersede``, ``cavemem_history`` and ``cavemem_forget``. Their old
names (``memory_remember`` ...) are listed too and answer as the command line
does, for one release, so that permission rules and scripts naming them keep
working. A refused call (a negative budget,
an unknown id, text over 256 KiB) is an error result naming the error id,
never a crash of the server.

Built on the project's own thin MCP layer (``ccr.mcp_stdio``, not the
SDK) and served the way ``ccr mcp`` is
(``ccr.mcp_server.serve_stdio``: the same stdin checks): a stdin that is closed is an error (exit
66), and one that ends without an ``initialize`` request or holds lines that
are not JSON-RPC is an error (exit 65), never a silent success. As ``ccr
mcp``, it answers ``initialize`` before the database and the tools
(``compactor.memory._mcp_tools``) load (``serve_opening``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ccr.mcp_server import serve_stdio, server_version
from ccr.mcp_stdio import McpServer, Tool, opening_server

if TYPE_CHECKING:
    from compactor.memory.store import MemoryDB

__all__ = [
    "LEGACY_TOOL_NAMES",
    "SERVER_INSTRUCTIONS",
    "SERVER_NAME",
    "TOOL_NAMES",
    "build_server",
    "serve",
    "serve_opening",
]

SERVER_NAME = "memory"
TOOL_NAMES = ("cavemem_remember", "cavemem_recall", "cavemem_supersede", "cavemem_history", "cavemem_forget")
LEGACY_TOOL_NAMES = ("memory_remember", "memory_recall", "memory_supersede", "memory_history", "memory_forget")
"""The tools' names before ``TOOL_NAMES``: still served, for this release only."""

SERVER_INSTRUCTIONS = (
    "This server keeps memories across sessions. Remember durable facts (decisions, conventions, "
    "what failed and why) with cavemem_remember; recall them with cavemem_recall before redoing work; "
    "when a fact changes, cavemem_supersede the old one instead of adding a contradiction. The "
    "memory_* tools are old names of the same tools, kept for one release."
)


def build_server(db: MemoryDB) -> McpServer:
    """An MCP server (not yet running) whose tools answer from ``db``, which must stay open."""
    from compactor.memory._mcp_tools import tools_for

    return McpServer(SERVER_NAME, SERVER_INSTRUCTIONS, tools_for(db), version=server_version())


def serve(db: MemoryDB) -> None:
    """Run the server on stdin/stdout until the client hangs up (``ccr.mcp_server.serve_stdio``).

    Raises:
        InputNotFound: stdin is closed.
        InputError: stdin ended without an ``initialize`` request, or held lines that are not JSON-RPC.
    """
    serve_stdio(build_server(db))


def serve_opening(open_db: Callable[[], MemoryDB]) -> None:
    """Serve the database ``open_db`` opens, answering ``initialize`` before it is opened.

    As ``ccr.mcp_server.serve_opening``: once that answer is written, the
    database is opened and the tools are made in the background; with a database
    that cannot be opened, the tools are listed, every call is an error result
    naming why, and the error is raised once the client hangs up.
    It is closed when the server ends.

    Raises:
        InputNotFound: stdin is closed.
        InputError: stdin ended without an ``initialize`` request, or held lines that are not JSON-RPC.
        Whatever ``open_db`` raises (``MemoryConfigError``, ``StoreError``).
    """
    with opening_server(SERVER_NAME, SERVER_INSTRUCTIONS, open_db, _tools_for, version=server_version()) as server:
        serve_stdio(server)


def _tools_for(db: MemoryDB) -> list[Tool]:
    from compactor.memory._mcp_tools import tools_for  # pydantic and the database's models load with the tools

    return tools_for(db)
