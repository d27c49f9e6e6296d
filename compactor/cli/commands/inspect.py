"""``compactor inspect SESSION.jsonl``: what a recorded session holds.

Prints the main chain's messages, tool calls by tool, the files it read,
the compactions Claude Code recorded, and token counts. Problems in the file
are warnings on stderr (``compactor: warning: file:line: ...``; repeated ones
are counted on one line unless ``--verbose``) unless ``--strict`` makes the
first one an error (exit 65).
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from ccr.cli_kit import write_stdout
from ccr.progress import progress
from compactor.claude_code.transcript import Transcript, read_transcript
from compactor.cli.commands._warnings import add_reading_options, printed_warnings
from compactor.core.tokens import make_counter, usage_anchored_estimate

__all__ = ["register", "run", "summarize"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``inspect`` subcommand."""
    parser = subparsers.add_parser(
        "inspect",
        help="summarize a recorded Claude Code session",
        description="Summarize a Claude Code session file: messages, tool calls, files read, "
        "recorded compactions and token counts.",
    )
    parser.add_argument("session", metavar="SESSION.jsonl", help="the session's JSONL transcript")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    add_reading_options(parser)
    parser.add_argument(
        "--counter",
        choices=("tiktoken", "rough"),
        default="tiktoken",
        help="token counter (default: tiktoken)",
    )
    parser.set_defaults(func=run)


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size or None
    except OSError:
        return None


def run(args: argparse.Namespace) -> int:
    """Read the session, print its summary; returns the exit code.

    Raises:
        TranscriptNotFound: the file does not exist.
        TranscriptError: it cannot be read, or (strict) it holds bad data.
    """
    with (
        printed_warnings(verbose=args.verbose or args.strict) as warn,
        progress(f"reading {Path(args.session).name}", _size(args.session), unit="bytes") as bar,
    ):
        transcript = read_transcript(args.session, strict=args.strict, warn=warn, on_read=bar.advance)
    summary = summarize(transcript, counter_name=args.counter)
    text = json.dumps(summary, indent=2, ensure_ascii=False) if args.json else _render_text(summary)
    write_stdout(text + "\n")
    return 0


def summarize(transcript: Transcript, *, counter_name: str = "tiktoken") -> dict[str, Any]:
    """The inspect summary of a transcript as a JSON-ready dict.

    ``tokens.messages`` counts every main-chain message; ``tokens.context``
    estimates the context as of the end (last assistant usage plus newer
    messages, from the last compaction on). ``fragment`` is set when the
    file starts mid-session (see ``compactor.claude_code.transcript.Fragment``).

    Raises:
        ConfigError: ``counter_name`` is not a known counter.
    """
    counter = make_counter(counter_name)
    messages = transcript.messages
    calls = transcript.tool_uses()
    by_tool = Counter(call.name for call in calls)
    files_read: list[str] = []
    for call in calls:
        path = call.input.get("file_path")
        if call.name == "Read" and isinstance(path, str) and path not in files_read:
            files_read.append(path)
    since = transcript.compactions[-1].message_index if transcript.compactions else 0
    return {
        "path": transcript.path,
        "session_id": transcript.session_id,
        "messages": {
            "total": len(messages),
            "user": sum(1 for m in messages if m.role == "user"),
            "assistant": sum(1 for m in messages if m.role == "assistant"),
        },
        "tool_calls": {"total": len(calls), "by_tool": dict(sorted(by_tool.items(), key=lambda kv: (-kv[1], kv[0])))},
        "files_read": files_read,
        "compactions": [
            {
                "line": c.line,
                "trigger": c.trigger,
                "pre_tokens": c.pre_tokens,
                "post_tokens": c.post_tokens,
                "summary_chars": len(c.summary) if c.summary is not None else None,
            }
            for c in transcript.compactions
        ],
        "tokens": {
            "counter": counter.name,
            "messages": sum(counter.count_message(m) for m in messages),
            "context": usage_anchored_estimate(messages[since:], counter),
        },
        "sidechains": {agent: len(msgs) for agent, msgs in transcript.sidechains.items()},
        "fragment": transcript.fragment.model_dump(mode="json") if transcript.fragment is not None else None,
        "warnings": len(transcript.warnings),
    }


def _render_text(summary: dict[str, Any]) -> str:
    messages = summary["messages"]
    tools = summary["tool_calls"]
    tokens = summary["tokens"]
    lines = [
        f"session      {summary['session_id'] or '-'}",
        f"file         {summary['path']}",
        f"messages     {messages['total']} (user {messages['user']}, assistant {messages['assistant']})",
        f"tool calls   {tools['total']}"
        + (": " + ", ".join(f"{name} {n}" for name, n in tools["by_tool"].items()) if tools["by_tool"] else ""),
        f"files read   {len(summary['files_read'])}",
    ]
    lines.extend(f"  {path}" for path in summary["files_read"])
    lines.append(f"compactions  {len(summary['compactions'])}")
    for c in summary["compactions"]:
        pre = f"{c['pre_tokens']:,}" if c["pre_tokens"] is not None else "?"
        post = f", post {c['post_tokens']:,}" if c["post_tokens"] is not None else ""
        chars = f", summary {c['summary_chars']:,} chars" if c["summary_chars"] is not None else ""
        lines.append(f"  line {c['line']}: {c['trigger']}, pre {pre} tokens{post}{chars}")
    lines.append(
        f"tokens       {tokens['messages']:,} in all messages, {tokens['context']:,} in context now ({tokens['counter']})"
    )
    if summary["sidechains"]:
        lines.append("sidechains   " + ", ".join(f"{a} ({n} messages)" for a, n in summary["sidechains"].items()))
    fragment = summary["fragment"]
    if fragment is not None:
        carried = fragment["first_usage_tokens"]
        seen = f"; its first request already carried {carried:,} tokens" if carried is not None else ""
        lines.append(
            f"fragment     starts mid-session at line {fragment['line']} (its parent is not in the file){seen}"
        )
    lines.append(f"warnings     {summary['warnings']}")
    return "\n".join(lines)
