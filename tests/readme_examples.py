"""The examples of the README and the docs: the report example, and running their Python blocks.

The report example is the first compaction of the README's first command
(``compactor replay fixtures/sessions/long.jsonl --json``, with a store and home
of its own), abridged; ``docs/generate.py`` writes it to
``docs/generated/report.json`` and ``tests/test_docs.py`` checks it. Every
figure in it is deterministic: handles are content hashes, and the replay is
offline and extractive. The Python blocks of a page run as pasted, in order, in
one interpreter (``python_blocks``, ``run_blocks``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SESSION = "fixtures/sessions/long.jsonl"
WIDTH = 110
"""Longest line of the block; a longer object is wrapped between its keys."""


def replay_json(home: Path) -> dict[str, Any]:
    """What ``compactor replay fixtures/sessions/long.jsonl --json`` prints, run from the checkout.

    Raises:
        RuntimeError: the replay failed.
    """
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "replay", SESSION, "--json", "--store", str(home / "ccr.db")],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, "COMPACTOR_HOME": str(home)},
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the replay failed (exit {done.returncode}): {done.stderr.decode(errors='replace')}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def abridged(report: dict[str, Any]) -> dict[str, Any]:
    """The abridged view of the first compaction: its sizes, the head and one piece of it,
    the first attachment, the plan file's skipped entry (else the first), dedup and coverage."""
    c = report["compactions"][0]
    keys = (
        "trigger",
        "ok",
        "at_line",
        "pre_tokens",
        "post_tokens",
        "threshold",
        "summary_tokens",
        "head_tokens",
        "counter",
    )
    out: dict[str, Any] = {k: c[k] for k in keys}
    span_keys = ("handle", "kind", "tokens", "bytes")
    pieces = [d for d in c["dropped"][1:] if d["kind"] == "tool_result"] or c["dropped"][1:]
    out["dropped"] = [{k: d[k] for k in span_keys} for d in c["dropped"][:1] + pieces[:1]]
    out["attachments"] = [
        {k: a[k] for k in ("type", "path", "tokens", "truncated", "handle") if k in a} for a in c["attachments"][:1]
    ]
    plans = [s for s in c["skipped"] if str(s.get("reason", "")).startswith("plan_file")]
    out["skipped"] = [{k: s[k] for k in ("type", "path", "reason") if k in s} for s in (plans or c["skipped"])[:1]]
    out["dedup"] = {k: c["dedup"][k] for k in ("hits", "saved_bytes")}
    for k in ("reread_coverage", "reread_coverage_with_tail", "basis"):
        out[k] = c[k]
    return out


def _pairs(items: dict[str, Any]) -> list[str]:
    return [f"{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in items.items()]


def _wrapped(pairs: list[str], first: str, rest: str, close: str) -> list[str]:
    """``pairs`` joined with ", " into lines no longer than WIDTH, the first opened by ``first``."""
    lines: list[str] = []
    line = first
    for n, pair in enumerate(pairs):
        piece = pair + (close if n == len(pairs) - 1 else ",")
        if line not in (first, rest) and len(line) + 1 + len(piece) > WIDTH:
            lines.append(line)
            line = rest
        line += ("" if line in (first, rest) else " ") + piece
    lines.append(line)
    return lines


LINES: tuple[tuple[str, ...], ...] = (
    ("trigger", "ok", "at_line"),
    ("pre_tokens", "post_tokens", "threshold"),
    ("summary_tokens", "head_tokens", "counter"),
    ("dropped",),
    ("attachments",),
    ("skipped",),
    ("dedup",),
    ("reread_coverage", "reread_coverage_with_tail", "basis"),
)
"""The example's layout: the keys of each line; a list's items get a line each (wrapped)."""


def render(example: dict[str, Any]) -> str:
    """The example as the docs print it, laid out as ``LINES`` says."""
    lines = ["{"]
    for n, keys in enumerate(LINES):
        end = "" if n == len(LINES) - 1 else ","
        value = example[keys[0]]
        if isinstance(value, list):
            lines.append(f"  {json.dumps(keys[0])}: [")
            for i, item in enumerate(value):
                lines += _wrapped(_pairs(item), "    {", "     ", "}" + ("," if i < len(value) - 1 else ""))
            lines.append("  ]" + end)
        else:
            lines += _wrapped(_pairs({k: example[k] for k in keys}), "  ", "  ", end)
    lines.append("}")
    return "\n".join(lines)


# The Python blocks of the README and of the docs pages: each runs as pasted, in order, unless its
# first line is "# pip install '.[extra]'" (it needs that extra and a model to talk to).

NEEDS_AN_EXTRA = re.compile(r"# pip install '\.\[[\w-]+\]'")

MARK = "::block-started:: "
"""What the runner prints before each block, so that the blocks' own output is told apart."""

RUN_BLOCKS = """
import sys
namespace = {"__name__": "__main__"}
for where, code in BLOCKS:
    print(MARK + where, flush=True)
    exec(compile(code, where, "exec"), namespace)
"""
"""The script that runs a page's blocks in one namespace, printing each block's place before it runs."""


def python_blocks(path: Path) -> list[tuple[str, str]]:
    """Every ```python block of ``path``: (``file:line`` of its first line, its code)."""
    text = path.read_text(encoding="utf-8")
    name = path.relative_to(ROOT).as_posix()
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE):
        blocks.append((f"{name}:{text.count(chr(10), 0, match.start(1)) + 1}", match.group(1)))
    return blocks


def runnable(blocks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The blocks that need no extra."""
    return [(where, code) for where, code in blocks if not NEEDS_AN_EXTRA.match(code)]


def run_blocks(blocks: list[tuple[str, str]], home: Path) -> tuple[int, list[str], str]:
    """Run ``blocks`` in order in one fresh interpreter from the checkout, with ``home`` as HOME and
    COMPACTOR_HOME's parent; returns the exit code, the places of the blocks that started, and stderr."""
    (home / "home").mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", f"BLOCKS = {blocks!r}\nMARK = {MARK!r}\n{RUN_BLOCKS}"],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, "COMPACTOR_HOME": str(home / "compactor"), "HOME": str(home / "home")},
        timeout=300,
        check=False,
    )
    started = [line.removeprefix(MARK) for line in done.stdout.decode().splitlines() if line.startswith(MARK)]
    return done.returncode, started, done.stderr.decode()
