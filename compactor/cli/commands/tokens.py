"""``compactor tokens [FILE|-]``: count the tokens of a text file or of stdin.

Prints one integer (or, with ``--json``, ``{"tokens", "counter", "characters"}``)
to stdout. The counter comes from ``--counter``, else the settings
(``COMPACTOR_COUNTER``, the settings file), else tiktoken. Input is read a
block at a time, so a large file is counted in bounded memory (with a
progress bar on a terminal): tiktoken counts pieces cut where counts add
up, and a run of more than ``MAX_UNCUT_CHARS`` with no such place (a 50 MB
line of base64, say) is refused with exit 65 rather than held whole. The
rough counter sees the whole text, up to ``MAX_WHOLE_CHARS``. Only a regular
file or stdin is read: a FIFO or a device named as FILE is refused.
"""

from __future__ import annotations

import argparse
import codecs
import errno
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ccr.progress import progress
from compactor.core.config import load_settings
from compactor.core.errors import InputError, InputInvalid, InputNotFound
from compactor.core.tokens import make_counter, utf16_length

__all__ = ["MAX_UNCUT_CHARS", "MAX_WHOLE_CHARS", "register", "run"]

MAX_UNCUT_CHARS = 1 << 20
"""Longest run of text (characters) counted without a place where it can be cut (exit 65 above)."""

MAX_WHOLE_CHARS = 256 << 20
"""Longest text a counter that must see it whole (the rough one) is given (exit 65 above)."""


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


_BLOCK = 1 << 20
"""Bytes read at a time: a 50 MB file is counted in bounded memory, block by block."""

_SAFE_CUT = re.compile(r"\n(?=[ \t]*\S)|(?<=[A-Za-z0-9])(?= [A-Za-z])")
"""Where a text is cut: just after a newline that a line with content follows, or before a space
between a letter or digit and a letter. cl100k_base's pre-tokenizer always splits there, so for a
counter that is ``additive_at_line_starts`` (tiktoken) the parts' counts add up to the whole's.
Every line of a JSONL file starts such a line, so a big transcript is counted piece by piece too,
and one long line of words is cut between them."""


def _open(name: str) -> tuple[BinaryIO, int | None]:
    """The byte stream of ``name`` ('-' is stdin) and its size when known.

    Raises:
        InputNotFound: there is no such file, or stdin is closed.
        InputError: ``name`` is a folder, a FIFO or a device, or cannot be opened.
    """
    if name == "-":
        if sys.stdin is None:
            raise InputNotFound("stdin: closed, nothing to read")
        return sys.stdin.buffer, None
    from ccr.files import NotRegularFile, open_regular

    try:
        stream = open_regular(name)
    except IsADirectoryError as exc:
        raise InputError(f"{name}: is a folder, not a file") from exc
    except NotRegularFile as exc:
        raise InputError(f"{name}: {exc.strerror}") from exc
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputNotFound(f"{name}: {exc.strerror or exc}") from exc
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputNotFound(f"{name[:60]}...: no such file: the name is too long for a file") from exc
        raise InputError(f"{name}: cannot open: {exc.strerror or exc}") from exc
    try:
        size = os.fstat(stream.fileno()).st_size
    except OSError:
        size = None
    return stream, size or None


def _texts(stream: BinaryIO, label: str, *, max_uncut: int = MAX_UNCUT_CHARS) -> Iterator[tuple[str, int]]:
    """The UTF-8 text of ``stream`` in pieces cut only where counts add up (``_SAFE_CUT``), each with
    the bytes read since the previous one (so that a progress bar moves as pieces are counted).

    Raises:
        InputError: the stream cannot be read.
        InputInvalid: the bytes are not UTF-8, or more than ``max_uncut``
            characters run without a place to cut.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    pending, offset, reported = "", 0, 0
    while True:
        try:
            block = stream.read(_BLOCK)
        except OSError as exc:
            raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from exc
        carried = len(decoder.getstate()[0])
        try:
            pending += decoder.decode(block, final=not block)
        except UnicodeDecodeError as exc:
            raise InputInvalid(f"{label}: not UTF-8 text (byte {offset - carried + exc.start})") from exc
        offset += len(block)
        if not block:
            if pending or offset > reported:
                yield pending, offset - reported
            return
        cut = _last_safe_cut(pending)
        if cut:
            yield pending[:cut], offset - reported
            reported = offset
            pending = pending[cut:]
        elif len(pending) > max_uncut:
            raise InputInvalid(
                f"{label}: more than {max_uncut:,} characters run without a line start or a space "
                f"before a letter, where a count can be cut; such a run is not counted (limit MAX_UNCUT_CHARS)"
            )


def _last_safe_cut(text: str) -> int:
    """The last index in the second half of ``text`` where it may be cut, or 0."""
    last = None
    for last in _SAFE_CUT.finditer(text, len(text) // 2):  # noqa: B007 (the loop keeps the last match)
        pass
    return last.end() if last else 0


def run(args: argparse.Namespace) -> int:
    """Count and print; returns the exit code.

    Raises:
        ConfigError: the settings are invalid.
        InputNotFound: the file cannot be opened.
        InputInvalid: the input is not UTF-8 text.
    """
    settings = load_settings(args.config, overrides={"counter": args.counter})
    counter = make_counter(settings.counter)
    stream, size = _open(args.file)
    label = "stdin" if args.file == "-" else args.file
    tokens = characters = 0
    try:
        with progress(f"counting {label}", size, unit="bytes") as done:
            if getattr(counter, "additive_at_line_starts", False):
                for text, read in _texts(stream, label):  # the bar moves once a piece is counted
                    tokens += counter.count_text(text)
                    characters += utf16_length(text)
                    done.advance(read)
            else:  # a counter that is not additive (the rough estimate rounds once) sees the whole text
                pieces = []
                for text, read in _texts(stream, label, max_uncut=MAX_WHOLE_CHARS):
                    pieces.append(text)
                    done.advance(read)
                text = "".join(pieces)
                if len(text) > MAX_WHOLE_CHARS:
                    raise InputInvalid(f"{label}: more than {MAX_WHOLE_CHARS:,} characters; not counted whole")
                tokens, characters = counter.count_text(text), utf16_length(text)
    finally:
        if args.file != "-":
            stream.close()
    if args.json:
        print(json.dumps({"tokens": tokens, "counter": counter.name, "characters": characters}))
    else:
        print(tokens)
    return 0
