"""Storing a dropped head in CCR, as the pipeline and the pre-compact hook both do.

Recovered content (results of the recovery tools) becomes a pointer to the
call that made it (``without_recovered_content``), so that stored heads do
not nest each other; the head's spans (``compactor.engine.spans``) go in
one transaction with the tokens each held in the context (``store_spans``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ccr import PutRequest
from ccr.batch import BatchStore, StoreBatch
from compactor.core.config import is_recovery_tool
from compactor.core.messages import Message, TextBlock, ToolResultBlock
from compactor.core.tokens import TokenCounter, count_joined
from compactor.engine.spans import Span

__all__ = ["store_spans", "without_recovered_content"]


def store_spans(
    spans: Sequence[Span],
    store: BatchStore,
    *,
    head_sizes: Sequence[int],
    counter: TokenCounter,
    producer: str,
    metadata: Mapping[str, Any] | None = None,
    head: Sequence[Message] | None = None,
) -> tuple[list[str], list[int]]:
    """Store the spans of a head in one transaction; their handles and the tokens each held.

    ``head_sizes`` are the head's per-message counts, so that spans which
    are whole messages are not tokenized again; with the ``head`` itself, a
    tool result joined from text blocks is counted from its blocks' counts.
    A ``StoreBatch`` given as ``store`` only keeps them for its owner to store.

    Raises:
        ccr.BudgetExceeded, ccr.StoreError: the store refused; nothing was stored.
    """
    head_tokens = sum(head_sizes)
    tokens = [_span_tokens(s, head, head_sizes, head_tokens, counter) for s in spans]
    requests = [
        PutRequest(
            data=s.data,
            content_type=s.content_type,
            producer=f"{producer}:{s.kind}",
            tokens_before=n,
            tokens_after=0,
            metadata={"kind": s.kind, "ref": s.ref, **(metadata or {})},
        )
        for s, n in zip(spans, tokens, strict=True)
    ]
    if isinstance(store, StoreBatch):  # a span carries its handle: its bytes are not hashed again
        return [store.put_named(r, s.handle) for r, s in zip(requests, spans, strict=True)], tokens
    return store.put_many(requests), tokens


def _span_tokens(
    span: Span, head: Sequence[Message] | None, head_sizes: Sequence[int], head_tokens: int, counter: TokenCounter
) -> int:
    """Tokens a span held in the context, from the counts already made where possible."""
    if span.kind == "head":
        return head_tokens
    if span.whole_message and span.message_index is not None:
        return head_sizes[span.message_index]
    text = span.data.decode("utf-8", errors="replace")
    parts = _result_blocks(span, head)
    return (
        count_joined(text, [(t, counter.count_text(t)) for t in parts], counter) if parts else counter.count_text(text)
    )


def _result_blocks(span: Span, head: Sequence[Message] | None) -> list[str]:
    """The texts of the blocks a tool-result span was joined from (none for any other span)."""
    if span.kind != "tool_result" or span.message_index is None or head is None:
        return []
    for block in head[span.message_index].tool_results():
        if block.tool_use_id == span.ref and not isinstance(block.content, str):
            return [b.text for b in block.content if isinstance(b, TextBlock)]
    return []


def without_recovered_content(head: Sequence[Message], recovery_tools: Sequence[str]) -> list[Message]:
    """The head with each recovery-tool result replaced by a pointer to the call that made it.

    The call (handle and selection) stays in the head, and the store never
    evicts, so repeating it gives the same bytes back: nothing is lost, and
    recovered text is not nested inside the next stored head again and again.
    """
    recovery_ids = {use.id for m in head for use in m.tool_uses() if is_recovery_tool(use.name, recovery_tools)}
    if not recovery_ids:
        return list(head)
    from compactor.core.templating import render  # jinja2, only when there is recovered content

    out: list[Message] = []
    for message in head:
        blocks = message.blocks() if not isinstance(message.content, str) else None
        if not blocks or not any(isinstance(b, ToolResultBlock) and b.tool_use_id in recovery_ids for b in blocks):
            out.append(message)
            continue
        replaced = [
            b.model_copy(update={"content": render("recovered_stand_in.j2", tool_use_id=b.tool_use_id).strip()})
            if isinstance(b, ToolResultBlock) and b.tool_use_id in recovery_ids and not b.is_error
            else b
            for b in blocks
        ]
        out.append(message.model_copy(update={"content": replaced}))
    return out
