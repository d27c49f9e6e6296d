"""What the model holds of a session after Claude Code compacts it with the plugin installed.

Replays the client's hook sequence on the shared Claude Code sessions, from
the plugin's own ``hooks/hooks.json`` (each command run as the client runs
it, through the launcher), at each recorded compaction:

1. PreCompact on the transcript cut just before the boundary;
2. the boundary and Claude Code's own summary appended to the file;
3. PostCompact with that summary as ``compact_summary``;
4. SessionStart with source ``compact``.

(The pinned client runs SessionStart before PostCompact: see
``tests/e2e/test_hook_order_in_client.py``. This replay gives the
SessionStart hook the most it could know.) The model's context is then
Claude Code's summary plus the SessionStart text. In it, the facts of the
session so far (everything before the boundary: touched paths, shell
commands' first lines, messages the user typed; found as the reports'
``retention`` finds them, ``compactor.engine.survival.context_retention``: a path
whole or relative, a command by its first 60 characters, a message by its
first 80) are searched, and in Claude Code's summary alone for
comparison. The figures are the shares found with the plugin (targets:
the issue's goals, 0.95 / 0.85 / 0.95), and the longest SessionStart text
against Claude Code's 10,000-character limit (target at most 1.0). They are
deterministic: each is measured once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import REPO, Figure, main, missing, shared_sessions

from compactor.claude_code.hooks import SESSION_START_MAX_CHARS
from compactor.claude_code.transcript import read_transcript
from compactor.core.messages import Message
from compactor.engine.survival import context_retention, head_facts

PLUGIN = REPO / "plugin"
KINDS = ("paths", "commands", "user_messages")
TARGETS = {"paths": 0.95, "commands": 0.85, "user_messages": 0.95}
HOOK_TIMEOUT_S = 600
SUMMARY_WITHIN = 40
"""Claude Code writes its summary within this many lines after the boundary."""


@dataclass
class Point:
    """One recorded compaction replayed: what the hooks answered and the facts found."""

    session: str
    compaction: int
    summary: str
    session_start: str
    total: dict[str, int] = field(default_factory=dict)
    with_plugin: dict[str, int] = field(default_factory=dict)
    alone: dict[str, int] = field(default_factory=dict)
    stderr: list[str] = field(default_factory=list)


def hook_commands(plugin: Path, event: str, value: str) -> list[str]:
    """The commands ``hooks.json`` registers for ``event`` whose matcher takes ``value``."""
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text(encoding="utf-8"))["hooks"]
    return [
        hook["command"]
        for group in hooks.get(event, [])
        if not group.get("matcher") or re.fullmatch(group["matcher"], value)
        for hook in group["hooks"]
        if hook.get("type") == "command"
    ]


def run_hooks(
    plugin: Path, event: str, value: str, payload: dict[str, Any], env: dict[str, str], stderr: list[str]
) -> str:
    """Run ``event``'s commands as the client does; what they add to the context, joined.

    A command's output that is JSON gives its ``additionalContext``; plain text counts as is.
    """
    texts = []
    for command in hook_commands(plugin, event, value):
        done = subprocess.run(
            command,
            shell=True,
            input=json.dumps(payload),
            capture_output=True,
            text=True,
            timeout=HOOK_TIMEOUT_S,
            env={**env, "CLAUDE_PLUGIN_ROOT": str(plugin)},
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{event} hook exited {done.returncode}: {done.stderr[-300:]}")
        if done.stderr.strip():
            stderr.append(f"{event}: {done.stderr.strip()}")
        out = done.stdout.strip()
        if out.startswith("{"):
            out = (json.loads(out).get("hookSpecificOutput") or {}).get("additionalContext") or ""
        if out:
            texts.append(out)
    return "\n".join(texts)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")


def _found(head: Sequence[Message], text: str, cwd: str | None) -> dict[str, int]:
    facts = head_facts(head)
    kept = context_retention(facts["paths"], facts["commands"], facts["user_messages"], text, cwd=cwd)
    return {kind: getattr(kept, kind).kept for kind in KINDS}


def replay_hooks(session: Path, work: Path, *, plugin: Path = PLUGIN, python: str = sys.executable) -> list[Point]:
    """Replay the hook sequence at each recorded compaction of ``session`` (files under ``work``)."""
    lines = session.read_text(encoding="utf-8").splitlines(keepends=True)
    records = [json.loads(line) if line.strip() else {} for line in lines]
    session_id = next((r["sessionId"] for r in records if isinstance(r.get("sessionId"), str)), "session")
    cwd = next((r["cwd"] for r in records if isinstance(r.get("cwd"), str)), None)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(work / "home"),
        "LANG": "C.UTF-8",
        "COMPACTOR_HOME": str(work / "compactor-home"),
        "COMPACTOR_PYTHON": python,
    }
    transcript = work / f"{session_id}.jsonl"
    points = []
    boundaries = [
        i for i, r in enumerate(records) if r.get("type") == "system" and r.get("subtype") == "compact_boundary"
    ]
    for n, boundary in enumerate(boundaries, start=1):
        summary_at = next(
            (
                j
                for j in range(boundary, min(boundary + SUMMARY_WITHIN, len(records)))
                if records[j].get("isCompactSummary")
            ),
            None,
        )
        if summary_at is None:
            continue
        trigger = (records[boundary].get("compactMetadata") or {}).get("trigger") or "auto"
        base = {"session_id": session_id, "transcript_path": str(transcript), "cwd": cwd or str(work)}
        transcript.write_text("".join(lines[:boundary]), encoding="utf-8")
        head = read_transcript(transcript, warn=lambda _w: None).messages
        stderr: list[str] = []
        run_hooks(
            plugin,
            "PreCompact",
            trigger,
            {**base, "hook_event_name": "PreCompact", "trigger": trigger, "custom_instructions": None},
            env,
            stderr,
        )
        transcript.write_text("".join(lines[: summary_at + 1]), encoding="utf-8")
        summary = _text(records[summary_at]["message"].get("content", ""))
        run_hooks(
            plugin,
            "PostCompact",
            trigger,
            {**base, "hook_event_name": "PostCompact", "trigger": trigger, "compact_summary": summary},
            env,
            stderr,
        )
        told = run_hooks(
            plugin,
            "SessionStart",
            "compact",
            {**base, "hook_event_name": "SessionStart", "source": "compact"},
            env,
            stderr,
        )
        facts = head_facts(head)
        points.append(
            Point(
                session=session.parent.name if session.name == "session.jsonl" else session.stem,
                compaction=n,
                summary=summary,
                session_start=told,
                total={k: len(facts[k]) for k in KINDS},
                with_plugin=_found(head, f"{summary}\n{told}", cwd),
                alone=_found(head, summary, cwd),
                stderr=stderr,
            )
        )
    return points


def table(points: Sequence[Point]) -> str:
    """One row per compaction: found with the plugin / Claude Code alone / total, per kind."""
    header = "session  compaction  paths  commands  user messages  (with plugin / Claude Code alone / total)"
    rows = [f"{header}  SessionStart chars"]
    for p in points:
        cells = "  ".join(f"{p.with_plugin[k]}/{p.alone[k]}/{p.total[k]}" for k in KINDS)
        rows.append(f"{p.session}  {p.compaction}  {cells}  {len(p.session_start):,}")
    return "\n".join(rows)


HARMFUL = {
    "rejected calls filed as instructions": re.compile(r"turned down this call|doesn't want to proceed", re.I),
    "tool errors shown as open": re.compile(
        r"not resolved yet|<tool_use_error>|File does not exist|Sibling tool call errored", re.I
    ),
    "finished tasks shown as unread": re.compile(r"output not read|completed, output", re.I),
}
"""Lines a reader named harmful in the plugin's text (issue: the text must help, not mislead), each
found by how it reads; the targets are none."""


def harmful_lines(text: str) -> dict[str, int]:
    """How many lines of a SessionStart text are of each harmful kind (``HARMFUL``)."""
    lines = text.splitlines()
    return {name: sum(1 for line in lines if pattern.search(line)) for name, pattern in HARMFUL.items()}


def figures(quick: bool = False) -> list[Figure]:
    sessions = [s for s in shared_sessions() if '"compact_boundary"' in s.read_text(encoding="utf-8")]
    if quick:
        sessions = sessions[:2]
    names = [f"{kind.replace('_', ' ')} in Claude Code's summary + the SessionStart text" for kind in KINDS]
    longest_name = "longest SessionStart text / 10,000 characters"
    if not sessions:
        reason = "no shared Claude Code session with a compaction"
        return [missing(n, TARGETS[k], ">=", reason) for n, k in zip(names, KINDS, strict=True)] + [
            missing(longest_name, 1.0, "<=", reason)
        ]
    points: list[Point] = []
    for session in sessions:
        with tempfile.TemporaryDirectory(prefix="bench-plugin-") as folder:
            points += replay_hooks(session, Path(folder))
    print(table(points))
    out = []
    for name, kind in zip(names, KINDS, strict=True):
        total = sum(p.total[kind] for p in points)
        kept, alone = sum(p.with_plugin[kind] for p in points), sum(p.alone[kind] for p in points)
        out.append(
            Figure(
                name,
                [kept / total] if total else [],
                TARGETS[kind],
                ">=",
                detail=f"{kept} of {total}; Claude Code's summary alone {alone} ({alone / total:.0%})" if total else "",
                missing=None if total else "no such facts",
            )
        )
    for name in HARMFUL:
        found = sum(harmful_lines(p.session_start)[name] for p in points)
        out.append(Figure(f"{name} (lines)", [float(found)], 0.0, "<=", detail=f"{len(points)} compactions"))
    longest = max(len(p.session_start) for p in points)
    out.append(
        Figure(
            longest_name,
            [longest / SESSION_START_MAX_CHARS],
            1.0,
            "<=",
            detail=f"{longest:,} characters, {len(points)} compactions",
        )
    )
    return out


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    sys.exit(main(figures))
