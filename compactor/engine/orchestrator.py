"""The ``Orchestrator``: the API an agent loop calls.

It holds one session: its messages, its ``SessionState``, a token counter
with a per-message cache, the dedup table, the CCR store and the policy's
tracker. Adding a message costs the same at any history length: it is
counted once into a ``MessageTally`` (running totals and a usage anchor that
moves forward), and tool results go through one ``Deduper`` kept for the
whole context. The loop adds messages and tool results as they happen (dedup is
applied to each tool result before anything is counted), asks
``should_compact()``, and calls ``compact()``; ``retrieve()`` brings back
anything a compaction dropped. With masking on (``settings.masking``), old
large tool results become stubs as user-side messages arrive, once the
context passes the soft threshold and the cache policy allows
(``compactor.engine.masking``); each step is a ``MaskingReport`` in
``masking_steps``, with its prompt-cache effect (``compactor.engine.cache``).
With an LLM summarizer (and ``settings.background.enabled``), the head that
has aged out of the tail window is summarized in the background as the
context grows (``compactor.summarizers.background``), and ``compact()``
uses the latest such summary plus the extractive rendering of what is newer,
waiting on the model at most ``settings.background.max_wait_seconds``.
``acompact()`` is the same for an event loop; ``close()`` joins the worker.

::

    orch = Orchestrator()
    orch.add_message(Message(role="user", content="Fix the failing test"))
    ...
    if orch.should_compact().compact:
        orch.compact("auto")          # or, in an event loop: await orch.acompact("auto")
    orch.close()
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from attachments import DiskFiles, FileSource, StalenessWatcher
from ccr import PutRequest, Retrieval, Store, open_store
from ccr.recovery import recover
from compactor.claude_code.transcript import StateBuilder
from compactor.core.calibration import Calibration
from compactor.core.config import Settings, context_budget, load_settings
from compactor.core.errors import CompactionDisabled, UsageError
from compactor.core.messages import Message, ToolResultBlock
from compactor.core.session import SessionState
from compactor.core.tokens import CachedCounter, MessageTally, TokenCounter, make_counter
from compactor.engine.cache import PromptCache, message_time, prefix_effect
from compactor.engine.dedup import Deduper
from compactor.engine.masking import Masker, masking_decision
from compactor.engine.pipeline import CompactionResult, CompactOptions, compact, failed_result, head_and_tail
from compactor.engine.policy import CompactionTracker, Decision, auto_compact_threshold, should_compact
from compactor.engine.report import MaskingReport, Trigger
from compactor.summarizers import Summarizer, make_summarizer

if TYPE_CHECKING:
    from compactor.summarizers.background import BackgroundSummaries
    from compactor.summarizers.background import Choice as BackgroundChoice

__all__ = ["Orchestrator"]


class Orchestrator:
    """One agent session under compaction.

    Everything is optional: settings load from the environment (and
    ``COMPACTOR_CONFIG``), the store is ``$COMPACTOR_HOME/ccr.db``, files are
    re-read from disk, the summarizer is the one the settings name.
    ``overhead_tokens`` is context the messages do not show (system prompt,
    tool definitions); it is added to every estimate that has no recorded
    usage to anchor on. ``calibration`` (which such an overhead is a case of)
    also converts counter tokens to the model's tokens. A ``counter`` that is
    already a ``CachedCounter`` is used as it is, so that Orchestrators
    handed the same one count each text once between them.

    ``background`` turns the background summary on or off (default:
    ``settings.background.enabled``, for an LLM summarizer only).
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
        background: bool | None = None,
    ) -> None:
        self.settings = settings if settings is not None else load_settings()
        self.store = store if store is not None else open_store()
        if isinstance(counter, CachedCounter):
            self.counter = counter  # its counts are shared with whoever else holds it (a tune worker's replays)
        else:
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
        self.cache = PromptCache(self.settings.masking.cache_ttl_seconds)
        """The prompt cache as the requests so far left it (``compactor.engine.cache``)."""
        self.masking_steps: list[MaskingReport] = []
        """Every masking step (failed ones have ``ok`` false), oldest first."""
        self._masker = Masker(self.settings.masking, self.settings.dedup.recovery_tools)
        self._masking_refused = False
        self._clock: float | None = None  # the latest recorded time seen (None: use the wall clock)
        self._owns_summarizer = summarizer is None
        self.background: BackgroundSummaries | None = self._make_background(background)
        """The background summaries of an LLM summarizer (None: every compaction summarizes in place)."""
        self._background_mark: int | None = None  # context tokens when the latest background request started

    def _make_background(self, wanted: bool | None) -> BackgroundSummaries | None:
        if not (self.settings.background.enabled if wanted is None else wanted) or self.summarizer.name == "extractive":
            return None
        from compactor.summarizers.llm import LLMClientSummarizer

        if not isinstance(self.summarizer, LLMClientSummarizer):
            return None
        from compactor.summarizers.background import BackgroundSummaries
        from compactor.summarizers.extractive import ExtractiveSummarizer

        self._extractive = ExtractiveSummarizer(
            facts_tokens=self.settings.pipeline.summary_facts_tokens, counter=self.counter
        )
        return BackgroundSummaries(
            self.summarizer, self.settings.background, recovery_tools=self.settings.dedup.recovery_tools
        )

    def close(self) -> None:
        """Join the background worker (a request in flight finishes first) and close a summarizer
        the Orchestrator made itself. Closing twice is harmless."""
        if self.background is not None:
            self.background.close()
        close = getattr(self.summarizer, "close", None)
        if self._owns_summarizer and callable(close):
            close()
            self._owns_summarizer = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def messages(self) -> list[Message]:
        """The messages to send to the model now (do not mutate; use ``replace_messages``)."""
        return self._messages

    def replace_messages(self, messages: Sequence[Message]) -> None:
        """Replace the whole history (for example to strip usage that no longer applies)."""
        self._messages = list(messages)
        self._tally.reset(self._messages)
        if self.settings.masking.enabled:
            self._masker.reset(self._messages)
        self._conversation_changed()

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

    def pin(self, item: str | Message) -> str:
        """Keep ``item`` (a line of text, or a message's text) word for word in every later summary.

        For rules a user states once ("never push to main"): the session ledger
        carries pins across every compaction, and each summary (extractive or a
        model's, which is told to) shows them under the request. Pinning the
        same text twice keeps one. Returns the text pinned.

        Raises:
            UsageError: the text is empty.
        """
        text = (item.text() if isinstance(item, Message) else item).strip()
        if not text:
            raise UsageError("pin: nothing to pin (the text is empty)")
        pins = self._builder.state.ledger.pins
        if text not in pins:
            pins.append(text)
        return text

    def unpin(self, text: str) -> bool:
        """Stop keeping ``text`` in later summaries; False when it was not pinned."""
        pins = self._builder.state.ledger.pins
        if text.strip() in pins:
            pins.remove(text.strip())
            return True
        return False

    @property
    def pins(self) -> list[str]:
        """What is pinned, in the order pinned (a copy)."""
        return list(self._builder.state.ledger.pins)

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
        now = self._now(message)
        if message.role == "assistant":
            self.tracker.next_turn()
            if not self._messages or self._messages[-1].role != "assistant":
                self.cache.request(len(self._messages), now)  # the request this answers
            for use in message.tool_uses():
                self._tool_names[use.id] = use.name
        if self.settings.dedup.enabled and message.tool_results():
            message = self._context_deduper().apply_to_message(message, self._tool_names)
        self._builder.apply_message(message, tool_use_results=tool_use_results, permission_mode=permission_mode)
        self._messages.append(message)
        self._tally.append(message)
        if self.settings.masking.enabled:
            self._masker.observe(len(self._messages) - 1, message)
            if message.role == "user":
                self.mask(now)
        self._refresh_background()
        return message

    def _conversation_changed(self) -> None:
        """Earlier messages changed: background summaries of them no longer apply."""
        if self.background is not None:
            self.background.invalidate()
        self._background_mark = None

    def _refresh_background(self) -> None:
        """Start a background summary of the aged-out head when the context grew enough since the last.

        Costs a few comparisons until then; the head is split only when a request may start.
        """
        if self.background is None:
            return
        settings = self.settings.background
        threshold = auto_compact_threshold(self.settings)
        tokens = self.context_tokens()
        if tokens < settings.start_share * threshold:
            return
        if self._background_mark is not None and tokens - self._background_mark < settings.refresh_share * threshold:
            return
        if self.background.busy():
            return
        head, _ = head_and_tail(self._messages, self._tally.sizes, self._options())
        if head:
            self.background.start(head, cwd=self.state.cwd)
            self._background_mark = tokens  # started, or this head is covered already: not again until it grew

    def _now(self, message: Message) -> float | None:
        """The message's recorded time, else the latest recorded one; None (wall clock) when none was recorded."""
        recorded = message_time(message)
        if recorded is not None:
            self._clock = recorded if self._clock is None else max(self._clock, recorded)
        return self._clock

    def mask(self, now: float | None = None, *, force: bool = False) -> MaskingReport | None:
        """Run a masking step when ``masking_decision`` allows it (``force``: whenever anything is due).

        Masking must be enabled (``settings.masking.enabled``): only then does
        the Orchestrator follow the results as they arrive.

        Returns the step's report (also kept in ``masking_steps``), or None
        when no step ran. A refusal by the store changes nothing and stops
        masking until the next compaction (the report has ``ok`` false).
        """
        if self._masking_refused:
            return None
        tokens = self.context_tokens()
        decision = masking_decision(
            tokens, auto_compact_threshold(self.settings), self.settings.masking, cold=self.cache.is_cold(now)
        )
        if not (decision.run or force):
            return None
        threshold = auto_compact_threshold(self.settings)
        batch = decision.policy == "batch"
        outcome = self._masker.mask(
            self._messages,
            store=self.store,
            counter=self.counter,
            dedup=self.state.dedup,
            tool_names=self._tool_names,
            min_saving=int(threshold * self.settings.masking.batch_min_share) if batch and not force else 0,
            sizes=self._tally.sizes,
            metadata={"session_id": self.state.session_id} if self.state.session_id else None,
        )
        policy = decision.policy or "eager"
        if not outcome.ok:
            self._masking_refused = True
            report = MaskingReport(
                ok=False,
                error=outcome.error,
                error_id=outcome.error_id,
                results=0,
                tokens_saved=0,
                tokens_before=tokens,
                policy=policy,
            )
            self.masking_steps.append(report)
            return report
        if not outcome.changed:
            return None
        sizes = self._tally.sizes
        effect = prefix_effect(sizes, outcome.changed[0], self.cache.cached(now))
        new_sizes = list(sizes)
        for index in outcome.changed:
            known = outcome.sizes.get(index)
            new_sizes[index] = known if known is not None else self.counter.count_message(outcome.messages[index])
        self._messages = outcome.messages
        self._tally.reset(self._messages, new_sizes)
        self.forget_recorded_usage()  # recorded usage measured the context before the step
        self.cache.changed(outcome.changed[0])
        self._conversation_changed()
        report = MaskingReport(
            results=outcome.results,
            superseded=outcome.superseded,
            tokens_saved=sum(sizes) - sum(new_sizes),
            tokens_before=tokens,
            handles=outcome.handles,
            policy=policy,
            cache=effect,
        )
        self.masking_steps.append(report)
        return report

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
        also_store: Sequence[PutRequest] = (),
    ) -> CompactionResult:
        """Compact now. On success the session continues from the result's messages.

        ``also_store`` are records to store in the compaction's one store
        transaction (``compactor.engine.pipeline``): stored if and only if it
        succeeds, under their content handles (``ccr.handle_for``).
        On failure (``result.ok`` false) nothing changes but the tracker,
        which stops auto-compaction after repeated failures.

        With a background summary (``background``), it waits on the model at
        most ``settings.background.max_wait_seconds``; the report's
        ``summary_sources`` says which messages the model's summary covers.
        """
        refused = self._refusal(trigger)
        if refused is not None:
            return refused
        options = self._options()
        choice = None
        if self.background is not None:
            head, _ = head_and_tail(self._messages, self._tally.sizes, options)
            if head:
                choice = self.background.choose(
                    head, wait=self.settings.background.max_wait_seconds, cwd=self.state.cwd
                )
        return self._compact(options, choice, trigger, instructions, hook_instructions, also_store)

    async def acompact(
        self,
        trigger: Trigger = "manual",
        instructions: str | None = None,
        *,
        hook_instructions: str | None = None,
        also_store: Sequence[PutRequest] = (),
    ) -> CompactionResult:
        """``compact`` for an event loop: the wait on a background summary is awaited, not blocked on.

        The compaction itself (extractive rendering, one store transaction)
        runs in the loop's thread, like every other use of the session's store.
        """
        refused = self._refusal(trigger)
        if refused is not None:
            return refused
        options = self._options()
        choice = None
        if self.background is not None:
            head, _ = head_and_tail(self._messages, self._tally.sizes, options)
            if head:
                choice = await self.background.achoose(
                    head, wait=self.settings.background.max_wait_seconds, cwd=self.state.cwd
                )
        return self._compact(options, choice, trigger, instructions, hook_instructions, also_store)

    async def amaybe_compact(self, instructions: str | None = None) -> CompactionResult | None:
        """``maybe_compact`` for an event loop (see ``acompact``)."""
        if not self.should_compact().compact:
            return None
        return await self.acompact("auto", instructions)

    def _refusal(self, trigger: Trigger) -> CompactionResult | None:
        if self.settings.policy.compact:
            return None
        refused = CompactionDisabled("compaction is turned off (policy.compact, COMPACTOR_DISABLE_COMPACT)")
        return failed_result(
            self.messages,
            self.state,
            refused,
            trigger=trigger,
            threshold=auto_compact_threshold(self.settings),
            pre_tokens=self.context_tokens(),
            counter_name=self.counter.name,
        )

    def _options(self) -> CompactOptions:
        return CompactOptions(
            tail_tokens=self.settings.pipeline.tail_tokens,
            context_tokens=context_budget(self.settings),
            threshold=auto_compact_threshold(self.settings),
            calibration=self.calibration,
            budgets=self.settings.attachments,
            transcript_path=self.transcript_path,
            recovery_tools=tuple(self.settings.dedup.recovery_tools),
            memory_db=self.settings.pipeline.memory_db,
            cached_messages=self.cache.cached(self._clock),
        )

    def _compact(
        self,
        options: CompactOptions,
        choice: BackgroundChoice | None,
        trigger: Trigger,
        instructions: str | None,
        hook_instructions: str | None,
        also_store: Sequence[PutRequest],
    ) -> CompactionResult:
        def run(summarizer: Summarizer) -> CompactionResult:
            return compact(
                self.messages,
                self.state,
                store=self.store,
                counter=self.counter,
                summarizer=summarizer,
                files=self.files,
                trigger=trigger,
                instructions=instructions,
                hook_instructions=hook_instructions,
                options=options,
                pre_tokens=self.context_tokens(),
                sizes=self._tally.sizes,
                also_store=also_store,
            )

        if choice is None:
            result = run(self.summarizer)
        else:
            from compactor.summarizers.background import BlendedSummarizer, Choice

            result = run(BlendedSummarizer(self._extractive, choice, llm_name=self.summarizer.name))
            if not result.ok and choice.summary is not None and result.report.error_id == "compaction_did_not_shrink":
                # The model's summary made the context too large: the extractive one alone may fit.
                alone = Choice(None, 0, "with the model's summary the context would not have shrunk")
                result = run(BlendedSummarizer(self._extractive, alone, llm_name=self.summarizer.name))
        if not result.ok:
            self.tracker.record_failure(self.settings)
            return result
        self.tracker.record_success(self.settings, trigger)
        self.cache.changed(0)  # the summary comes first: nothing cached survives
        self._masking_refused = False
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
        if self.settings.masking.enabled:
            self._masker.reset(self._messages)
        self._conversation_changed()
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
        bytes: tuple[int, int] | None = None,
    ) -> Retrieval:
        """Bring back what a handle names: exactly, by query, or by line/byte range.

        Raises:
            ccr.InvalidHandle: ``ref`` is not a handle, marker or ``ccr://`` pointer.
            ccr.HandleNotFound: nothing is stored under it.
        """
        return self.store.retrieve(ref, query=query, lines=lines, byte_range=bytes)

    def answer_recovery_call(self, tool_use_id: str, tool_input: dict[str, Any]) -> Message:
        """Answer a call of ``ccr.recovery.RECOVERY_TOOL`` and add it as its tool result.

        The answer is recovery output: it is never deduplicated. A bad or
        unknown handle comes back as an error result the model can read. It
        holds at most the call's ``max_tokens`` (5,000 unless it says; 0 for
        no bound), with a notice naming the ranges that page through the rest
        (``ccr.recovery``).
        """
        answer = recover(self.store, tool_input, counter=self.counter)
        return self.add_tool_result(tool_use_id, answer.content, is_error=answer.is_error)

    def tokens_of_messages(self) -> int:
        """The counter's total for the current messages (uncalibrated, no recorded usage)."""
        return self._tally.total
