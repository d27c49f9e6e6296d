"""Masking between compactions: old, large tool results become stubs whose bytes are in CCR.

Between compactions the context grows mostly by tool output the agent has
already acted on. Masking replaces each tool result older than the last
``keep_rounds`` answers and larger than ``min_tokens`` by a short stub
(``compactor/templates/masked_result.j2``): the tool and its input, the first and last
lines, the size, and the ``<<ccr:...>>`` marker of the exact bytes (or, with
``footer = "tinyjuice"``, TinyJuice's partial-view footer naming
``tokenjuice_retrieve`` and the token ``tj:<hex>``,
``compactor/templates/masked_result_tinyjuice.j2``). A Read
result that a later successful Read, Edit or Write of the same file has made
stale becomes a pointer first, whatever its size (when the pointer is
shorter). The tool calls, the user's messages and everything else stay as
they are, so every path, command and request is still in context verbatim,
and every ``tool_use`` keeps its ``tool_result``.

Rules kept here:

- **Reversible or nothing**: all the originals of one step are stored in one
  transaction before any stub is made; if the store refuses, or a handle does
  not match its bytes, nothing is masked (fail closed).
- The recovery tool's answers, errors and non-text results are never masked.
- Dedup stays consistent: a masked first occurrence ``rN`` loses its tag with
  its content, its original is stored and named in ``DedupState.handles``,
  every reference to it in context is rewritten to name that handle, and it
  leaves the seen-set, so a later repeat comes in whole. No reference dangles.

"Whether" (``masking_decision``: past the soft threshold, and the cache
policy allows it) is separate from "how" (``Masker.mask``). The Orchestrator
calls both as messages arrive; ``compactor.engine.cache`` says what a step costs in
prompt cache.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from attachments import is_partial_read
from ccr import PutRequest, Store, handle_for, tinyjuice_marker
from ccr.root_errors import CompactorError
from compactor.core.config import MaskingSettings, is_recovery_tool
from compactor.core.errors import MaskingHandleMismatch
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import DedupState
from compactor.core.templating import render
from compactor.core.tokens import TokenCounter
from compactor.engine.dedup import reference_text, result_id_line, without_result_id
from compactor.engine.report import MaskingPolicyName
from compactor.summarizers.facts import touched_path

__all__ = [
    "MaskDecision",
    "MaskOutcome",
    "Masker",
    "masking_decision",
    "result_text",
]

_READ_TOOLS = frozenset({"Read"})
_WRITE_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
_LINE_CHARS = 160
_INPUT_CHARS = 200
_UNKNOWN_TOOL = "unknown"
_NUMBERED = re.compile(r"^\s*\d+(?:→|\t)")
"""The line-number prefix of a Read result's line; a line that is only that is blank."""


_Reason = Literal["disabled", "below_soft_threshold", "cache_warm", "eager", "cold", "batch"]


class MaskDecision(BaseModel):
    """Whether a masking step may run now, under which policy, and why (not)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run: bool
    policy: MaskingPolicyName | None = None
    reason: _Reason
    soft_threshold: int
    batch_threshold: int


def masking_decision(tokens: int, threshold: int, settings: MaskingSettings, *, cold: bool) -> MaskDecision:
    """Whether to mask at a context of ``tokens`` with the auto-compact ``threshold``.

    Below ``soft_share`` of the threshold never. Past it: ``eager`` always;
    ``cold`` while the cache is ``cold``; ``cold`` and ``batch`` once the
    context passes ``batch_share`` of the threshold (a batch: one rewrite of
    the prefix for everything eligible).
    """
    soft = int(threshold * settings.soft_share)
    batch = int(threshold * settings.batch_share)

    def decide(run: bool, reason: _Reason, policy: MaskingPolicyName | None = None) -> MaskDecision:
        return MaskDecision(run=run, policy=policy, reason=reason, soft_threshold=soft, batch_threshold=batch)

    if not settings.enabled:
        return decide(False, "disabled")
    if tokens < soft:
        return decide(False, "below_soft_threshold")
    if settings.cache_policy == "eager":
        return decide(True, "eager", "eager")
    if settings.cache_policy == "cold" and cold:
        return decide(True, "cold", "cold")
    if tokens >= batch:
        return decide(True, "batch", "batch")
    return decide(False, "cache_warm")


def result_text(block: ToolResultBlock) -> str | None:
    """The text a result carries when masking can store it byte-exact: a string, or one text block."""
    if isinstance(block.content, str):
        return block.content
    if len(block.content) == 1 and isinstance(block.content[0], TextBlock):
        return block.content[0].text
    return None


@dataclass
class _Candidate:
    index: int
    """Position of the result's message in the conversation."""
    tool_use_id: str
    answer: int
    """How many answers had arrived when the result did (its round)."""
    path: str | None = None
    partial: bool = False
    superseded_by: ToolUseBlock | None = None
    tokens: int | None = None
    """The result's count, once measured."""


@dataclass
class MaskOutcome:
    """One step's work: the new conversation and what changed (``ok`` false: refused, nothing changed)."""

    messages: list[Message]
    changed: list[int] = field(default_factory=list)
    sizes: dict[int, int] = field(default_factory=dict)
    """New counts of changed messages, where the step knows them without counting again."""
    results: int = 0
    superseded: int = 0
    handles: list[str] = field(default_factory=list)
    ok: bool = True
    error: str | None = None
    error_id: str | None = None


@dataclass
class _Plan:
    candidate: _Candidate
    text: str
    tokens: int
    stub: str
    """The stub, naming the handle its original will have (handles are content addresses)."""
    stub_tokens: int
    alone: bool
    """The result is its message's only block: the message's new count is the stub's."""
    original: tuple[str, str] | None = None
    """(rN, untagged original) when the result is a dedup first occurrence."""


class Masker:
    """Follows a conversation as it grows and masks its old tool results on demand.

    ``observe`` is called for each message appended (it costs the same at any
    length); ``reset`` after the conversation is replaced (a compaction);
    ``mask`` runs one step over the results old enough.
    """

    def __init__(self, settings: MaskingSettings, recovery_tools: Sequence[str]) -> None:
        self.settings = settings
        self.recovery_tools = tuple(recovery_tools)
        self.calls: dict[str, ToolUseBlock] = {}
        self.answers = 0
        self.masked: set[str] = set()
        self._pending: dict[str, _Candidate] = {}
        self._reads: dict[str, list[_Candidate]] = {}  # path -> pending Read results of it
        self._previous_role: str | None = None

    def reset(self, messages: Sequence[Message]) -> None:
        """Start over from ``messages`` (results already masked stay masked)."""
        self._pending = {}
        self._reads = {}
        self._previous_role = None
        for index, message in enumerate(messages):
            self.observe(index, message)

    def observe(self, index: int, message: Message) -> None:
        """Take note of the message appended at ``index``: its calls, its results, its round."""
        if message.role == "assistant":
            if self._previous_role != "assistant":
                self.answers += 1
            for use in message.tool_uses():
                self.calls[use.id] = use
        self._previous_role = message.role
        if message.role != "user" or isinstance(message.content, str):
            return
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                self._observe_result(index, block)

    def _observe_result(self, index: int, block: ToolResultBlock) -> None:
        call = self.calls.get(block.tool_use_id)
        name = call.name if call is not None else _UNKNOWN_TOOL
        if block.is_error or is_recovery_tool(name, self.recovery_tools):
            return
        path = touched_path(call) if call is not None else None
        if path and name in _READ_TOOLS | _WRITE_TOOLS and call is not None:
            partial = name in _READ_TOOLS and is_partial_read(call.input)
            for earlier in self._reads.get(path, ()):
                if earlier.superseded_by is None and (not partial or earlier.partial):
                    earlier.superseded_by = call
        if block.tool_use_id in self.masked or result_text(block) is None:
            return
        candidate = _Candidate(
            index=index,
            tool_use_id=block.tool_use_id,
            answer=self.answers,
            path=path if name in _READ_TOOLS else None,
            partial=name in _READ_TOOLS and call is not None and is_partial_read(call.input),
        )
        self._pending[block.tool_use_id] = candidate
        if candidate.path is not None:
            self._reads.setdefault(candidate.path, []).append(candidate)

    def _drop(self, candidate: _Candidate) -> None:
        self._pending.pop(candidate.tool_use_id, None)
        if candidate.path is not None:
            reads = self._reads.get(candidate.path, [])
            self._reads[candidate.path] = [c for c in reads if c is not candidate]

    def due(self) -> list[_Candidate]:
        """Results older than the last ``keep_rounds`` answers, oldest first."""
        keep = self.settings.keep_rounds
        return sorted((c for c in self._pending.values() if self.answers - c.answer >= keep), key=lambda c: c.index)

    def mask(
        self,
        messages: Sequence[Message],
        *,
        store: Store,
        counter: TokenCounter,
        dedup: DedupState,
        tool_names: Mapping[str, str],
        min_saving: int = 0,
        sizes: Sequence[int] | None = None,
        producer: str = "compactor.engine.masking",
        metadata: Mapping[str, object] | None = None,
    ) -> MaskOutcome:
        """Mask every due result that is worth it; never raises for a store refusal.

        Nothing happens unless the stubs would save at least ``min_saving``
        tokens together (a batch that rewrites the cached prefix must pay for
        itself). ``sizes`` are the messages' counts when the caller keeps them:
        a message that is one tool result is then not counted again.
        Returns the new conversation (the same one, ``changed`` empty, when
        nothing was worth masking, or when the store refused: then ``ok`` is
        false and ``error_id`` says why).
        """
        plans = self._plans(messages, counter, dedup, sizes)
        if not plans or sum(p.tokens - p.stub_tokens for p in plans) < max(min_saving, 1):
            return MaskOutcome(messages=list(messages))
        requests = []
        for plan in plans:
            requests.append(_put(plan.text, plan, counter, producer, metadata))
            if plan.original is not None:
                requests.append(_put(plan.original[1], plan, counter, producer, metadata))
        try:
            handles = store.put_many(requests)
        except CompactorError as exc:  # the store refused (BudgetExceeded, StoreError, DiskFull)
            return MaskOutcome(messages=list(messages), ok=False, error=str(exc), error_id=exc.error_id)
        expected = [handle_for(r.data) for r in requests]
        if list(handles) != expected:
            return MaskOutcome(
                messages=list(messages),
                ok=False,
                error_id=MaskingHandleMismatch.error_id,
                error="the store answered handles that do not match the bytes; nothing was masked",
            )
        return self._apply(messages, plans, dedup, tool_names)

    def _plans(
        self, messages: Sequence[Message], counter: TokenCounter, dedup: DedupState, sizes: Sequence[int] | None
    ) -> list[_Plan]:
        plans: list[_Plan] = []
        for candidate in self.due():
            block = _find_block(messages, candidate)
            text = result_text(block) if block is not None else None
            if block is None or text is None:
                self._drop(candidate)
                continue
            superseded = candidate.superseded_by is not None
            if not superseded and len(text) <= self.settings.min_tokens:
                if candidate.path is None:  # it can never become worth masking
                    self._drop(candidate)
                continue
            alone = isinstance(block.content, str) and len(messages[candidate.index].blocks()) == 1
            if candidate.tokens is None:
                # A message that is only this result was counted from exactly its text.
                counted = sizes is not None and len(sizes) == len(messages) and alone
                candidate.tokens = sizes[candidate.index] if counted and sizes is not None else counter.count_text(text)
            tokens = candidate.tokens
            if not superseded and tokens <= self.settings.min_tokens:
                if candidate.path is None:
                    self._drop(candidate)
                continue
            tag = _first_occurrence(text, dedup)
            shown = tag[1] if tag is not None else text  # the stub shows the output, not its dedup tag
            context = _stub_context(self.calls.get(candidate.tool_use_id), candidate, shown, tokens)
            stub = _render_stub(
                context, handle=handle_for(text.encode("utf-8", "surrogatepass")), footer=self.settings.footer
            )
            stub_tokens = counter.count_text(stub)
            if tokens <= stub_tokens:
                if candidate.path is None:
                    self._drop(candidate)
                continue
            plans.append(
                _Plan(
                    candidate=candidate,
                    text=text,
                    tokens=tokens,
                    stub=stub,
                    stub_tokens=stub_tokens,
                    alone=alone,
                    original=tag,
                )
            )
        return plans

    def _apply(
        self,
        messages: Sequence[Message],
        plans: list[_Plan],
        dedup: DedupState,
        tool_names: Mapping[str, str],
    ) -> MaskOutcome:
        stubs: dict[str, str] = {}
        outcome = MaskOutcome(messages=list(messages))
        rewritten: dict[str, str] = {}  # rN -> handle of its original
        for plan in plans:
            stubs[plan.candidate.tool_use_id] = plan.stub
            outcome.handles.append(handle_for(plan.text.encode("utf-8", "surrogatepass")))
            if plan.alone:
                outcome.sizes[plan.candidate.index] = plan.stub_tokens
            if plan.original is not None:
                result_id = plan.original[0]
                original_handle = handle_for(plan.original[1].encode("utf-8", "surrogatepass"))
                dedup.handles[result_id] = original_handle
                rewritten[result_id] = original_handle
                for key, entries in list(dedup.seen.items()):
                    kept = [e for e in entries if e.result_id != result_id]
                    if kept:
                        dedup.seen[key] = kept
                    else:
                        del dedup.seen[key]
            outcome.results += 1
            outcome.superseded += plan.candidate.superseded_by is not None
            self.masked.add(plan.candidate.tool_use_id)
            self._drop(plan.candidate)
        first = min(plan.candidate.index for plan in plans)
        out = outcome.messages
        for index in range(first, len(out)):
            message = out[index]
            if isinstance(message.content, str):
                continue
            blocks = list(message.content)
            changed = False
            for position, block in enumerate(blocks):
                if not isinstance(block, ToolResultBlock):
                    continue
                if block.tool_use_id in stubs:
                    blocks[position] = block.model_copy(update={"content": stubs[block.tool_use_id]})
                    changed = True
                elif rewritten and isinstance(block.content, str):
                    tool = tool_names.get(block.tool_use_id, _UNKNOWN_TOOL)
                    for result_id, handle in rewritten.items():
                        if block.content == reference_text(tool, result_id):
                            blocks[position] = block.model_copy(
                                update={"content": reference_text(tool, result_id, handle)}
                            )
                            changed = True
                            break
            if changed:
                out[index] = message.model_copy(update={"content": blocks})
                outcome.changed.append(index)
        return outcome


def _find_block(messages: Sequence[Message], candidate: _Candidate) -> ToolResultBlock | None:
    if candidate.index >= len(messages):
        return None
    message = messages[candidate.index]
    for block in message.tool_results():
        if block.tool_use_id == candidate.tool_use_id:
            return block
    return None


def _first_occurrence(text: str, dedup: DedupState) -> tuple[str, str] | None:
    """(rN, original) when ``text`` is the tagged first occurrence of ``rN``."""
    original = without_result_id(text)
    if original == text:
        return None
    result_id = text[len(original) + len("\n[result-id: ") : -1]
    if dedup.originals.get(result_id) != original or text != original + result_id_line(result_id):
        return None
    return result_id, original


def _one_line(text: str, limit: int = _LINE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 5].rstrip() + " [...]"


def _stub_context(call: ToolUseBlock | None, candidate: _Candidate, text: str, tokens: int) -> dict[str, object]:
    all_lines = text.splitlines()
    first = next((line for line in all_lines if _has_content(line)), "")
    last = next((line for line in reversed(all_lines) if _has_content(line)), "")
    later = candidate.superseded_by
    shown_input = json.dumps(call.input, ensure_ascii=False, sort_keys=True) if call is not None else ""
    return {
        "tool": call.name if call is not None else _UNKNOWN_TOOL,
        "tool_use_id": candidate.tool_use_id,
        "input": _one_line(shown_input, _INPUT_CHARS),
        "first": _one_line(first),
        "last": _one_line(last) if last and last is not first else "",
        "lines": text.count("\n") + 1 if text else 0,
        "size": len(text.encode("utf-8", "surrogatepass")),
        "tokens": tokens,
        "superseded": later is not None,
        "path": candidate.path or "",
        "later_tool": later.name if later is not None else "",
        "later_id": later.id if later is not None else "",
    }


def _has_content(line: str) -> bool:
    return bool(line.strip()) and bool(_NUMBERED.sub("", line, count=1).strip())


def _render_stub(context: Mapping[str, object], *, handle: str, footer: str = "compactor") -> str:
    if footer == "tinyjuice":
        token = tinyjuice_marker(handle)
        return render("masked_result_tinyjuice.j2", token=token, **context).rstrip("\n")
    return render("masked_result.j2", handle=handle, **context).rstrip("\n")


def _put(
    text: str, plan: _Plan, counter: TokenCounter, producer: str, metadata: Mapping[str, object] | None
) -> PutRequest:
    return PutRequest(
        data=text.encode("utf-8", "surrogatepass"),
        content_type="text/plain",
        producer=producer,
        tokens_before=plan.tokens,
        tokens_after=0,
        metadata={
            "kind": "masked_result",
            "tool_use_id": plan.candidate.tool_use_id,
            **(metadata or {}),
        },
    )
