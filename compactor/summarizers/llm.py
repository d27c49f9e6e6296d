"""What the LLM summarizers share: the prompt, the answer parser and the too-long retry loop.

The Anthropic and the OpenAI-compatible clients differ only in how they send
one request. Everything else lives here, once:

- ``LLMClientSummarizer`` checks the settings, runs ``summarize`` and closes
  the client; a subclass adds its SDK client, ``_send`` and ``_close``;

- the conversation becomes a readable transcript inside a prompt rendered
  from ``summary_prompt.j2`` (text, tool calls with their inputs, tool
  results; images and documents become placeholders);
- the answer's ``<summary>`` is kept, the ``<analysis>`` scratchpad dropped,
  and the nine numbered sections are split out when the model wrote them;
- a request the server rejects as too long is sent again without the oldest
  API rounds, at most ``MAX_TOO_LONG_RETRIES`` times, and the summary then
  says that the oldest part was left out.

Any other failure is a ``SummarizerError``, so the pipeline fails closed.
"""

from __future__ import annotations

import json
import math
import os
import re
import textwrap
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict

from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.ledger import SessionLedger
from compactor.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from compactor.core.templating import render
from compactor.core.tokens import RoughCounter
from compactor.engine.rounds import group_rounds
from compactor.engine.spans import Span, head_spans
from compactor.summarizers.base import SECTION_TITLES, Summary
from compactor.summarizers.ledger import tail_view
from compactor.summarizers.ledger_text import ledger_digest

__all__ = [
    "API_KEY_ENV",
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "DEFAULT_TIMEOUT_SECONDS",
    "LLMClientSummarizer",
    "MAX_OUTPUT_TOKENS",
    "MAX_TOO_LONG_RETRIES",
    "ModelClient",
    "PromptTooLong",
    "Send",
    "SummaryRequest",
    "check_limits",
    "ledger_facts",
    "parse_answer",
    "render_request",
    "resolve_api_key",
    "rounds_to_drop",
    "summarize_rounds",
    "too_long_numbers",
]

MAX_TOO_LONG_RETRIES = 3
"""How many times a request rejected as too long is resent with fewer rounds."""

DEFAULT_MAX_OUTPUT_TOKENS = 20_000
"""Output tokens a summary may use by default: the reserve the thresholds keep free."""

MAX_OUTPUT_TOKENS = 20_000
"""Upper bound for ``max_output_tokens``: a summary may not outgrow the output reserve."""

DEFAULT_TIMEOUT_SECONDS = 600.0
"""How long one summary request may take before it fails."""

API_KEY_ENV = "COMPACTOR_LLM_API_KEY"
"""Environment variable whose key wins over the provider's own variable."""

_DROP_MARGIN = 0.10
"""Extra share of the prompt dropped beyond what the server's numbers ask for."""

_FALLBACK_DROP_SHARE = 0.25
"""Share of the remaining transcript dropped per attempt when the error gives no numbers."""

_HANDLE = re.compile(r"ccr_(?:obj_)?[0-9a-f]{32}")
_ANALYSIS = re.compile(r"<analysis>.*?</analysis>", re.DOTALL | re.IGNORECASE)
_HEADING = re.compile(r"^(?:#{1,6}[ \t]*)?(?:\*\*)?[ \t]*([1-9])\.[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_WORD = re.compile(r"[a-z]+")
_SECTION_WORDS: tuple[frozenset[str], ...] = tuple(
    frozenset(w for w in _WORD.findall(title.lower()) if len(w) >= 4 or w == "key") for title in SECTION_TITLES
)


class PromptTooLong(SummarizerError):
    """The server refused the request as longer than the model's context.

    A retry signal between a client and ``summarize_rounds``; it leaves the
    summarizer only as the cause of the final ``SummarizerError``.
    """

    error_id = "summarizer_prompt_too_long"


class SummaryRequest(BaseModel):
    """One summary request: a system prompt and one user prompt holding the transcript."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str
    prompt: str
    messages: int
    dropped_rounds: int = 0


Send = Callable[[SummaryRequest], str]
"""Sends one request and returns the answer's text.

Raises ``PromptTooLong`` when the server says the prompt is too long and
``SummarizerError`` for any other failure.
"""


def resolve_api_key(explicit: str | None, *, provider_env: str, api_key_env: str | None = None) -> str | None:
    """The API key to use: the argument, else ``api_key_env``, ``COMPACTOR_LLM_API_KEY``, ``provider_env``.

    Empty values count as unset. Returns None when no key is found anywhere.
    """
    if explicit:
        return explicit
    for name in (api_key_env, API_KEY_ENV, provider_env):
        if name and os.environ.get(name):
            return os.environ[name]
    return None


def check_limits(*, timeout_seconds: float, max_output_tokens: int) -> None:
    """Reject a timeout or output budget that no request could honour.

    Raises:
        ConfigError: the timeout is not a positive number of seconds, or
            ``max_output_tokens`` is outside 1..``MAX_OUTPUT_TOKENS``.
    """
    if isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int | float):
        raise ConfigError(f"timeout_seconds must be a number, not {timeout_seconds!r}")
    if not math.isfinite(timeout_seconds) or timeout_seconds <= 0:
        raise ConfigError(f"timeout_seconds must be a positive number of seconds, not {timeout_seconds!r}")
    if isinstance(max_output_tokens, bool) or not isinstance(max_output_tokens, int):
        raise ConfigError(f"max_output_tokens must be an integer, not {max_output_tokens!r}")
    if not 1 <= max_output_tokens <= MAX_OUTPUT_TOKENS:
        raise ConfigError(
            f"max_output_tokens must be between 1 and {MAX_OUTPUT_TOKENS} "
            f"(the output reserve the thresholds keep free), not {max_output_tokens}"
        )


def _result_body(block: ToolResultBlock) -> str:
    if isinstance(block.content, str):
        return block.content
    pieces: list[str] = []
    for inner in block.content:
        if isinstance(inner, TextBlock):
            pieces.append(inner.text)
        elif not isinstance(inner, ThinkingBlock | RedactedThinkingBlock):
            pieces.append(_placeholder(inner))
    return "\n".join(pieces)


def _placeholder(block: Any) -> str:
    if isinstance(block, ImageBlock):
        return "[image]"
    if isinstance(block, DocumentBlock):
        return f"[document: {block.title}]" if block.title else "[document]"
    return f"[{getattr(block, 'type', 'unknown')} block]"


def _parts(message: Message, stored: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The blocks of ``message`` as the prompt template shows them.

    ``stored`` maps a tool_use id to the CCR handle its result is stored
    under, so the prompt can show the handle and the summary can cite it.

    Thinking is left out: it is the model's private scratch work, and what
    it decided shows in the text and tool calls that follow.
    """
    stored = stored or {}
    parts: list[dict[str, Any]] = []
    for block in message.blocks():
        if isinstance(block, TextBlock):
            if block.text.strip():
                parts.append({"kind": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
            continue
        elif isinstance(block, ToolUseBlock):
            body = json.dumps(block.input, ensure_ascii=False, indent=1, sort_keys=True)
            parts.append({"kind": "tool_use", "name": block.name, "id": block.id, "body": body})
        elif isinstance(block, ToolResultBlock):
            body = _result_body(block)
            parts.append(
                {
                    "kind": "tool_result",
                    "id": block.tool_use_id,
                    "is_error": block.is_error,
                    "body": body,
                    "handle": stored.get(block.tool_use_id),
                }
            )
        else:
            parts.append({"kind": "placeholder", "body": _placeholder(block)})
    return parts


def _view(message: Message, stored: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"role": message.role, "meta": message.is_meta, "parts": _parts(message, stored)}


def _size(message: Message) -> int:
    """Characters ``message`` adds to the prompt (close enough to compare rounds)."""
    total = 16
    for part in _parts(message):
        total += 32 + len(part.get("text", "")) + len(part.get("body", ""))
    return total


def render_request(
    messages: Sequence[Message],
    instructions: str | None = None,
    *,
    dropped_rounds: int = 0,
    stored: Mapping[str, str] | None = None,
) -> SummaryRequest:
    """Render the system prompt and the user prompt that ask for a summary of ``messages``.

    ``stored`` maps tool_use ids to the CCR handles their results are stored
    under; the prompt shows them so that the summary can cite them.
    """
    extra = instructions.strip() if instructions else ""
    prompt = render(
        "summary_prompt.j2",
        messages=[_view(m, stored) for m in messages],
        cites_handles=bool(stored),
        section_titles=SECTION_TITLES,
        instructions=extra,
        dropped_rounds=dropped_rounds,
    )
    return SummaryRequest(
        system=render("summary_system.j2"),
        prompt=prompt,
        messages=len(messages),
        dropped_rounds=dropped_rounds,
    )


_LIMIT_PATTERNS: tuple[tuple[re.Pattern[str], Literal["actual_first", "limit_first"]], ...] = (
    # Anthropic: "prompt is too long: 215000 tokens > 200000 maximum"
    (re.compile(r"(\d[\d,]*)\s*tokens?\s*>\s*(\d[\d,]*)", re.IGNORECASE), "actual_first"),
    # OpenAI and compatible: "maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens"
    (
        re.compile(
            r"maximum context length is\s*(\d[\d,]*).*?(?:resulted in|requested)\s*(\d[\d,]*)",
            re.IGNORECASE | re.DOTALL,
        ),
        "limit_first",
    ),
)
_SPLIT = re.compile(r"(\d[\d,]*)\s*in the messages,\s*(\d[\d,]*)\s*in the completion", re.IGNORECASE)


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def too_long_numbers(message: str) -> tuple[int, int] | None:
    """(prompt tokens, tokens the prompt may use) from a too-long error, when it names them.

    When the error splits the request into messages and completion (vLLM,
    older OpenAI), the completion's share is taken off the limit, since only
    the messages can be shortened.
    """
    for pattern, order in _LIMIT_PATTERNS:
        found = pattern.search(message)
        if found is None:
            continue
        first, second = _int(found.group(1)), _int(found.group(2))
        actual, limit = (first, second) if order == "actual_first" else (second, first)
        split = _SPLIT.search(message)
        if split is not None:
            actual, limit = _int(split.group(1)), limit - _int(split.group(2))
        if actual > 0:
            return actual, limit
    return None


def rounds_to_drop(round_sizes: Sequence[int], *, prompt_chars: int, error: str, attempt: int) -> int:
    """How many of the oldest rounds to leave out after a too-long rejection.

    With token numbers in ``error`` the share of the prompt over the limit
    (plus a margin) is dropped; without them a growing share of the
    remaining transcript (a quarter, then half, then three quarters). At
    least one round goes, and the newest round always stays, so the result
    is 0 only when a single round is left.
    """
    if len(round_sizes) <= 1:
        return 0
    numbers = too_long_numbers(error)
    if numbers is not None and numbers[1] < numbers[0]:
        actual, limit = numbers
        share = (actual - max(limit, 0)) / actual + _DROP_MARGIN
        needed = math.ceil(share * max(prompt_chars, sum(round_sizes)))
    else:
        needed = math.ceil(sum(round_sizes) * min(_FALLBACK_DROP_SHARE * attempt, 0.9))
    dropped, covered = 0, 0
    while dropped < len(round_sizes) - 1 and (dropped == 0 or covered < needed):
        covered += round_sizes[dropped]
        dropped += 1
    return dropped


def _section_index(number: int, heading: str) -> int | None:
    index = number - 1
    words = set(_WORD.findall(heading.lower()))
    return index if words & _SECTION_WORDS[index] else None


def _sections(body: str) -> dict[str, str]:
    """The nine sections by their numbered headings, in order; {} when none are found."""
    found: list[tuple[int, int, int, str]] = []  # (section index, heading start, content start, same-line text)
    expected = 0
    for match in _HEADING.finditer(body):
        number = int(match.group(1))
        if number - 1 < expected:
            continue
        heading = match.group(2).replace("**", "")
        title, colon, rest = heading.partition(":")
        index = _section_index(number, title)
        if index is None:
            continue
        found.append((index, match.start(), match.end(), rest.strip() if colon else ""))
        expected = index + 1
    sections: dict[str, str] = {}
    for position, (index, _start, content_start, inline) in enumerate(found):
        end = found[position + 1][1] if position + 1 < len(found) else len(body)
        below = textwrap.dedent(body[content_start:end].strip("\n")).strip()
        sections[SECTION_TITLES[index]] = "\n".join(piece for piece in (inline, below) if piece)
    return sections


def parse_answer(
    answer: str,
    *,
    summarizer: str,
    source: str = "",
    dropped_rounds: int = 0,
    total_rounds: int = 0,
) -> Summary:
    """Turn a model's answer into a ``Summary``: the ``<summary>`` text, split into sections.

    ``source`` is the prompt that was sent: only CCR handles that appear in
    it are listed as cited, so a handle the model made up is never trusted.

    Raises:
        SummarizerError: the answer has no complete ``<summary>...</summary>``
            or the summary is empty (fail closed rather than keep a bad summary).
    """
    without_analysis = _ANALYSIS.sub("", answer)
    lowered = without_analysis.lower()
    start = lowered.find("<summary>")
    end = lowered.rfind("</summary>")
    if start < 0 or end < start:
        hint = "it was cut off" if start >= 0 else "it has no <summary> tag"
        raise SummarizerError(f"{summarizer}: the model's answer is not a usable summary: {hint}")
    body = without_analysis[start + len("<summary>") : end].strip()
    if not body:
        raise SummarizerError(f"{summarizer}: the model's answer has an empty <summary>")
    text = body
    if dropped_rounds:
        note = render("summary_truncated_note.j2", dropped_rounds=dropped_rounds, total_rounds=total_rounds)
        text = f"{note.strip()}\n\n{body}"
    handles = list(dict.fromkeys(h for h in _HANDLE.findall(body) if h in source))
    return Summary(
        text=text,
        summarizer=summarizer,
        sections=_sections(body),
        handles=handles,
        dropped_rounds=dropped_rounds,
    )


def summarize_rounds(
    messages: Sequence[Message],
    instructions: str | None,
    *,
    summarizer: str,
    send: Send,
    stored: Mapping[str, str] | None = None,
) -> Summary:
    """Ask for a summary of ``messages``; on a too-long rejection drop the oldest rounds and ask again.

    At most ``MAX_TOO_LONG_RETRIES`` resends, each without more of the
    oldest API rounds (never splitting a tool call from its result, never
    dropping the newest round).

    Raises:
        SummarizerError: nothing to summarize, the request is still too long
            after the last retry or with one round left, the answer is
            malformed, or ``send`` failed in any other way.
    """
    rounds = group_rounds(messages)
    if not rounds:
        raise SummarizerError(f"{summarizer}: there is nothing to summarize")
    sizes = [sum(_size(m) for m in r) for r in rounds]
    dropped = 0
    for attempt in range(MAX_TOO_LONG_RETRIES + 1):
        kept = [m for r in rounds[dropped:] for m in r]
        request = render_request(kept, instructions, dropped_rounds=dropped, stored=stored)
        try:
            answer = send(request)
        except PromptTooLong as exc:
            if attempt == MAX_TOO_LONG_RETRIES:
                raise SummarizerError(
                    f"{summarizer}: the summary request was still too long after {attempt} retries "
                    f"that left out the oldest {dropped} of {len(rounds)} rounds: {exc}"
                ) from exc
            more = rounds_to_drop(
                sizes[dropped:],
                prompt_chars=len(request.system) + len(request.prompt),
                error=str(exc),
                attempt=attempt + 1,
            )
            if more == 0:
                raise SummarizerError(
                    f"{summarizer}: the summary request is too long even with only the latest round: {exc}"
                ) from exc
            dropped += more
            continue
        return parse_answer(
            answer,
            summarizer=summarizer,
            source=request.system + request.prompt,
            dropped_rounds=dropped,
            total_rounds=len(rounds),
        )
    raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover


_LEDGER_TOKENS = 3_000
"""Tokens (Claude Code's rough estimate) of ledger facts a model-written summary is given and carries."""


class ModelClient(ABC):
    """What every summarizer with an SDK client shares: checked settings, the spans stored, closing.

    A subclass names itself in ``name``, calls this constructor before making
    its SDK client, and implements ``_close``. Use as a context manager or
    call ``close``.

    Raises:
        ConfigError: the timeout or output budget is out of range, or the
            model name is empty.
    """

    name: str

    def __init__(self, *, model: str, timeout_seconds: float, max_output_tokens: int) -> None:
        check_limits(timeout_seconds=timeout_seconds, max_output_tokens=max_output_tokens)
        if not model:
            raise ConfigError(f"the {self.name} summarizer needs a model name")
        self.model = model
        self.timeout_seconds = float(timeout_seconds)
        self.max_output_tokens = max_output_tokens

    def spans(self, messages: Sequence[Message]) -> list[Span]:
        """The spans the pipeline stores for ``messages`` before anything is dropped."""
        return head_spans(messages)

    def close(self) -> None:
        """Close the HTTP connections the client holds."""
        self._close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @abstractmethod
    def _close(self) -> None:
        """Release the SDK client."""


def ledger_facts(ledger: SessionLedger, tail: Sequence[Message], cwd: str | None) -> str:
    """The ledger's facts as a summary by a model or a provider carries them (as of the end of ``tail``)."""
    return ledger_digest(
        ledger,
        tail_view(ledger, tail) if tail else ledger,
        cwd=cwd,
        count=RoughCounter().count_text,
        budget_tokens=_LEDGER_TOKENS,
    )


class LLMClientSummarizer(ModelClient):
    """What the SDK-backed summarizers share: ``summarize`` over ``ModelClient``'s settings and closing.

    A subclass names itself in ``name``, calls this constructor before making
    its SDK client, and implements ``_send`` (one request, the answer's text)
    and ``_close``. Use as a context manager or call ``close``.

    Raises:
        ConfigError: the timeout or output budget is out of range, or the
            model name is empty.
    """

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary:
        """Summarize ``messages``, following ``instructions`` as well when given.

        With ``spans`` (what the pipeline stored), tool results stored on
        their own show their handle in the prompt, and the summary may cite it.
        ``cwd`` is accepted for the protocol; the model sees paths as they are.

        Raises:
            SummarizerError: the request failed (HTTP error, timeout, refused
                connection), stayed too long after three retries, or the
                answer was malformed.
        """
        stored = {s.ref: s.handle for s in spans or () if s.kind == "tool_result" and s.ref}
        if ledger is None:
            return summarize_rounds(messages, instructions, summarizer=self.name, send=self._send, stored=stored)
        # The model gets the session's ledger as input and writes the briefing; the session's index
        # follows it as its own message (the pipeline adds it), so that no path or command rests on
        # the model's memory.
        facts = ledger_facts(ledger, tail, cwd)
        asked = "\n\n".join(p for p in (instructions, render("summary_ledger_input.j2", facts=facts).strip()) if p)
        return summarize_rounds(messages, asked, summarizer=self.name, send=self._send, stored=stored)

    @abstractmethod
    def _send(self, request: SummaryRequest) -> str:
        """Send one request and return the answer's text (see ``Send``)."""
