"""The compaction pipeline: ``compact(...)`` turns a long conversation into a short one.

Steps (DESIGN.md, "Data flow"):

1. snapshot the read-file state, then clear it (and the loaded memory paths);
2. split into a head to summarize and a preserved tail of complete API rounds;
3. name every dropped span for CCR (fail closed: no handle, no drop);
   recovered content in the head becomes a pointer to the recovery call;
4. summarize the head;
5. build the attachments (files, skills, plan, tasks, deltas) under budgets;
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

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from attachments import AttachmentSet, Budgets, FileSource, build_attachments, mark_announced
from ccr.batch import StoreBatch
from compactor.memory.attachment import build_memory_attachment
from ccr import PutRequest, Store, marker
from compactor.core.templating import render
from compactor.engine.cache import prefix_effect
from compactor.core.calibration import Calibration
from compactor.core.config import DEFAULT_RECOVERY_TOOLS, DEFAULT_TAIL_TOKENS
from compactor.engine.dedup import expand_references, reset_after_compaction
from compactor.core.errors import CompactionDidNotShrink, CompactionFailed, CompactorError, NothingToCompact
from compactor.core.messages import ContentBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.summarizers.provider_compaction import (
    ProviderView,
    provider_kind,
    provider_text,
    provider_view,
    through_last_block,
)
from compactor.view.readable import readable_text
from compactor.engine.report import CompactionReport, ContextEntry, DedupReport, DroppedSpan, Trigger
from compactor.engine.rounds import group_rounds
from compactor.core.session import SessionState
from compactor.engine.spans import head_span, head_spans
from compactor.engine.storing import store_spans, without_recovered_content
from compactor.summarizers._ledger import merge_messages, tail_view
from compactor.summarizers._ledger_text import listing_span
from compactor.summarizers.base import SECTION_TITLES, CitingSummarizer, Summarizer, Summary
from compactor.engine.survival import context_retention, continuation, fact_survival
from compactor.core.tokens import TokenCounter

__all__ = [
    "CompactBoundary",
    "CompactOptions",
    "CompactionResult",
    "compact",
    "context_entries",
    "failed_result",
    "head_and_tail",
    "merge_instructions",
    "model_text",
    "split_tail",
    "store_spans",
    "without_recovered_content",
]

TAIL_SHARE = 0.35
"""Of a shared context budget, the most the preserved tail may take."""
_MIN_ATTACHMENT_TOKENS = 1_000
"""Attachments get at least this much of a shared budget, even when the summary and tail took it all."""
_FILES_SHOWN = 4
"""Under a shared budget each file is cut to at most this fraction of the files' part (the rest of it
in CCR), so that several of the files the session is likely to read again fit."""
_FILES_SHARE = 0.6
"""Of what a shared budget leaves for attachments, the files' part when skills are restored too."""


class CompactOptions(BaseModel):
    """How one compaction is shaped. Budgets are in the configured counter's tokens."""

    model_config = ConfigDict(extra="forbid")

    tail_tokens: int = Field(default=DEFAULT_TAIL_TOKENS, ge=0)
    threshold: int = Field(default=167_000, gt=0)
    calibration: Calibration = Field(default_factory=Calibration)
    """Counter tokens -> context tokens (system prompt, tools, tokenizer); for pre/post."""
    budgets: Budgets = Field(default_factory=Budgets)
    transcript_path: str | None = None
    recovery_tools: tuple[str, ...] = DEFAULT_RECOVERY_TOOLS
    """Tools whose results are recovered content: dropped, never stored or summarized again."""
    memory_db: str | None = None
    """A memory store to recall from for the work in progress (``compactor.memory.attachment``); None: none."""
    context_tokens: int | None = Field(default=None, ge=1)
    """The one budget the summary, the tail and the attachments share (None: each only its own):
    the tail takes at most ``TAIL_SHARE`` of it, the attachments what the summary and tail leave."""
    cached_messages: int | None = Field(default=None, ge=0)
    """How many messages (from the start) the prompt cache holds; None: all of them (``compactor.engine.cache``)."""


class CompactBoundary(BaseModel):
    """The boundary marker: a transcript event, never sent to the model."""

    model_config = ConfigDict(extra="forbid")

    trigger: Trigger
    pre_tokens: int
    post_tokens: int
    head_handle: str
    timestamp: float


class CompactionResult(BaseModel):
    """What ``compact`` returns. On failure ``messages`` are the caller's, unchanged."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    boundary: CompactBoundary | None
    messages: list[Message]
    state: SessionState
    report: CompactionReport

    @property
    def summary_message(self) -> Message | None:
        return self.messages[0] if self.ok and self.messages else None


def merge_instructions(custom: str | None, hook: str | None) -> str | None:
    """Custom instructions (``/compact <text>``) first, hook-provided ones after."""
    parts = [p.strip() for p in (custom, hook) if p and p.strip()]
    return "\n\n".join(parts) or None


def split_tail(
    messages: Sequence[Message], tail_tokens: int, counter: TokenCounter
) -> tuple[list[Message], list[Message]]:
    """Split into (head, tail): the tail is the longest run of whole API rounds
    at the end whose tokens stay within ``tail_tokens`` and within half of the
    conversation, so that a compaction always has a head to summarize."""
    sizes = {id(m): counter.count_message(m) for m in messages}
    return _split(messages, tail_tokens, lambda m: sizes[id(m)])


def _split(
    messages: Sequence[Message], tail_tokens: int, size_of: Callable[[Message], int], *, last_round_tokens: int = 0
) -> tuple[list[Message], list[Message]]:
    """(head, tail) as ``split_tail`` says; when no round fits ``tail_tokens``, the last round is
    kept all the same if it is within ``last_round_tokens`` (and half of the conversation)."""
    rounds = group_rounds(messages)
    sizes = [sum(size_of(m) for m in round_) for round_ in rounds]
    limit = min(tail_tokens, sum(sizes) // 2)
    kept = 0
    total = 0
    for size in reversed(sizes[1:]):  # the first round always goes to the head
        if total + size > limit:
            break
        total += size
        kept += 1
    if kept == 0 and len(sizes) > 1 and sizes[-1] <= min(last_round_tokens, sum(sizes) // 2):
        kept = 1
    cut = len(rounds) - kept
    return [m for r in rounds[:cut] for m in r], [m for r in rounds[cut:] for m in r]


def head_and_tail(
    messages: Sequence[Message], sizes: Sequence[int], opts: CompactOptions
) -> tuple[list[Message], list[Message]]:
    """The (head, tail) a compaction with ``opts`` would make of ``messages`` (their counts ``sizes``):
    the tail within ``opts.tail_tokens`` and ``TAIL_SHARE`` of a shared budget (``split_tail``), and
    never in front of a provider's compaction block (``through_last_block``)."""
    size_of = {id(m): n for m, n in zip(messages, sizes, strict=True)}
    tail_limit = opts.tail_tokens if opts.context_tokens is None else min(
        opts.tail_tokens, int(opts.context_tokens * TAIL_SHARE)
    )
    head, tail = _split(messages, tail_limit, lambda m: size_of[id(m)], last_round_tokens=opts.tail_tokens)
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
        return _compact(messages, sizes, state, store, counter, summarizer, files, trigger,
                        merge_instructions(instructions, hook_instructions), opts, pre, also_store)
    except CompactorError as exc:
        return failed_result(messages, state, exc, trigger=trigger, threshold=opts.threshold, pre_tokens=pre,
                             counter_name=counter.name)


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


def _shared(budgets: Budgets, left: int, *, with_skills: bool) -> Budgets:
    """``budgets`` cut to what a shared context budget leaves for attachments (at least
    ``_MIN_ATTACHMENT_TOKENS``): files take it all, or ``_FILES_SHARE`` of it when skills are
    to be restored too; each file at most ``1 / _FILES_SHOWN`` of its part and each skill half of
    its part, so that more than one fits; never more than ``budgets`` allow."""
    left = max(left, _MIN_ATTACHMENT_TOKENS)
    files = int(left * _FILES_SHARE) if with_skills else left
    skills = max(1, left - files)
    return budgets.model_copy(update={
        "files_total": min(budgets.files_total, files),
        "file_tokens": min(budgets.file_tokens, max(1, files // _FILES_SHOWN)),
        "skills_total": min(budgets.skills_total, skills),
        "skill_tokens": min(budgets.skill_tokens, max(1, skills // 2) if with_skills else skills),
        "memory_tokens": min(budgets.memory_tokens, left),
    })


def context_entries(out: Sequence[Message], sizes: Sequence[int], *, tail_length: int) -> list[ContextEntry]:
    """The compacted context ``[summary, *tail, *attachments]`` as the report shows it to a person."""
    parts = ["summary"] + ["tail"] * tail_length + ["attachment"] * (len(out) - 1 - tail_length)
    return [
        ContextEntry(part=part, role=m.role, tokens=n, text=readable_text(m))  # type: ignore[arg-type]
        for part, m, n in zip(parts, out, sizes, strict=True)
    ]


def model_text(messages: Sequence[Message]) -> str:
    """What the model reads of ``messages``: text, tool results, and each tool call's input as
    JSON and as its plain values (a command or path as written, not JSON-escaped)."""
    parts: list[str] = []
    for message in messages:
        for block in message.blocks():
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text())
            elif isinstance(block, ToolUseBlock):
                parts.append(json.dumps(block.input, ensure_ascii=False))
                parts.extend(v for v in block.input.values() if isinstance(v, str))
    return "\n".join(parts)


def _provider_note(summary: Summary, view: ProviderView | None) -> dict[str, Any] | None:
    """What the summary message says of a provider's compaction it carries (None: it carries none)."""
    blocks = list(summary.provider_blocks) or (view.lead if view is not None else [])
    kind = next((k for k in map(provider_kind, blocks) if k is not None), None)
    if kind is None:
        return None
    fresh = bool(summary.provider_blocks)
    superseded = (view.superseded + (1 if fresh else 0)) if view is not None else 0
    return {"kind": kind, "fresh": fresh, "superseded": superseded}


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
    # Everything this compaction stores, written in one transaction at the end (module docstring).
    batch = StoreBatch()
    batch.put_many(also_store)

    # 1. snapshot the read-file state, then clear it.
    snapshot = dict(state.read_files)
    # What the new state forgets is left out before the deep copy rather than copied and cleared:
    # the dedup entries seen are most of a state (``reset_after_compaction`` below forgets them too).
    new_state = state.model_copy(update={
        "read_files": {}, "memory_paths": [], "dedup": state.dedup.model_copy(update={"seen": {}}),
    }).model_copy(deep=True)

    # 2. split.
    size_of = {id(m): n for m, n in zip(messages, sizes, strict=True)}
    head, tail = head_and_tail(messages, sizes, opts)
    if not head:
        raise NothingToCompact("nothing to compact: the conversation is empty")

    # 3. name every dropped span, stored before anything is dropped. Recovered content
    #    is a view of what the store already holds: it is not stored or summarized again.
    head = without_recovered_content(head, opts.recovery_tools)
    head_sizes = sizes[: len(head)]
    head_tokens = sum(head_sizes)
    # What a provider compacted is not summarized again: the summarizer reads what follows its last
    # block (a provider summarizer the block on), and the block itself leads the summary message.
    provided = provider_view(head)
    reader = head if provided is None else (
        provided.from_block if getattr(summarizer, "reads_provider_blocks", False) is True else provided.messages
    )
    known = {id(m): n for m, n in zip(head, head_sizes, strict=True)}
    reader_sizes = [known[id(m)] if id(m) in known else counter.count_message(m) for m in reader]
    spans = summarizer.spans(reader) if isinstance(summarizer, CitingSummarizer) else head_spans(reader)
    if provided is not None:  # the stored head is the whole head, every byte before the block too
        spans = [head_span(head), *(s for s in spans if s.kind != "head")]
    tail = expand_references(tail, new_state.dedup)
    # The session ledger takes in what this head shows; the listing of all of it is stored with
    # the compaction, in place of the summarizer's listing of the head alone.
    ledger = merge_messages(  # what a provider compacted is its summary's to tell, not ours again
        new_state.ledger, reader,
        result_handles={s.ref: s.handle for s in spans if s.kind == "tool_result" and s.ref},
        message_handles={
            s.message_index: s.handle for s in spans if s.kind == "user_message" and s.message_index is not None
        },
    )
    spans = [s for s in spans if s.kind != "facts"] + [listing_span(ledger, new_state.cwd)]
    stored, span_tokens = store_spans(
        spans, batch, head_sizes=reader_sizes, counter=counter, producer="compactor.engine.pipeline", head=reader,
        metadata={"trigger": trigger, **({"session_id": state.session_id} if state.session_id else {})},
    )
    span_tokens[0] = head_tokens
    head_handle = stored[0]

    # 4. summarize.
    if not reader:  # the head ends with the provider's block: nothing after it to summarize
        summary = Summary(text="", summarizer=summarizer.name)
    elif isinstance(summarizer, CitingSummarizer):
        summary = summarizer.summarize(
            reader, instructions, spans=spans, cwd=new_state.cwd, ledger=ledger, tail=tail
        )
    else:
        summary = summarizer.summarize(reader, instructions)
    # A summary may cite what earlier compactions stored too; it may not cite what was never stored.
    missing = [h for h in summary.handles if not batch.holds(h) and not store.contains(h)]
    if missing:
        raise CompactionFailed(f"summary cites handles that were not stored: {', '.join(missing)}")

    summary_text = render(
        "summary_message.j2",
        head=marker(head_handle),
        transcript_path=opts.transcript_path,
        dropped_rounds=summary.dropped_rounds,
        summary=summary.text.strip(),
        trigger=trigger,
        provider=_provider_note(summary, provided),
    )
    leading: list[ContentBlock] = list(summary.provider_blocks) or (provided.lead if provided is not None else [])
    summary_message = Message(
        role="user", content=[*leading, TextBlock(text=summary_text)] if leading else summary_text,
        is_compact_summary=True,
    )
    summary_tokens = counter.count_message(summary_message)
    tail_sizes = [size_of[id(m)] if id(m) in size_of else counter.count_message(m) for m in tail]

    # 5. attachments, within what the summary and the tail left of a shared budget.
    budgets = opts.budgets
    if opts.context_tokens is not None:
        budgets = _shared(
            budgets, opts.context_tokens - summary_tokens - sum(tail_sizes),
            with_skills=bool(new_state.skills.get(new_state.agent_id)),
        )
    current_work = "\n".join(summary.sections.get(t, "") for t in SECTION_TITLES[-2:]).strip() or summary.text
    attached: AttachmentSet = build_attachments(
        snapshot,
        new_state,
        tail,
        budgets=budgets,
        counter=counter,
        store=batch,
        files=files,
        cwd=new_state.cwd,
        history=messages,
        current_work=current_work,
    )

    if opts.memory_db is not None:
        recalled = build_memory_attachment(
            opts.memory_db, history=messages, current_work=current_work, budget=budgets.memory_tokens,
            counter=counter, store=batch,
        )
        attached.attachments.extend(recalled.attachments)
        attached.skipped.extend(recalled.skipped)

    # 6. render.
    out = [summary_message, *tail, *attached.messages]

    # 7. report and new state.
    dedup = new_state.dedup
    hits = sum(dedup.hits.values()) - dedup.hits_at_last_compaction
    saved = sum(dedup.saved_bytes.values()) - dedup.saved_bytes_at_last_compaction
    dedup.hits_at_last_compaction += hits
    dedup.saved_bytes_at_last_compaction += saved
    reset_after_compaction(dedup)
    ledger.compactions += 1
    mark_announced(new_state)  # the attachments just announced the full sets again
    # Attachments were counted as rendered (their budgets apply to exactly that text), and a tail
    # message that expanding references left as it was has its count in ``sizes``: not again.
    out_sizes = [summary_tokens, *tail_sizes, *(a.tokens for a in attached.attachments)]
    if sum(out_sizes) >= sum(sizes):
        raise CompactionDidNotShrink(
            f"the compacted context ({sum(out_sizes):,} tokens) would be no smaller than the "
            f"conversation ({sum(sizes):,} tokens); it was left as it was"
        )
    post = opts.calibration.tokens(sum(out_sizes))
    view = tail_view(ledger, tail)
    retention = context_retention(
        list(view.paths), list(view.commands), [m.text for m in view.user_messages],
        model_text(out), cwd=new_state.cwd,
    )
    report = CompactionReport(
        trigger=trigger,
        pre_tokens=pre,
        post_tokens=post,
        threshold=opts.threshold,
        summary_tokens=summary_tokens,
        head_tokens=head_tokens,
        summarizer=summarizer.name,
        counter=counter.name,
        dropped=[
            DroppedSpan(
                handle=h, kind=s.kind, tokens=tokens, bytes=len(s.data),
                piece_of=None if h == head_handle else head_handle,
            )
            for s, h, tokens in zip(spans, stored, span_tokens, strict=True)
        ],
        attachments=attached.entries,
        skipped=attached.skipped,
        dedup=DedupReport(hits=hits, saved_bytes=saved),
        survival=fact_survival(
            reader, "\n".join([*(provider_text(b) for b in leading), summary.text]), cwd=new_state.cwd,
            stored={s.handle: s.data for s in spans if s.kind != "head"},
        ),
        retention=retention,
        continuation=continuation(
            view.current_request, [item.text for item in view.open_items()], summary.text
        ),
        ledger_facts=len(ledger.paths) + len(ledger.commands) + len(ledger.errors) + len(ledger.user_messages),
        summary=summary.text.strip(),
        summary_sources=summary.sources,
        context=context_entries(out, out_sizes, tail_length=len(tail)),
        # The summary comes first: the cached prefix is kept up to message 0, that is not at all.
        cache=prefix_effect(sizes, 0, len(messages) if opts.cached_messages is None else opts.cached_messages),
    )
    boundary = CompactBoundary(
        trigger=trigger, pre_tokens=pre, post_tokens=post, head_handle=head_handle, timestamp=time.time()
    )
    batch.store_in(store)  # the one transaction; a refusal raises and nothing is dropped
    return CompactionResult(ok=True, boundary=boundary, messages=out, state=new_state, report=report)
