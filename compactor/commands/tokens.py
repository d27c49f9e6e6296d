"""``compactor tokens [FILE|-]``: count the tokens of a text file or of stdin.

Prints one integer (or, with ``--json``, ``{"tokens", "counter", "characters"}``)
to stdout. The counter comes from ``--counter``, else the settings
(``COMPACTOR_COUNTER``, the settings file), else tiktoken.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from compactor.config import load_settings
from compactor.errors import InputInvalid, InputNotFound
from compactor.tokens import make_counter, utf16_length

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``tokens`` subcommand."""
    parser = subparsers.add_parser(
        "tokens",
        help="count the tokens of a text file or stdin",
        description="Count the tokens of a UTF-8 text file (or stdin) and print the number.",
    )
    parser.add_argument("file", nargs="?", default="-", metavar="FILE|-", help="text file; '-' or nothing reads stdin")
    parser.add_argument(
        "--counter",
        choices=("tiktoken", "rough"),
        default=None,
        help="token counter (default: the configured one, else tiktoken)",
    )
    parser.add_argument("--config", type=Path, default=None, metavar="FILE", help="settings file (TOML or JSON)")
    parser.add_argument("--json", action="store_true", help="print tokens, counter and characters as JSON")
    parser.set_defaults(func=run)


def _read_input(name: str) -> str:
    """The text of ``name`` ('-' is stdin).

    Raises:
        InputNotFound: the file cannot be opened, or stdin is closed.
        InputInvalid: the bytes are not UTF-8.
    """
    if name == "-" and sys.stdin is None:
        raise InputNotFound("stdin: closed, nothing to read")
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()
    except OSError as exc:
        raise InputNotFound(f"{name}: {exc.strerror or exc}") from exc
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputInvalid(f"{'stdin' if name == '-' else name}: not UTF-8 text (byte {exc.start})") from exc


def run(args: argparse.Namespace) -> int:
    """Count and print; returns the exit code.

    Raises:
        ConfigError: the settings are invalid.
        InputNotFound: the file cannot be opened.
        InputInvalid: the input is not UTF-8 text.
    """
    settings = load_settings(args.config, overrides={"counter": args.counter})
    counter = make_counter(settings.counter)
    text = _read_input(args.file)
    tokens = counter.count_text(text)
    if args.json:
        print(json.dumps({"tokens": tokens, "counter": counter.name, "characters": utf16_length(text)}))
    else:
        print(tokens)
    return 0
