"""``compactor memory mcp``: serve the memory tools to a model over MCP (stdio)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compactor.memory.store import MemoryDB

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve cavemem_remember/recall/supersede/history/forget over MCP (stdio)",
        description="Run an MCP server on stdin/stdout with five tools: cavemem_remember, "
        "cavemem_recall, cavemem_supersede, cavemem_history and cavemem_forget (their old names, "
        "memory_remember and so on, still answer for this release). Claude Code starts it "
        "from the compactor plugin. A closed stdin exits 66; one that ends without an MCP client "
        "(no initialize request, or lines that are not JSON-RPC) exits 65.",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Serve until the client hangs up; returns the exit code.

    The database opens in the background once the client's ``initialize``
    is answered (``compactor.memory.mcp_server.serve_opening``).

    Raises:
        InputNotFound, InputError: stdin is closed or carried no MCP message.
        InputNotFound: ``--db`` names a folder that does not exist (each tool call said so; raised at the end).
        StoreError: the database cannot be opened (the same).
    """
    from compactor.memory.mcp_server import serve_opening

    def open_db() -> MemoryDB:  # runs in the background, once the client's hello is answered
        from ccr.sqlite_kit.files import require_folder
        from compactor.memory.store import open_memory

        named = getattr(args, "db", None)
        if named is not None:
            require_folder(Path(named).expanduser(), kind="memory database")
        return open_memory(named, recovery=getattr(args, "ccr_store", None))

    serve_opening(open_db)
    return 0
