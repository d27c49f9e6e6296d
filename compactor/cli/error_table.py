"""Every error id the command lines print, with its exit code: the table the docs are made from.

The error classes are the one source (``ccr.root_errors.error_table``
reads them); this module imports every package's errors first, so that the
table is whole whichever modules happened to be loaded. ``python -m
compactor.cli.error_table`` prints it as a Markdown table.
"""

from __future__ import annotations

import importlib
import sys

from ccr.root_errors import ErrorRow
from ccr.root_errors import error_table as loaded_error_table

__all__ = ["ERROR_MODULES", "error_table", "markdown_table"]

ERROR_MODULES = (
    "ccr.root_errors",
    "ccr.errors",
    "skills.errors",
    "attachments.errors",
    "compactor.core.errors",
    "compactor.memory.errors",
    "compactor.summarizers.llm",
)
"""The modules that define error classes (a test checks that no other module does)."""


def error_table() -> list[ErrorRow]:
    """Every error id of every package with its exit code, the classes that carry it and what it means, by id."""
    for name in ERROR_MODULES:
        importlib.import_module(name)
    return loaded_error_table()


def markdown_table(rows: list[ErrorRow] | None = None) -> str:
    """``rows`` (default: ``error_table()``) as a Markdown table: id, exit code, meaning."""
    lines = ["| error id | exit code | meaning |", "|---|---|---|"]
    for row in error_table() if rows is None else rows:
        summary = row.summary.replace("|", "\\|")
        lines.append(f"| `{row.error_id}` | {row.exit_code} | {summary} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(markdown_table())
