"""The README's report example, made from a real run of the README's first command.

``python tests/readme_examples.py --write`` replays ``fixtures/sessions/long.jsonl``
(``compactor replay ... --json``, with a store and home of its own) and rewrites
the JSON block that follows the marker in README.md with the abridged first
compaction. Without ``--write`` it only checks: it prints a diff and exits 1
when the README's block is not what the run gives. ``tests/test_readme.py``
makes the same check, so the example cannot drift from the real output.
Every figure in the block is deterministic: handles are content hashes, and the
replay is offline and extractive.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SESSION = "fixtures/sessions/long.jsonl"
MARKER = "<!-- the block below is written by: python tests/readme_examples.py --write -->"
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
    """The README's abridged view of the first compaction: its sizes, the head and one piece of it,
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
    """The example as the README prints it, laid out as ``LINES`` says."""
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


def readme_block(text: str) -> tuple[int, int]:
    """Where the generated block's JSON starts and ends in the README's ``text`` (between the fences).

    Raises:
        ValueError: the marker or its fenced block is missing.
    """
    at = text.index(MARKER)
    start = text.index("```json\n", at) + len("```json\n")
    end = text.index("\n```", start)
    return start, end


def expected_readme(text: str, report: dict[str, Any]) -> str:
    """The README's ``text`` with its generated block made from ``report``."""
    start, end = readme_block(text)
    return text[:start] + render(abridged(report)) + text[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the block in README.md (default: only check)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as home:
        report = replay_json(Path(home))
    text = README.read_text(encoding="utf-8")
    wanted = expected_readme(text, report)
    if wanted == text:
        print("README.md: the report example is what the replay prints")
        return 0
    if args.write:
        README.write_text(wanted, encoding="utf-8")
        print("README.md: rewrote the report example from the replay")
        return 0
    sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), wanted.splitlines(True), "README.md", "replay"))
    print("README.md: the report example differs from the replay; run: python tests/readme_examples.py --write")
    return 1


if __name__ == "__main__":
    sys.exit(main())
