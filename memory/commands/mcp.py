"""``memory mcp``: serve the memory tools to a model over MCP (stdio)."""

from __future__ import annotations

import argparse
from typing import Any

from memory.commands._common import opened_memory

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve memory_remember/recall/supersede/history/forget over MCP (stdio)",
        description="Run an MCP server on stdin/stdout with five tools: memory_remember, "
        "memory_recall, memory_supersede, memory_history and memory_forget. Claude Code starts it "
        "from the compactor plugin. A closed stdin exits 66; one that ends without an MCP client "
        "(no initialize request, or lines that are not JSON-RPC) exits 65.",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Serve until the client hangs up; returns the exit code.

    Raises:
        InputNotFound, InputError: stdin is closed or carried no MCP message.
        StoreError: the database cannot be opened.
    """
    from memory.mcp_server import serve

    with opened_memory(args) as db:
        serve(db)
    return 0
