"""``anthropic-compact``: Anthropic's on-demand compaction writes the summary.

One Messages API request with ``"compaction": {"type": "summarize"}`` and the
beta header ``compact-2026-09-04``
(https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand):
the answer is a single ``compaction`` block (``content``, ``signature``) and
``stop_reason`` ``"compaction"``. The block opens the summary message exactly
as it came, which is where the API wants it on every later request (with the
same beta header). ``instructions``, when given, replace the API's own
summarization prompt (at most 16,384 characters), so they are sent inside a
prompt that still asks for a summary to continue from.

Uses the official ``anthropic`` SDK (extra ``anthropic``) for its HTTP client
and errors; the SDK's retries are off, and any failure fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactor.core.errors import SummarizerError
from compactor.core.messages import ContentBlock, Message, UnknownBlock
from compactor.core.templating import render
from compactor.summarizers._provider import ProviderCompactSummarizer
from compactor.summarizers.anthropic import AnthropicClient, _error_message
from compactor.summarizers.provider_compaction import COMPACTION_TYPE, provider_kind

__all__ = ["COMPACT_BETA", "MAX_INSTRUCTIONS_CHARS", "AnthropicCompactSummarizer"]

COMPACT_BETA = "compact-2026-09-04"
"""The beta header of on-demand compaction, on the request and on every later request carrying the block."""

MAX_INSTRUCTIONS_CHARS = 16_384
"""The longest ``compaction.instructions`` the API takes."""

_STOP_HINTS = {
    "max_tokens": "the summary was cut off; raise llm.max_output_tokens",
    "model_context_window_exceeded": "the head leaves no room for the summarization prompt",
    "tool_use": "the model called a tool instead of writing the summary",
    "refusal": "the request was declined",
    "end_turn": "the call returned no text",
}
"""What each ``stop_reason`` of a compaction without a summary means (the documentation's table)."""


class AnthropicCompactSummarizer(AnthropicClient, ProviderCompactSummarizer):
    """Anthropic's on-demand compaction as the summarizer.

    Settings, key lookup and errors are ``AnthropicClient``'s;
    ``max_output_tokens`` caps the whole summarization call, thinking included.
    """

    name = "anthropic-compact"

    def _compact(self, messages: Sequence[Message], instructions: str | None) -> list[ContentBlock]:
        compaction: dict[str, Any] = {"type": "summarize"}
        if instructions:
            prompt = render("provider_compact_instructions.j2", instructions=instructions).strip()
            if len(prompt) > MAX_INSTRUCTIONS_CHARS:
                raise SummarizerError(
                    f"{self.name}: the instructions take {len(prompt):,} characters; "
                    f"the API takes at most {MAX_INSTRUCTIONS_CHARS:,}"
                )
            compaction["instructions"] = prompt
        body = {
            "model": self.model,
            "max_tokens": self.max_output_tokens,
            "messages": request_messages(messages),
            "compaction": compaction,
        }
        sdk = self._sdk
        try:
            answer = self._client.post(
                "/v1/messages",
                cast_to=object,
                body=body,
                options={"headers": {"anthropic-beta": COMPACT_BETA}, "timeout": self.timeout_seconds},
            )
        except sdk.APITimeoutError as exc:
            raise SummarizerError(f"{self.name}: no answer within {self.timeout_seconds:g} s") from exc
        except sdk.APIConnectionError as exc:
            raise SummarizerError(f"{self.name}: could not reach {self._client.base_url}: {exc}") from exc
        except sdk.APIStatusError as exc:
            code = _error_code(exc.body)
            detail = _error_message(exc) + (f" ({code})" if code else "")
            raise SummarizerError(f"{self.name}: the server answered HTTP {exc.status_code}: {detail}") from exc
        except sdk.AnthropicError as exc:
            raise SummarizerError(f"{self.name}: the request failed: {exc}") from exc
        return [compaction_block(answer, self.name)]


def request_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The head as Messages API ``messages``: Anthropic blocks as they are (a compaction block
    included), anything an adapter carried for another format as a short text, empty messages left out."""
    out: list[dict[str, Any]] = []
    for message in messages:
        api = message.to_api()
        content = api["content"]
        if isinstance(content, list):
            content = [
                raw if not _foreign(block) else {"type": "text", "text": f"[{_label(block)} not shown]"}
                for block, raw in zip(message.blocks(), content, strict=True)
            ]
        if content:
            out.append({"role": message.role, "content": content})
    return out


def _foreign(block: ContentBlock) -> bool:
    if isinstance(block, UnknownBlock) and block.type == COMPACTION_TYPE:
        return provider_kind(block) != "anthropic"
    return isinstance(block, UnknownBlock) and block.type == "compactor_passthrough"


def _label(block: ContentBlock) -> str:
    kind = provider_kind(block)
    return f"{kind} compaction" if kind is not None else "content of another format"


def compaction_block(answer: Any, name: str) -> ContentBlock:
    """The one ``compaction`` block of an on-demand compaction answer, exactly as it came.

    Raises:
        SummarizerError: the answer is not a compaction (its ``stop_reason``
            says why), or its block holds no summary.
    """
    if not isinstance(answer, dict):
        raise SummarizerError(f"{name}: the answer is not a JSON object")
    stop = answer.get("stop_reason")
    content = answer.get("content")
    blocks = (
        [b for b in content if isinstance(b, dict) and b.get("type") == COMPACTION_TYPE]
        if isinstance(content, list)
        else []
    )
    if stop != "compaction" or len(blocks) != 1:
        hint = _STOP_HINTS.get(str(stop), "the answer holds no compaction block")
        raise SummarizerError(f"{name}: the server did not compact (stop reason {stop!r}: {hint})")
    summary = blocks[0].get("content")
    if not isinstance(summary, str) or not summary.strip():
        raise SummarizerError(f"{name}: the compaction block holds no summary")
    return UnknownBlock.model_validate(blocks[0])


def _error_code(body: object) -> str | None:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None
