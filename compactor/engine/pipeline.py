"""The compaction pipeline: ``compact(...)`` turns a long conversation into a short one.

Steps (docs/ARCHITECTURE.md, "The flow of one compaction"):

1. snapshot the read-file state, then clear it (and the loaded memory paths);
2. split into a head to summarize and a preserved tail of complete API rounds;
3. name every dropped span for CCR (fail closed: no handle, no drop);
   recovered content in the head becomes a pointer to the recovery call;
4. summarize the head;
5. build the attachments (files, skills, plan, tasks, deltas, recalled memories) under budgets
   (``compactor.engine.attachment_step``);
6. render: boundary marker, summary message, tail, attachment messages;
7. report what happened, with a new ``SessionState``, and store everything
   named in one transaction.

Whether to compact is decided elsewhere (``compactor.engine.policy``); this module
only acts. Any failure returns the caller's messages unchanged with a report
that says why: nothing transformed escapes without its handles.

One compaction is one store transaction. Everything it stores (the head's
spans in step 3, the cut tails of files, skills and memories in step 5, and
the records a caller asks to store with it, ``also_store``: a replay's
transcript segment) is kept in a ``StoreBatch`` while the compaction is
built, and written with a single ``put_many`` at the end of step 7, after
every check and right before the result is returned. Handles are content
addresses (``ccr.handle_for``), so the summary and the attachments name them
before the write; the check that a summary cites only stored handles counts
the batch. The write is all or nothing: a refusal (``ccr.BudgetExceeded``, a
store error) fails the compaction closed with nothing stored and nothing
dropped, and a compaction that fails before the write (a summarizer error, a
context that would not shrink) stores nothing either. With SQLite's
synchronous commits, that is one sync per compaction.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from attachments import AttachmentSet, FileSource, mark_announced
from ccr import PutRequest, Store, marker
from ccr.batch import StoreBatch
from compactor.core.errors import CompactionDidNotShrink, CompactionFailed, CompactorError, NothingToCompact
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message, TextBlock
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.templating import render
from compactor.core.tokens import TokenCounter
from compactor.engine.attachment_step import restore_attachments
from compactor.engine.cache import prefix_effect
from compactor.engine.dedup import expand_references, reset_after_compaction
from compactor.engine.head_storage import store_spans, without_recovered_content
from compactor.engine.options import CompactBoundary, CompactionResult, CompactOptions
from compactor.engine.report import (
    BriefingReport,
    CompactionReport,
    DedupReport,
    DroppedSpan,
    Trigger,
    context_entries,
)
from compactor.engine.rounds import split_rounds, split_tail
from compactor.engine.spans import Span, head_span, head_spans, not_text
from compactor.engine.survival import context_retention, continuation, fact_survival, model_text
from compactor.summarizers.base import CitingSummarizer, Summarizer, Summary
from compactor.summarizers.briefing_text import listing_share
from compactor.summarizers.ledger import merge_messages, tail_view
from compactor.summarizers.ledger_text import listing_span, with_index
from compactor.summarizers.provider_compaction import (
    ProviderView,
    lead_blocks,
    provider_note,
    provider_text,
    provider_view,
    through_last_block,
)

__all__ = [
    "CompactBoundary",
    "CompactOptions",
    "CompactionResult",
    "compact",
    "briefing_report",
    "index_messages",
    "context_entries",
    "failed_result",
    "head_and_tail",
    "merge_instructions",
    "model_text",
    "split_tail",
    "store_spans",
    "without_recovered_content",
]

LAST_ROUND_TOKENS = 6_000
"""The last API round is kept whole when within this, even past ``tail_tokens`` (unless that is 0):
the latest exchange is what the agent carries on from."""
TAIL_SHARE = 0.35
"""Of an opted-in shared ceiling (``CompactOptions.context_tokens``), the most the preserved tail may take."""


def merge_instructions(custom: str | None, hook: str | None) -> str | None:
    """Custom instructions (``/compact <text>``) first, hook-provided ones after."""
    parts = [p.strip() for p in (custom, hook) if p and p.strip()]
    return "\n\n".join(parts) or None


def head_and_tail(
    messages: Sequence[Message], sizes: Sequence[int], opts: CompactOptions
) -> tuple[list[Message], list[Message]]:
    """The (head, tail) a compaction with ``opts`` would make of ``messages`` (their counts ``sizes``):
    the tail within ``opts.tail_tokens`` and ``TAIL_SHARE`` of a shared ceiling (``split_tail``; the last
    round whole within ``LAST_ROUND_TOKENS``), and
    never in front of a provider's compaction block (``through_last_block``)."""
    size_of = {id(m): n for m, n in zip(messages, sizes, strict=True)}
    tail_limit = (
        opts.tail_tokens
        if opts.context_tokens is None
        else min(opts.tail_tokens, int(opts.context_tokens * TAIL_SHARE))
    )
    last_round = max(opts.tail_tokens, LAST_ROUND_TOKENS) if opts.tail_tokens else 0
    head, tail = split_rounds(messages, tail_limit, lambda m: size_of[id(m)], last_round_tokens=last_round)
    # A provider's own compaction is never cut off from what it replaced: the head holds the last one.
    return through_last_block(head, tail)


def compact(
    messages: Sequence[Message],
    state: SessionState,
    *,
    store: Store,
    counter: TokenCounter,
    summarizer: Summarizer,
    files: FileSource,
    trigger: Trigger = "manual",
    instructions: str | None = None,
    hook_instructions: str | None = None,
    options: CompactOptions | None = None,
    pre_tokens: int | None = None,
    sizes: Sequence[int] | None = None,
    also_store: Sequence[PutRequest] = (),
) -> CompactionResult:
    """Compact ``messages``; see the module docstring for the steps.

    ``pre_tokens`` is the context size that triggered the compaction when the
    caller knows it better (for example from recorded usage); by default the
    messages are counted. ``sizes`` are the messages' counts when the caller
    keeps them (the Orchestrator does), so that nothing is counted twice.
    ``also_store`` are records to store in the compaction's own transaction
    (a replay's transcript segment): stored if and only if the compaction
    succeeds, under their content handles (``ccr.handle_for``), which the
    summary may cite. Never raises for a failure while compacting: the
    result's ``ok`` is false and its report carries ``error`` and ``error_id``.
    """
    opts = options or CompactOptions()
    if sizes is None or len(sizes) != len(messages):
        sizes = [counter.count_message(m) for m in messages]
    pre = opts.calibration.tokens(sum(sizes)) if pre_tokens is None else pre_tokens
    try:
        return _compact(
            messages,
            sizes,
            state,
            store,
            counter,
            summarizer,
            files,
            trigger,
            merge_instructions(instructions, hook_instructions),
            opts,
            pre,
            also_store,
        )
    except (CompactorError, UnicodeEncodeError) as exc:  # text no UTF-8 holds (a lone surrogate) cannot be stored
        error = exc if isinstance(exc, CompactorError) else not_text(messages, exc)
        return failed_result(
            messages, state, error, trigger=trigger, threshold=opts.threshold, pre_tokens=pre, counter_name=counter.name
        )


def failed_result(
    messages: Sequence[Message],
    state: SessionState,
    exc: CompactorError,
    *,
    trigger: Trigger,
    threshold: int,
    pre_tokens: int,
    counter_name: str,
) -> CompactionResult:
    """The result of a compaction that did not happen: messages and state unchanged, and why."""
    report = CompactionReport(
        trigger=trigger,
        ok=False,
        error=str(exc),
        error_id=exc.error_id,
        pre_tokens=pre_tokens,
        post_tokens=pre_tokens,
        threshold=threshold,
        counter=counter_name,
    )
    return CompactionResult(ok=False, boundary=None, messages=list(messages), state=state, report=report)


@dataclass(frozen=True)
class _NamedHead:
    """What step 3 made of the head: every span named for CCR (kept in the batch) and what is summarized."""

    head_tokens: int
    provided: ProviderView | None
    """The provider's own compaction in the head, if it holds one."""
    reader: list[Message]
    """What the summarizer reads: the head, or what follows a provider's last block (from it, for a
    summarizer that reads provider blocks)."""
    spans: list[Span]
    stored: list[str]
    """The handle of each span; the first is the whole head's."""
    span_tokens: list[int]
    ledger: SessionLedger
    """The session ledger with this head taken in."""

    @property
    def head_handle(self) -> str:
        return self.stored[0]


def _compact(
    messages: Sequence[Message],
    sizes: Sequence[int],
    state: SessionState,
    store: Store,
    counter: TokenCounter,
    summarizer: Summarizer,
    files: FileSource,
    trigger: Trigger,
    instructions: str | None,
    opts: CompactOptions,
    pre: int,
    also_store: Sequence[PutRequest],
) -> CompactionResult:
    """Steps 1-7 of the module docstring, each a function below.

    Raises:
        CompactorError: the compaction failed; nothing was stored and nothing dropped.
    """
    # Everything this compaction stores, written in one transaction at the end (module docstring).
    batch = StoreBatch()
    batch.put_many(also_store)

    # 1. snapshot the read-file state, then clear it.
    snapshot, new_state = _snapshot_and_clear(state)

    # 2. split.
    head, tail = head_and_tail(messages, sizes, opts)
    if not head:
        raise NothingToCompact("nothing to compact: the conversation is empty")

    # 3. name every dropped span (stored at 7), and take the head into the session ledger.
    named = _name_dropped_spans(
        head,
        sizes[: len(head)],
        state,
        new_state,
        summarizer=summarizer,
        counter=counter,
        opts=opts,
        trigger=trigger,
        batch=batch,
    )
    tail = expand_references(tail, new_state.dedup)  # a result first shown in the head is shown again
    view = _where_it_stands(named.ledger, tail, state)
    # 4. summarize.
    summary = _summarize(
        named, tail, view, summarizer, instructions, cwd=new_state.cwd, batch=batch, store=store, counter=counter
    )
    summary_message = _summary_message(summary, named, opts, trigger)
    summary_tokens = counter.count_message(summary_message)
    tail_sizes = _counts(tail, messages, sizes, counter)

    # 5. attachments under their own budgets (or what the summary and the tail left of a shared ceiling).
    attached = restore_attachments(
        snapshot,
        new_state,
        tail,
        summary,
        history=messages,
        room=summary_tokens + sum(tail_sizes),
        opts=opts,
        counter=counter,
        files=files,
        batch=batch,
    )

    # 6. render: the session's index (bookkeeping the briefing leaves out) closes the context.
    out = [summary_message, *tail, *attached.messages, *(index := index_messages(summary))]

    # 7. report and new state.
    dedup = _close_state(new_state, named.ledger)
    # Attachments count as rendered (their budgets are of that text); a tail message kept as it was, in ``sizes``.
    out_sizes = [summary_tokens, *tail_sizes, *(a.tokens for a in attached.attachments)]
    out_sizes += [counter.count_message(m) for m in index]
    _check_shrinks(out_sizes, sizes)
    post = opts.calibration.tokens(sum(out_sizes))
    report = _report(
        named,
        view,
        summary,
        out,
        out_sizes,
        tail,
        attached,
        dedup,
        sizes=sizes,
        trigger=trigger,
        pre=pre,
        post=post,
        opts=opts,
        summarizer=summarizer,
        counter=counter,
        cwd=new_state.cwd,
    )
    boundary = CompactBoundary(
        trigger=trigger, pre_tokens=pre, post_tokens=post, head_handle=named.head_handle, timestamp=time.time()
    )
    batch.store_in(store)  # the one transaction; a refusal raises and nothing is dropped
    return CompactionResult(ok=True, boundary=boundary, messages=out, state=new_state, report=report)


def _where_it_stands(ledger: SessionLedger, tail: list[Message], state: SessionState) -> SessionLedger:
    """``ledger`` with ``tail`` merged too: where the work stands at the end of the context, merged once
    for the summary and the report; in the mode the session is in now, as ``state`` knows it (shift+tab
    enters and leaves plan mode without a call the ledger could see)."""
    view = tail_view(ledger, tail) if tail else ledger
    ledger.plan_mode = view.plan_mode = state.in_plan_mode
    return view


def index_messages(summary: Summary) -> list[Message]:
    """The session's index as the message that closes the compacted context (none without one)."""
    return [Message(role="user", content=summary.index, is_meta=True)] if summary.index else []


def briefing_report(summary: Summary) -> BriefingReport:
    """The briefing figures of a summary: its bookkeeping share, and what it proposes next."""
    facts = summary.briefing
    return BriefingReport(
        listing_share=round(listing_share(summary.text), 3),
        next_step=facts.next_step if facts is not None else None,
        next_files=facts.next_files if facts is not None else [],
        check=facts.check if facts is not None else None,
        finished=facts.finished if facts is not None else None,
        index_chars=len(summary.index),
    )


def _check_shrinks(out_sizes: Sequence[int], sizes: Sequence[int]) -> None:
    """Raises ``CompactionDidNotShrink`` unless the compacted context is smaller than the conversation."""
    if sum(out_sizes) >= sum(sizes):
        raise CompactionDidNotShrink(
            f"the compacted context ({sum(out_sizes):,} tokens) would be no smaller than the "
            f"conversation ({sum(sizes):,} tokens); it was left as it was"
        )


def _snapshot_and_clear(state: SessionState) -> tuple[dict[str, ReadFileEntry], SessionState]:
    """Step 1: the read-file state as it was, and the new state, which forgets it (and the loaded memory paths)."""
    snapshot = dict(state.read_files)
    # What the new state forgets is left out before the deep copy rather than copied and cleared:
    # the dedup entries seen are most of a state (``reset_after_compaction`` forgets them too).
    new_state = state.model_copy(
        update={
            "read_files": {},
            "memory_paths": [],
            "dedup": state.dedup.model_copy(update={"seen": {}}),
        }
    ).model_copy(deep=True)
    return snapshot, new_state


def _counts(
    messages: Sequence[Message], known: Sequence[Message], sizes: Sequence[int], counter: TokenCounter
) -> list[int]:
    """The count of each of ``messages``: from ``sizes`` (the counts of ``known``) for the very same
    message objects, counted anew for the others."""
    size_of = {id(m): n for m, n in zip(known, sizes, strict=True)}
    return [size_of[id(m)] if id(m) in size_of else counter.count_message(m) for m in messages]


def _name_dropped_spans(
    head: list[Message],
    head_sizes: Sequence[int],
    state: SessionState,
    new_state: SessionState,
    *,
    summarizer: Summarizer,
    counter: TokenCounter,
    opts: CompactOptions,
    trigger: Trigger,
    batch: StoreBatch,
) -> _NamedHead:
    """Step 3: name every dropped span, kept in ``batch`` before anything is dropped, and take the head
    into the session ledger, whose full listing is stored in place of the summarizer's own.

    Recovered content is a view of what the store already holds: it is not stored or summarized again.
    """
    head = without_recovered_content(head, opts.recovery_tools)
    head_tokens = sum(head_sizes)
    # What a provider compacted is not summarized again: the summarizer reads what follows its last
    # block (a provider summarizer the block on), and the block itself leads the summary message.
    provided = provider_view(head)
    reader = (
        head
        if provided is None
        else (provided.from_block if getattr(summarizer, "reads_provider_blocks", False) is True else provided.messages)
    )
    reader_sizes = _counts(reader, head, head_sizes, counter)
    if not isinstance(summarizer, CitingSummarizer):
        spans = head_spans(reader)
    elif getattr(summarizer, "lists_facts", False) is True:  # its listing would be replaced below
        spans = summarizer.spans(reader, listing=False)  # type: ignore[call-arg]
    else:
        spans = summarizer.spans(reader)
    if provided is not None:  # the stored head is the whole head, every byte before the block too
        spans = [head_span(head), *(s for s in spans if s.kind != "head")]
    ledger = merge_messages(  # what a provider compacted is its summary's to tell, not ours again
        new_state.ledger,
        reader,
        result_handles={s.ref: s.handle for s in spans if s.kind == "tool_result" and s.ref},
        message_handles={
            s.message_index: s.handle for s in spans if s.kind == "user_message" and s.message_index is not None
        },
    )
    spans = [s for s in spans if s.kind != "facts"] + [listing_span(ledger, new_state.cwd)]
    stored, span_tokens = store_spans(
        spans,
        batch,
        head_sizes=reader_sizes,
        counter=counter,
        producer="compactor.engine.pipeline",
        head=reader,
        metadata={"trigger": trigger, **({"session_id": state.session_id} if state.session_id else {})},
    )
    span_tokens[0] = head_tokens
    return _NamedHead(
        head_tokens=head_tokens,
        provided=provided,
        reader=reader,
        spans=spans,
        stored=stored,
        span_tokens=span_tokens,
        ledger=ledger,
    )


def _summarize(
    named: _NamedHead,
    tail: list[Message],
    view: SessionLedger,
    summarizer: Summarizer,
    instructions: str | None,
    *,
    cwd: str | None,
    batch: StoreBatch,
    store: Store,
    counter: TokenCounter,
) -> Summary:
    """Step 4: the summary of what the summarizer reads, and the session's index after it; ``view`` is
    the ledger with ``tail`` merged too (``tail_view``), handed to a summarizer that takes it (``takes_view``).

    Raises:
        CompactionFailed: the summary cites a handle that neither this compaction nor an earlier one stored.
    """
    if not named.reader:  # the head ends with the provider's block: nothing after it to summarize
        summary = Summary(text="", summarizer=summarizer.name)
    elif isinstance(summarizer, CitingSummarizer):
        shared = {"view": view} if getattr(summarizer, "takes_view", False) is True else {}
        summary = summarizer.summarize(
            named.reader, instructions, spans=named.spans, cwd=cwd, ledger=named.ledger, tail=tail, **shared
        )
    else:
        summary = summarizer.summarize(named.reader, instructions)
    if not summary.index and not named.ledger.is_empty:
        # A model's summary (or a provider's) is followed by the same index as the extractive one.
        listing = next((s.handle for s in named.spans if s.kind == "facts"), named.head_handle)
        summary = with_index(summary, named.ledger, tail, listing=listing, cwd=cwd, count=counter.count_text)
    # A summary may cite what earlier compactions stored too; it may not cite what was never stored.
    missing = [h for h in summary.handles if not batch.holds(h) and not store.contains(h)]
    if missing:
        raise CompactionFailed(f"summary cites handles that were not stored: {', '.join(missing)}")
    return summary


def _summary_message(summary: Summary, named: _NamedHead, opts: CompactOptions, trigger: Trigger) -> Message:
    """The summary as the message that opens the compacted context (the provider's blocks first)."""
    summary_text = render(
        "summary_message.j2",
        head=marker(named.head_handle),
        transcript_path=opts.transcript_path,
        dropped_rounds=summary.dropped_rounds,
        summary=summary.text.strip(),
        trigger=trigger,
        provider=provider_note(summary.provider_blocks, named.provided),
    )
    leading = lead_blocks(summary.provider_blocks, named.provided)
    return Message(
        role="user",
        content=[*leading, TextBlock(text=summary_text)] if leading else summary_text,
        is_compact_summary=True,
    )


def _close_state(new_state: SessionState, ledger: SessionLedger) -> DedupReport:
    """Step 7, the new state: the dedup hits and savings since the last compaction are counted (and
    returned) and its entries forgotten, the ledger counts one more compaction, and the attachments
    just announced the full sets again."""
    dedup = new_state.dedup
    hits = sum(dedup.hits.values()) - dedup.hits_at_last_compaction
    saved = sum(dedup.saved_bytes.values()) - dedup.saved_bytes_at_last_compaction
    dedup.hits_at_last_compaction += hits
    dedup.saved_bytes_at_last_compaction += saved
    reset_after_compaction(dedup)
    ledger.compactions += 1
    mark_announced(new_state)
    return DedupReport(hits=hits, saved_bytes=saved)


def _report(
    named: _NamedHead,
    view: SessionLedger,
    summary: Summary,
    out: list[Message],
    out_sizes: list[int],
    tail: list[Message],
    attached: AttachmentSet,
    dedup: DedupReport,
    *,
    sizes: Sequence[int],
    trigger: Trigger,
    pre: int,
    post: int,
    opts: CompactOptions,
    summarizer: Summarizer,
    counter: TokenCounter,
    cwd: str | None,
) -> CompactionReport:
    """Step 7, the report: what was dropped and stored, what was attached, and how much of the facts
    the compacted context ``out`` (its counts ``out_sizes``) keeps, read at the end of the context
    (``view``: the ledger with ``tail`` merged too); ``sizes`` are the counts of the conversation's messages."""
    ledger = named.ledger
    retention = context_retention(
        list(view.paths),
        list(view.commands),
        [m.text for m in view.user_messages],
        model_text(out),
        cwd=cwd,
    )
    leading = lead_blocks(summary.provider_blocks, named.provided)
    return CompactionReport(
        trigger=trigger,
        pre_tokens=pre,
        post_tokens=post,
        threshold=opts.threshold,
        summary_tokens=out_sizes[0],
        head_tokens=named.head_tokens,
        summarizer=summarizer.name,
        counter=counter.name,
        dropped=[
            DroppedSpan(
                handle=h,
                kind=s.kind,
                tokens=tokens,
                bytes=len(s.data),
                piece_of=None if h == named.head_handle else named.head_handle,
            )
            for s, h, tokens in zip(named.spans, named.stored, named.span_tokens, strict=True)
        ],
        attachments=attached.entries,
        skipped=attached.skipped,
        dedup=dedup,
        survival=fact_survival(
            named.reader,
            "\n".join([*(provider_text(b) for b in leading), summary.text, summary.index]),
            cwd=cwd,
            stored={s.handle: s.data for s in named.spans if s.kind != "head"},
        ),
        retention=retention,
        continuation=continuation(view.current_request, [item.text for item in view.open_items()], summary.text),
        ledger_facts=len(ledger.paths) + len(ledger.commands) + len(ledger.errors) + len(ledger.user_messages),
        summary=summary.text.strip(),
        summary_sources=summary.sources,
        context=context_entries(out, out_sizes, tail_length=len(tail), index=bool(summary.index)),
        briefing=briefing_report(summary),
        # The summary comes first: the cached prefix is kept up to message 0, that is not at all.
        cache=prefix_effect(sizes, 0, len(sizes) if opts.cached_messages is None else opts.cached_messages),
    )
