"""The ``Orchestrator``: the API an agent loop calls.

It holds one session: its messages, its ``SessionState``, a token counter
with a per-message cache, the dedup table, the CCR store and the policy's
tracker. Adding a message costs the same at any history length: it is
counted once into a ``MessageTally`` (running totals and a usage anchor that
moves forward), and tool results go through one ``Deduper`` kept for the
whole context. The loop adds messages and tool results as they happen (dedup is
applied to each tool result before anything is counted), asks
``should_compact()``, and calls ``compact()``; ``retrieve()`` brings back
anything a compaction dropped.

::

    orch = Orchestrator()
    orch.add_message(Message(role="user", content="Fix the failing test"))
    ...
    if orch.should_compact().compact:
        orch.compact("auto")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from attachments import DiskFiles, FileSource, StalenessWatcher
from ccr import Retrieval, Store, open_store
from compactor.calibration import Calibration
from compactor.config import Settings, load_settings
from compactor.dedup import Deduper
from compactor.messages import Message, ToolResultBlock
from compactor.errors import CompactionDisabled
from compactor.pipeline import CompactionResult, CompactOptions, compact, failed_result
from compactor.policy import CompactionTracker, Decision, auto_compact_threshold, should_compact
from compactor.recovery import recover
from compactor.report import Trigger
from compactor.session import SessionState
from compactor.summarizers import Summarizer, make_summarizer
from compactor.tokens import CachedCounter, MessageTally, TokenCounter, make_counter
from compactor.transcript import StateBuilder

__all__ = ["Orchestrator"]


class Orchestrator:
    """One agent session under compaction.

    Everything is optional: settings load from the environment (and
    ``COMPACTOR_CONFIG``), the store is ``$COMPACTOR_HOME/ccr.db``, files are
    re-read from disk, the summarizer is the one the settings name.
    ``overhead_tokens`` is context the messages do not show (system prompt,
    tool definitions); it is added to every estimate that has no recorded
    usage to anchor on. ``calibration`` (which such an overhead is a case of)
    also converts counter tokens to the model's tokens.
    """

    def __init__(
        self,
        *,
        settings: Settings | None = None,
        store: Store | None = None,
        counter: TokenCounter | None = None,
        summarizer: Summarizer | None = None,
        files: FileSource | None = None,
        state: SessionState | None = None,
        overhead_tokens: int = 0,
        calibration: Calibration | None = None,
        transcript_path: str | None = None,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self.store = store if store is not None else open_store()
        self.counter = CachedCounter(counter if counter is not None else make_counter(self.settings.counter))
        self.summarizer = summarizer if summarizer is not None else make_summarizer(self.settings)
        self.files = files if files is not None else DiskFiles()
        self.tracker = CompactionTracker()
        self.calibration = calibration if calibration is not None else Calibration(overhead=overhead_tokens)
        self.transcript_path = transcript_path
        self._messages: list[Message] = []
        self._tally = MessageTally(self.counter)
        self._builder = StateBuilder(state)
        self._deduper = Deduper(self._builder.state.dedup, self.settings.dedup)
        self._tool_names: dict[str, str] = {}
        self._watchers: list[StalenessWatcher] = []

    @property
    def messages(self) -> list[Message]:
        """The messages to send to the model now (do not mutate; use ``replace_messages``)."""
        return self._messages

    def replace_messages(self, messages: Sequence[Message]) -> None:
        """Replace the whole history (for example to strip usage that no longer applies)."""
        self._messages = list(messages)
        self._tally.reset(self._messages)

    def forget_recorded_usage(self) -> None:
        """Drop recorded ``usage`` from every message: it described a context this one no longer is.

        The estimate then counts the messages (calibrated) until a new
        answer records usage again. Counts are unchanged: usage is not content.
        """
        self._messages = [m.model_copy(update={"usage": None}) if m.usage else m for m in self._messages]
        self._tally.forget_usage(self._messages)

    @property
    def state(self) -> SessionState:
        """The session state as of the last message added (live)."""
        return self._builder.state

    # -- adding ------------------------------------------------------------

    def add_message(
        self,
        message: Message,
        *,
        tool_use_results: Mapping[str, Any] | None = None,
        permission_mode: str | None = None,
    ) -> Message:
        """Add one message; returns it as kept (tool results possibly deduplicated).

        ``tool_use_results`` maps a tool_use id to the tool's structured
        output when the loop has it (Claude Code's ``toolUseResult``): it
        lets the session state learn, for example, a Read's line range.
        """
        if message.role == "assistant":
            self.tracker.next_turn()
            for use in message.tool_uses():
                self._tool_names[use.id] = use.name
        if self.settings.dedup.enabled and message.tool_results():
            message = self._context_deduper().apply_to_message(message, self._tool_names)
        self._builder.apply_message(message, tool_use_results=tool_use_results, permission_mode=permission_mode)
        self._messages.append(message)
        self._tally.append(message)
        return message

    def _context_deduper(self) -> Deduper:
        """The one ``Deduper`` of the current context, made anew when the state's dedup table is replaced."""
        if self._deduper.state is not self.state.dedup:
            self._deduper = Deduper(self.state.dedup, self.settings.dedup)
        return self._deduper

    def add_tool_result(
        self, tool_use_id: str, content: str, *, is_error: bool = False, structured: Any = None
    ) -> Message:
        """Add the result of one tool call as a user message (see ``add_message``)."""
        message = Message(
            role="user",
            content=[ToolResultBlock(tool_use_id=tool_use_id, content=content, is_error=is_error)],
        )
        results = {tool_use_id: structured} if structured is not None else None
        return self.add_message(message, tool_use_results=results)

    # -- deciding ----------------------------------------------------------

    def context_tokens(self) -> int:
        """The context size now: the last recorded usage plus newer messages,
        else the calibrated count of every message."""
        anchored = self._tally.anchored_estimate()
        if anchored is None:
            return self.calibration.tokens(self._tally.total)
        return anchored

    def should_compact(self) -> Decision:
        """Whether the policy says to auto-compact now (reads only)."""
        return should_compact(self.context_tokens(), self.settings, self.tracker)

    # -- acting ------------------------------------------------------------

    def compact(
        self,
        trigger: Trigger = "manual",
        instructions: str | None = None,
        *,
        hook_instructions: str | None = None,
    ) -> CompactionResult:
        """Compact now. On success the session continues from the result's messages.

        On failure (``result.ok`` false) nothing changes but the tracker,
        which stops auto-compaction after repeated failures.
        """
        if not self.settings.policy.compact:
            refused = CompactionDisabled("compaction is turned off (policy.compact, COMPACTOR_DISABLE_COMPACT)")
            return failed_result(
                self.messages, self.state, refused, trigger=trigger,
                threshold=auto_compact_threshold(self.settings), pre_tokens=self.context_tokens(),
                counter_name=self.counter.name,
            )
        options = CompactOptions(
            tail_tokens=self.settings.pipeline.tail_tokens,
            threshold=auto_compact_threshold(self.settings),
            calibration=self.calibration,
            budgets=self.settings.attachments,
            transcript_path=self.transcript_path,
            recovery_tools=tuple(self.settings.dedup.recovery_tools),
            memory_db=self.settings.pipeline.memory_db,
        )
        result = compact(
            self.messages,
            self.state,
            store=self.store,
            counter=self.counter,
            summarizer=self.summarizer,
            files=self.files,
            trigger=trigger,
            instructions=instructions,
            hook_instructions=hook_instructions,
            options=options,
            pre_tokens=self.context_tokens(),
            sizes=self._tally.sizes,
        )
        if not result.ok:
            self.tracker.record_failure(self.settings)
            return result
        self.tracker.record_success(self.settings, trigger)
        self._messages = list(result.messages)
        counted = [entry.tokens for entry in result.report.context]  # as the pipeline counted them
        self._tally.reset(self._messages, counted if len(counted) == len(self._messages) else None)
        self.forget_recorded_usage()
        self._builder = StateBuilder(result.state)
        for watcher in self._watchers:
            watcher.state = result.state
        for message in self.messages:
            if message.role == "assistant":
                # Calls whose results are still to come must be known to the new builder.
                self._builder.apply_message(message)
        return result

    def watch_read_files(
        self,
        roots: Sequence[str | os.PathLike[str]] | None = None,
        *,
        on_stale: Callable[[list[str]], None] | None = None,
    ) -> StalenessWatcher:
        """Watch ``roots`` (default: the session's cwd) and mark read files that change on disk.

        The next compaction then restores them saying they changed since they
        were read. The watcher follows the session across compactions; call
        its ``stop()`` when done.

        Raises:
            attachments.WatchError: no existing folder to watch, or the watcher failed to start.
        """
        folders = list(roots) if roots is not None else [self.state.cwd or os.getcwd()]
        watcher = StalenessWatcher(self.state, roots=folders, on_stale=on_stale).start()
        self._watchers.append(watcher)
        return watcher

    def maybe_compact(self, instructions: str | None = None) -> CompactionResult | None:
        """Auto-compact when the policy says so; None when it does not."""
        if not self.should_compact().compact:
            return None
        return self.compact("auto", instructions)

    def retrieve(
        self,
        ref: str,
        *,
        query: str | None = None,
        lines: tuple[int, int] | None = None,
        bytes: tuple[int, int] | None = None,  # noqa: A002 - the contract's name
    ) -> Retrieval:
        """Bring back what a handle names: exactly, by query, or by line/byte range.

        Raises:
            ccr.InvalidHandle: ``ref`` is not a handle, marker or ``ccr://`` pointer.
            ccr.HandleNotFound: nothing is stored under it.
        """
        return self.store.retrieve(ref, query=query, lines=lines, byte_range=bytes)

    def answer_recovery_call(self, tool_use_id: str, tool_input: dict[str, Any]) -> Message:
        """Answer a call of ``compactor.recovery.RECOVERY_TOOL`` and add it as its tool result.

        The answer is recovery output: it is never deduplicated. A bad or
        unknown handle comes back as an error result the model can read.
        """
        answer = recover(self.store, tool_input)
        return self.add_tool_result(tool_use_id, answer.content, is_error=answer.is_error)

    def tokens_of_messages(self) -> int:
        """The counter's total for the current messages (uncalibrated, no recorded usage)."""
        return self._tally.total
