"""``ccr mcp``: serve the store to a model over MCP (stdio).

Claude Code starts it from the plugin's ``.mcp.json``; stdout carries the
protocol, so nothing else is printed there. The server is the project's
own (``ccr.mcp_stdio``): the ``mcp`` SDK is not needed to run it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ccr.mcp_server import serve_opening

if TYPE_CHECKING:
    from ccr.store import Store

__all__ = ["register", "run"]


def register(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "mcp",
        help="serve ccr_retrieve and ccr_stats to a model over MCP (stdio)",
        description="Run an MCP server on stdin/stdout with two tools: ccr_retrieve (bring back "
        "what a handle names, whole, by query, or by line or byte range) and ccr_stats. "
        "Claude Code starts it from the compactor plugin. "
        "Exits 0 when the client that initialized it hangs up; non-zero when stdin is closed, "
        "ends before 'initialize', or holds lines that are not JSON-RPC.",
    )
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Serve until the client hangs up; returns the exit code.

    The store opens in the background while the client's ``initialize`` is
    answered (``ccr.mcp_server.serve_opening``).

    A ``--store`` that names no file is an error (each tool call says so);
    the default store, until a compaction makes it, reads as empty and is read
    once it exists.

    Raises:
        StoreConfigError: the budget setting is invalid (once the client hangs up; each call said so).
        InputNotFound: ``--store`` names no file (the same).
        StoreError: the store cannot be opened (the same).
    """
    path = getattr(args, "store", None)

    def open_read_only() -> Store:  # runs in the background, while the client says hello
        from ccr.store import open_store

        return open_store(path, readonly=True, must_exist=path is not None)

    serve_opening(open_read_only)
    return 0
