"""Replay a recorded Claude Code session through the ``Orchestrator``.

The transcript's main chain is fed message by message, as an agent loop
would: tool results are deduplicated, the session state follows the tool
calls, and the files the session read and wrote are served from what the
transcript recorded (``attachments.RecordedFiles``), since the original
files are not on this disk. Compaction happens where the policy fires
(``at="auto"``: checked before each request, that is after each user-side
message) or exactly where Claude Code compacted (``at="recorded"``).

Until the first compaction the context estimate is Claude Code's own: the
last recorded ``usage`` plus newer messages. After it the recorded usage
describes a context we no longer have, so usage is dropped from later
messages and the context is counted, then calibrated to the model's tokens
(``compactor.core.calibration``: overhead and scale fitted to the recorded usage
seen so far). The recording's own compaction summaries are never fed in.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from attachments import RecordedFiles, reread_coverage
from ccr import PutRequest, Store
from compactor.claude_code.restore import SEGMENT_KEY, segment_request
from compactor.claude_code.transcript import (
    FileEdit,
    FileRead,
    FileWrite,
    ReadWarning,
    StateBuilder,
    Transcript,
    TranscriptEntry,
    compaction_entries,
    file_effect,
    read_sessions,
    read_transcript,
    refuse_overwriting,
    write_transcript,
)
from compactor.core.calibration import MAX_PLAUSIBLE_OVERHEAD, Calibration, fit_calibration
from compactor.core.config import Settings
from compactor.core.errors import CompactorError, SessionNotFound
from compactor.core.ledger import LEDGER_KEY
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.core.session import SessionState
from compactor.core.tokens import TokenCounter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult, failed_result
from compactor.engine.policy import auto_compact_threshold
from compactor.engine.report import CompactionReport, DroppedSpan, MaskingReport, TranscriptSegment, Trigger
from compactor.summarizers import Summarizer

__all__ = ["ReplayAt", "ReplayReport", "ReplayTotals", "replay", "replay_transcript"]

ReplayAt = Literal["auto", "recorded"]


class ReplayTotals(BaseModel):
    model_config = ConfigDict(extra="forbid")

    compactions: int = 0
    failures: int = 0
    messages: int = 0
    tool_calls: int = 0
    dropped_bytes: int = 0
    dropped_spans: int = 0
    attachments: int = 0
    dedup_hits: int = 0
    dedup_saved_bytes: int = 0
    final_tokens: int = 0
    peak_tokens: int = 0
    """The largest context the replay measured."""
    threshold: int = 0
    counter: str = "tiktoken"
    stopped: str | None = None
    """Why auto-compaction stopped during the replay (a breaker tripped), if it did."""
    stopped_at_line: int | None = None
    reread_coverage: float | None = None
    reread_coverage_with_tail: float | None = None
    reread_files: int = 0
    """Files read before a compaction and read again after it (until the next), summed over compactions."""
    reread_restored: int = 0
    """Of those, the files the file attachments restored."""
    reread_in_tail: int = 0
    """Of those, the files whose reads the preserved tail still shows."""
    reattached_unused_tokens: int = 0
    """Tokens of file attachments whose file the recording did not read again before the next compaction."""
    reread_missed_tokens: int = 0
    """Tokens of the first re-read after a compaction of each re-read file neither restored nor in the tail."""
    requests: int = 0
    """Requests the replayed session made (one per answer)."""
    masking_steps: int = 0
    masked_results: int = 0
    masking_tokens_saved: int = 0
    cache_invalidated_tokens: int = 0
    """Cached-prefix tokens invalidated, summed over compactions and masking steps (``compactor.engine.cache``)."""
    cache_kept_tokens: int = 0
    basis: Literal["inferred"] = "inferred"


class ReplayReport(BaseModel):
    """What a replay did: one report per compaction attempt, and totals.

    ``compactions`` holds the successful ones; ``failures`` the attempts that
    failed closed (their ``error`` says why).
    """

    model_config = ConfigDict(extra="forbid")

    session: str
    at: ReplayAt
    compactions: list[CompactionReport] = Field(default_factory=list)
    failures: list[CompactionReport] = Field(default_factory=list)
    totals: ReplayTotals = Field(default_factory=ReplayTotals)
    calibration: Calibration | None = None
    """Counter tokens -> model tokens, fitted to the recorded usage (None if never needed)."""
    masking: list[MaskingReport] = Field(default_factory=list)
    """Every masking step between compactions (``compactor.engine.masking``), in order."""
    store: str | None = None
    """The store the replay wrote to when it is not the default one (so ``ccr get`` lines can name it)."""
    timeline: list[tuple[int, int]] = Field(default_factory=list)
    """(transcript line, context tokens) before each request and after each compaction: the size over time."""


def replay(
    path: str | Path,
    *,
    settings: Settings,
    store: Store,
    at: ReplayAt = "auto",
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    strict: bool = False,
    warn: Callable[[ReadWarning], None] | None = None,
    on_compaction: Callable[[CompactionResult, int], None] | None = None,
    output: str | Path | None = None,
    on_entry: Callable[[int, int], None] | None = None,
    session: str | None = None,
) -> ReplayReport:
    """Read the transcript at ``path`` and replay it (see ``replay_transcript``).

    ``session`` picks one session of a file that holds several (by default
    the last one is read, with a ``mixed_sessions`` warning).

    Raises:
        UsageError: ``output`` is the transcript itself (nothing is written).
        TranscriptNotFound: no such file.
        SessionNotFound: the file holds no session ``session``.
        TranscriptError: unreadable, or bad data with ``strict``.
    """
    if output is not None:
        refuse_overwriting(path, output)
    if session is None:
        # Only the main chain is replayed; subagent files are not read at all.
        transcript = read_transcript(path, strict=strict, warn=warn, subagents=False, state=False)
    else:
        transcript = _one_of(read_sessions(path, strict=strict, warn=warn), session, path)
    return replay_transcript(
        transcript,
        settings=settings,
        store=store,
        at=at,
        counter=counter,
        summarizer=summarizer,
        on_compaction=on_compaction,
        output=output,
        on_entry=on_entry,
    )


def _one_of(sessions: list[Transcript], session: str, path: str | Path) -> Transcript:
    """The session ``session`` among those a file holds.

    Raises:
        SessionNotFound: none has that id.
    """
    for transcript in sessions:
        if transcript.session_id == session:
            return transcript
    held = ", ".join(str(t.session_id) for t in sessions) or "none"
    raise SessionNotFound(f"{path}: no session {session} in this file (it holds: {held})")


def replay_transcript(
    transcript: Transcript,
    *,
    settings: Settings,
    store: Store,
    at: ReplayAt = "auto",
    counter: TokenCounter | None = None,
    summarizer: Summarizer | None = None,
    on_compaction: Callable[[CompactionResult, int], None] | None = None,
    output: str | Path | None = None,
    on_entry: Callable[[int, int], None] | None = None,
) -> ReplayReport:
    """Replay ``transcript``; ``on_compaction(result, line)`` sees every attempt,
    ``on_entry(done, total)`` the entries replayed so far (for a progress bar).

    With ``output``, the replayed session is written there as Claude Code
    would have written it: the messages as fed (deduplicated), and at each
    compaction the records it writes (``compaction_entries``): a
    ``compact_boundary`` (trigger, preTokens, postTokens), the summary, the
    preserved tail and the attachments, with the session's metadata.
    Reading the file back gives the compacted context as the session went
    on. The file is written through a temporary file and a rename.

    Raises:
        UsageError: ``output`` is the transcript itself (nothing is written).
        TranscriptWriteError: ``output`` could not be written.
    """
    if output is not None:
        refuse_overwriting(transcript.path, output)
    run = _Replay(
        transcript, settings, store, at, counter, summarizer, on_compaction, on_entry, keep_output=output is not None
    )
    report = run.run()
    if output is not None and run.output is not None:
        write_transcript(
            run.output, output, session_id=transcript.session_id, cwd=run.orch.state.cwd, inputs=[transcript.path]
        )
    return report


class _Replay:
    def __init__(
        self,
        transcript: Transcript,
        settings: Settings,
        store: Store,
        at: ReplayAt,
        counter: TokenCounter | None,
        summarizer: Summarizer | None,
        on_compaction: Callable[[CompactionResult, int], None] | None,
        on_entry: Callable[[int, int], None] | None = None,
        *,
        keep_output: bool = False,
    ) -> None:
        self.transcript = transcript
        self.at = at
        self.files = RecordedFiles()
        first = transcript.entries[0].record if transcript.entries else {}
        self.orch = Orchestrator(
            settings=settings,
            store=store,
            counter=counter,
            summarizer=summarizer,
            files=self.files,
            state=SessionState(session_id=transcript.session_id, cwd=first.get("cwd")),
            transcript_path=transcript.path,
            background=False,  # a replay has no time between turns: each compaction asks its summarizer in place
        )
        self.on_compaction = on_compaction
        self.on_entry = on_entry
        self.report = ReplayReport(session=transcript.path, at=at)
        self.diverged = False
        self.calls: dict[str, ToolUseBlock] = {}
        self.reads: list[tuple[int, str]] = []  # (entry index, path) of every Read
        self.read_texts: list[str] = []  # what each of those reads returned (same order)
        self.points: list[tuple[int, CompactionReport]] = []  # (entry index, report) of successes
        # The replayed session as Claude Code would write it, built only when it is to be written.
        self.output: list[TranscriptEntry] | None = [] if keep_output else None
        self.context_entries: list[int] = []  # with output: the output entry of each message in the context
        self.usage_pairs: list[tuple[int, int]] = []  # (counted, recorded usage) before divergence
        self.next_segment_line = 1  # the first transcript line the next compaction's segment stores

    def run(self) -> ReplayReport:
        entries = self.transcript.entries
        recorded = {c.entry_index: c for c in self.transcript.compactions}
        for index, entry in enumerate(entries):
            if self.on_entry is not None:
                self.on_entry(index + 1, len(entries))
            if index in recorded:
                if self.at == "recorded":
                    trigger: Trigger = "manual" if recorded[index].trigger == "manual" else "auto"
                    self._compact(index, entry, trigger, through_line=entry.line - 1)
                self._diverge()
                continue
            message = entry.message
            if entry.kind == "attachment":  # what Claude Code announced (tools, agent types, MCP) is state
                StateBuilder(self.orch.state).apply(entry)
            if message is None or message.is_compact_summary:
                continue
            self._feed(index, entry, message)
            if message.role == "user":
                decision = self.orch.should_compact()
                totals = self.report.totals
                totals.peak_tokens = max(totals.peak_tokens, decision.tokens)
                self.report.timeline.append((entry.line, decision.tokens))
                if self.at == "auto" and decision.compact:
                    self._compact(index, entry, "auto", through_line=max(entry.lines or [entry.line]))
                elif decision.reason in ("too_many_failures", "thrashing") and totals.stopped is None:
                    totals.stopped, totals.stopped_at_line = decision.message, entry.line
        self._totals()
        return self.report

    def _feed(self, index: int, entry: TranscriptEntry, message: Message) -> None:
        structured = entry.structured_results()
        for call in message.tool_uses():
            self.calls[call.id] = call
            self.report.totals.tool_calls += 1
        for block in message.tool_results():
            asked = self.calls.get(block.tool_use_id)
            if asked is not None and not block.is_error:
                self._record_file_effect(index, asked, block, structured.get(block.tool_use_id))
        if self.diverged and message.usage is not None:
            message = message.model_copy(update={"usage": None})
        mode = entry.record.get("permissionMode")
        kept = self.orch.add_message(
            message,
            tool_use_results=structured or None,
            permission_mode=mode if isinstance(mode, str) else None,
        )
        if self.output is not None:
            records = entry.records
            if self.diverged:  # recorded usage described a context the replay no longer has
                records = [{**r, "message": {k: v for k, v in r["message"].items() if k != "usage"}} for r in records]
            self.output.append(entry.model_copy(update={"message": kept, "records": records}))
            self.context_entries.append(len(self.output) - 1)
        steps = self.orch.masking_steps
        if len(steps) > len(self.report.masking):  # a masking step ran as the message arrived
            self._show_masked()
            self._diverge()
            fitted = self.report.calibration
            unseen = fitted.unseen if fitted is not None and not self.report.compactions else 0
            for step in steps[len(self.report.masking) :]:
                step.at_line = entry.line
                if unseen and step.ok and not step.cache.cold:
                    step.cache.kept_tokens += unseen  # a fragment's earlier context precedes every message
                self.report.masking.append(step)
            self.report.timeline.append((entry.line, self.orch.context_tokens()))
        self.report.totals.messages += 1
        if kept.usage is not None and kept.role == "assistant":
            self.usage_pairs.append((self.orch.tokens_of_messages(), kept.usage.total))

    def _show_masked(self) -> None:
        """Put in the output what a masking step left in the context: its stubs, in place of the results.

        The output reads back as the context the model sees; the stored
        originals are named by the stubs.
        """
        if self.output is None:
            return
        for message, at in zip(self.orch.messages, self.context_entries, strict=True):
            written = self.output[at]
            if written.message is not None and written.message.content is not message.content:
                self.output[at] = written.model_copy(
                    update={"message": written.message.model_copy(update={"content": message.content})}
                )

    def _record_file_effect(self, index: int, call: ToolUseBlock, result: ToolResultBlock, structured: Any) -> None:
        """Keep the replay's view of the files in step with what the recording read and wrote."""
        effect = file_effect(call, result, structured)
        if isinstance(effect, FileRead):
            self.reads.append((index, effect.path))
            self.read_texts.append(effect.content or "")
            if effect.content is not None:
                offset = effect.offset if effect.offset is not None and effect.offset > 1 else None
                self.files.record_read(
                    effect.path, effect.content, offset, total_lines=effect.total_lines, limit=effect.limit
                )
        elif isinstance(effect, FileWrite):
            self.files.record_write(effect.path, effect.content)
        elif isinstance(effect, FileEdit):
            if effect.replacements is None:
                self.files.forget(effect.path)
                return
            original = effect.original
            for replacement in effect.replacements:
                self.files.apply_edit(
                    effect.path, replacement.old, replacement.new, replacement.replace_all, original=original
                )
                original = None

    def _calibrate(self) -> None:
        """While recorded usage still describes the context, fit counted tokens to it."""
        if not self.diverged:
            bound = MAX_PLAUSIBLE_OVERHEAD if self.transcript.fragment is not None else None
            fitted = fit_calibration(self.usage_pairs, max_overhead=bound)
            self.report.calibration = fitted
            self.orch.calibration = fitted
            if fitted.unseen and not self.report.compactions:
                # Until a compaction drops it, the unseen earlier context is still in the context.
                self.orch.calibration = fitted.model_copy(
                    update={"overhead": fitted.overhead + fitted.unseen, "unseen": 0}
                )

    def _diverge(self) -> None:
        """From here on, recorded usage no longer describes the replayed context."""
        self._calibrate()
        self.diverged = True
        self.orch.forget_recorded_usage()

    def _segment(self, through_line: int) -> tuple[PutRequest, TranscriptSegment] | None:
        """The transcript's own lines since the last compaction, byte-exact, for ``compactor restore``.

        The record goes into the compaction's own transaction (``also_store``):
        it is stored if and only if the compaction is. Only a replay that
        writes the compacted session (``output``) stores it: nothing else
        replaces the transcript's lines, so without one the transcript itself
        holds them, and storing a copy of every line cost as much as the rest
        of the compaction's writes.

        Raises:
            InputNotFound: the transcript can no longer be read.
        """
        path = Path(self.transcript.path)
        if self.output is None or not path.is_file() or through_line < self.next_segment_line:
            return None
        return segment_request(
            path,
            first_line=self.next_segment_line,
            last_line=through_line,
            producer="compactor.claude_code.replay",
            metadata={"session_id": self.transcript.session_id},
        )

    def _compact(self, index: int, entry: TranscriptEntry, trigger: Trigger, *, through_line: int) -> None:
        self._calibrate()
        try:
            named = self._segment(through_line)
        except CompactorError as exc:  # fail closed: nothing is dropped that cannot be restored
            self._failed(
                entry,
                failed_result(
                    self.orch.messages,
                    self.orch.state,
                    exc,
                    trigger=trigger,
                    threshold=auto_compact_threshold(self.orch.settings),
                    pre_tokens=self.orch.context_tokens(),
                    counter_name=self.orch.counter.name,
                ),
            )
            return
        fitted, holding = self.report.calibration, self.orch.calibration
        unseen = fitted.unseen if fitted is not None and not self.report.compactions else 0
        pre_tokens = self.orch.context_tokens()
        if fitted is not None:
            self.orch.calibration = fitted  # what is left after the head (and any unseen context) is gone
        request, segment = named if named is not None else (None, None)
        result = self.orch.compact(trigger, also_store=[request] if request is not None else ())
        result.report.at_line = entry.line
        if result.ok and unseen:
            # A fragment's earlier context goes with the first head, unstored: it is not in the file.
            result.report.pre_tokens = max(result.report.pre_tokens, pre_tokens)
            result.report.dropped.append(
                DroppedSpan(handle="", kind="unseen", tokens=unseen, bytes=0, recoverable=False)
            )
            if result.report.cache is not None and not result.report.cache.cold:
                result.report.cache.invalidated_tokens += unseen  # it was cached too, before every message
        if not result.ok:
            self.orch.calibration = holding
            self._failed(entry, result)
            return
        report = result.report
        if segment is not None:
            report.transcript = segment
            self.next_segment_line = segment.last_line + 1
        if self.on_compaction is not None:
            self.on_compaction(result, entry.line)
        self.report.compactions.append(report)
        self.report.timeline.append((entry.line, report.post_tokens))
        self.points.append((index, report))
        if self.output is not None:
            # The compacted context is written after a boundary: its messages follow it in order.
            self.context_entries = list(range(len(self.output) + 1, len(self.output) + 1 + len(result.messages)))
            self.output.extend(
                compaction_entries(
                    trigger,
                    report.pre_tokens,
                    report.post_tokens,
                    result.messages,
                    like=entry.record,
                    metadata={
                        LEDGER_KEY: result.state.ledger.model_dump(mode="json"),
                        **({SEGMENT_KEY: segment.model_dump()} if segment is not None else {}),
                    },
                )
            )
        self._diverge()

    def _failed(self, entry: TranscriptEntry, result: CompactionResult) -> None:
        """A compaction that failed closed: reported, and the messages go on unchanged."""
        result.report.at_line = entry.line
        if self.on_compaction is not None:
            self.on_compaction(result, entry.line)
        self.report.failures.append(result.report)
        self._diverge()

    def _totals(self) -> None:
        totals = self.report.totals
        totals.compactions = len(self.report.compactions)
        totals.requests = self.orch.cache.requests
        done = [step for step in self.report.masking if step.ok]
        totals.masking_steps = len(done)
        totals.masked_results = sum(step.results for step in done)
        totals.masking_tokens_saved = sum(step.tokens_saved for step in done)
        effects = [step.cache for step in done] + [c.cache for c in self.report.compactions if c.cache is not None]
        totals.cache_invalidated_tokens = sum(e.invalidated_tokens for e in effects)
        totals.cache_kept_tokens = sum(e.kept_tokens for e in effects)
        totals.failures = len(self.report.failures)
        for report in self.report.compactions:
            totals.dropped_bytes += sum(d.bytes for d in report.dropped if d.piece_of is None)
            totals.dropped_spans += len(report.dropped)
            totals.attachments += len(report.attachments)
        dedup = self.orch.state.dedup
        totals.dedup_hits = sum(dedup.hits.values())
        totals.dedup_saved_bytes = sum(dedup.saved_bytes.values())
        totals.final_tokens = self.orch.context_tokens()
        totals.peak_tokens = max(totals.peak_tokens, totals.final_tokens)
        totals.threshold = auto_compact_threshold(self.orch.settings)
        totals.counter = self.orch.counter.name
        # Re-read coverage: reads since the previous compaction vs reads until the next one.
        # "with tail" also counts the files the preserved tail still shows.
        bounds = [i for i, _ in self.points]
        hits = hits_with_tail = reread_total = 0
        for n, (point, report) in enumerate(self.points):
            start = bounds[n - 1] if n else -1
            end = bounds[n + 1] if n + 1 < len(bounds) else len(self.transcript.entries)
            before = {p for i, p in self.reads if start < i <= point}
            after = {p for i, p in self.reads if point < i <= end}
            restored = {a.path for a in report.attachments if a.type == "file" and a.path}
            in_tail = {
                s.path for s in report.skipped if s.type == "file" and s.path and s.reason.startswith("read_in_tail")
            }
            report.reread_coverage = reread_coverage(restored, before, after)
            report.reread_coverage_with_tail = reread_coverage(restored | in_tail, before, after)
            reread = before & after
            reread_total += len(reread)
            hits += len(reread & restored)
            hits_with_tail += len(reread & (restored | in_tail))
            totals.reread_in_tail += len((reread & in_tail) - restored)
            totals.reattached_unused_tokens += sum(
                a.tokens for a in report.attachments if a.type == "file" and a.path and a.path not in after
            )
            missed = reread - restored - in_tail
            for (i, p), text in zip(self.reads, self.read_texts, strict=True):
                if point < i <= end and p in missed:
                    totals.reread_missed_tokens += self.orch.counter.count_text(text)
                    missed = missed - {p}
        totals.reread_files, totals.reread_restored = reread_total, hits
        totals.reread_coverage = hits / reread_total if reread_total else None
        totals.reread_coverage_with_tail = hits_with_tail / reread_total if reread_total else None
