"""What a compaction of a recorded or running session would do now, without storing anything.

The context since the transcript's last recorded compaction (Claude Code's
summary first, whose user messages the ledger borrows) is fed through an
``Orchestrator`` as ``compactor.claude_code.replay`` feeds it (tool
results deduplicated, the session state following the tool calls, the files
served from what the session read and wrote), then compacted once against an
in-memory store: the configured summarizer writes the summary of what would
be dropped now (``compactor.engine.pipeline.head_and_tail`` decides), and the
report names the files it would restore and why others would not be.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from attachments import RecordedFiles
from ccr import open_store
from compactor.claude_code.transcript import FileEdit, FileRead, FileWrite, file_effect, read_transcript
from compactor.core.config import Settings
from compactor.core.messages import ToolResultBlock, ToolUseBlock
from compactor.core.session import SessionState
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

__all__ = ["CompactionPreview", "preview_compaction"]


@dataclass(frozen=True)
class CompactionPreview:
    """A compaction's report as it would be now, and the context it would start from."""

    report: CompactionReport
    messages: int
    """Messages in the context since the last recorded compaction."""
    context_tokens: int
    """The context as the orchestrator estimates it (recorded usage plus newer messages)."""


def preview_compaction(path: str | Path, settings: Settings) -> CompactionPreview:
    """Compact the context of the transcript at ``path`` once, in memory, and report it.

    Raises:
        TranscriptNotFound: no such file.
        TranscriptError: the file cannot be read.
    """
    transcript = read_transcript(path, subagents=False, state=False)
    entries = transcript.entries
    start = max((c.entry_index + 1 for c in transcript.compactions), default=0)
    first = entries[0].record if entries else {}
    files = RecordedFiles()
    with open_store(":memory:") as store:
        orch = Orchestrator(
            settings=settings,
            store=store,
            files=files,
            state=SessionState(session_id=transcript.session_id, cwd=first.get("cwd")),
            transcript_path=transcript.path,
            background=False,
        )
        calls: dict[str, ToolUseBlock] = {}
        fed = 0
        for entry in entries[start:]:
            message = entry.message
            if message is None:
                continue  # Claude Code's own summary stays: it is the context, and the ledger borrows from it
            structured = entry.structured_results()
            for call in message.tool_uses():
                calls[call.id] = call
            for block in message.tool_results():
                asked = calls.get(block.tool_use_id)
                if asked is not None and not block.is_error:
                    _follow(files, asked, block, structured.get(block.tool_use_id))
            mode = entry.record.get("permissionMode")
            orch.add_message(
                message, tool_use_results=structured or None, permission_mode=mode if isinstance(mode, str) else None
            )
            fed += 1
        tokens = orch.context_tokens()
        result = orch.compact("auto")
        orch.close()
    return CompactionPreview(report=result.report, messages=fed, context_tokens=tokens)


def _follow(files: RecordedFiles, call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> None:
    """Keep the view of the files in step with what the session read and wrote (as a replay does)."""
    effect = file_effect(call, result, structured)
    if isinstance(effect, FileRead) and effect.content is not None:
        offset = effect.offset if effect.offset is not None and effect.offset > 1 else None
        files.record_read(effect.path, effect.content, offset, total_lines=effect.total_lines, limit=effect.limit)
    elif isinstance(effect, FileWrite):
        files.record_write(effect.path, effect.content)
    elif isinstance(effect, FileEdit):
        if effect.replacements is None:
            files.forget(effect.path)
            return
        original = effect.original
        for replacement in effect.replacements:
            files.apply_edit(effect.path, replacement.old, replacement.new, replacement.replace_all, original=original)
            original = None
