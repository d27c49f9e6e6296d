"""What both LLM summarizers share: the prompt, the answer parser and the too-long retry loop.

``summarize_rounds`` takes the function that sends one request as a
parameter; here it is a plain function that records what it was asked and
answers from a script, so the loop is tested without any HTTP.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from compactor.claude_code.transcript import read_transcript
from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.messages import (
    DocumentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from compactor.engine.rounds import group_rounds, is_prompt
from compactor.summarizers.base import SECTION_TITLES
from compactor.summarizers.llm import (
    API_KEY_ENV,
    MAX_TOO_LONG_RETRIES,
    PromptTooLong,
    SummaryRequest,
    check_limits,
    parse_answer,
    render_request,
    resolve_api_key,
    rounds_to_drop,
    summarize_rounds,
    too_long_numbers,
)

HANDLE = "ccr_" + "0123456789abcdef" * 2
INVENTED = "ccr_" + "f" * 32


def summary_of(body: str) -> str:
    return f"<analysis>scratch</analysis>\n<summary>\n{body}\n</summary>"


# --- the prompt ---------------------------------------------------------------------------


def test_images_and_documents_become_placeholders_and_thinking_is_left_out() -> None:
    messages = [
        Message(
            role="user",
            content=[
                TextBlock(text="What is in this screenshot?"),
                ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAA"}),
                DocumentBlock(title="design.pdf", source={"type": "base64", "data": "JVBERi0xLjQK"}),
            ],
        ),
        Message(
            role="assistant",
            content=[
                ThinkingBlock(thinking="private musing", signature="sig"),
                ToolUseBlock(id="t1", name="Bash", input={"command": "ls -la"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(
                    tool_use_id="t1",
                    content=[TextBlock(text="total 0"), ImageBlock(source={"data": "R0lGODlh"})],
                    is_error=True,
                )
            ],
        ),
    ]
    prompt = render_request(messages).prompt
    assert "[image]" in prompt and "[document: design.pdf]" in prompt
    for data in ("iVBORw0KGgoAAAA", "JVBERi0xLjQK", "R0lGODlh"):
        assert data not in prompt
    assert "private musing" not in prompt
    assert "[tool call: Bash, id t1]" in prompt and '"command": "ls -la"' in prompt
    assert "[tool result for t1 (an error)]\ntotal 0\n[image]" in prompt


def test_the_prompt_lists_the_nine_sections_in_order_and_appends_instructions() -> None:
    request = render_request([Message(role="user", content="hello")], "  Focus on the database schema.  ")
    headings = [request.prompt.index(f"{n}. {title}:") for n, title in enumerate(SECTION_TITLES, start=1)]
    assert headings == sorted(headings)
    assert request.prompt.rstrip().endswith("Focus on the database schema.\n</instructions>")
    assert request.messages == 1 and request.dropped_rounds == 0


def test_without_instructions_the_prompt_has_no_instruction_block() -> None:
    assert "<instructions>" not in render_request([Message(role="user", content="hello")], None).prompt
    assert "<instructions>" not in render_request([Message(role="user", content="hello")], "   ").prompt


def test_the_transcript_says_when_the_oldest_rounds_were_left_out() -> None:
    prompt = render_request([Message(role="user", content="hello")], dropped_rounds=3).prompt
    assert "The start of this conversation (3 rounds) did not fit" in prompt


# --- the answer ---------------------------------------------------------------------------


def test_sections_are_found_under_markdown_and_bold_headings_with_inline_text() -> None:
    body = (
        "## 1. Primary Request and Intent\nShip the parser.\n"
        "**2. Key Technical Concepts:** regular expressions\n"
        "### 3. Files and Code Sections:\n- parser.py\n"
        "7. Pending Tasks:\n1. Write docs\n2. Release\n"
        "9. Optional Next Step: None"
    )
    summary = parse_answer(summary_of(body), summarizer="test")
    assert summary.sections == {
        "Primary request and intent": "Ship the parser.",
        "Key technical concepts": "regular expressions",
        "Files and code sections": "- parser.py",
        "Pending tasks": "1. Write docs\n2. Release",
        "Next step": "None",
    }


def test_a_numbered_list_inside_a_section_does_not_start_a_new_section() -> None:
    body = "6. All user messages:\n- fix it\n7. Pending Tasks:\n1. tests\n8. polish\n8. Current Work:\nparsing"
    summary = parse_answer(summary_of(body), summarizer="test")
    assert summary.sections["Pending tasks"] == "1. tests\n8. polish"
    assert summary.sections["Current work"] == "parsing"


def test_a_summary_without_numbered_sections_is_kept_whole() -> None:
    summary = parse_answer(summary_of("The user and the agent fixed the build."), summarizer="test")
    assert summary.text == "The user and the agent fixed the build."
    assert summary.sections == {}


def test_the_analysis_is_stripped_even_when_it_mentions_the_summary_tag() -> None:
    answer = "<analysis>I will write <summary> next.</analysis>\n<summary>Done.</summary>"
    assert parse_answer(answer, summarizer="test").text == "Done."


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("no tags at all", "no <summary> tag"),
        ("<analysis>only thinking</analysis>", "no <summary> tag"),
        ("<summary>1. Primary request", "cut off"),
        ("<summary>   </summary>", "empty"),
        ("", "no <summary> tag"),
    ],
)
def test_a_malformed_answer_is_an_error(answer: str, reason: str) -> None:
    with pytest.raises(SummarizerError, match=reason):
        parse_answer(answer, summarizer="test")


def test_only_handles_present_in_the_prompt_are_cited() -> None:
    answer = summary_of(f"See {HANDLE} and <<ccr:{INVENTED}>> and {HANDLE} again.")
    summary = parse_answer(answer, summarizer="test", source=f"earlier output <<ccr:{HANDLE}>>")
    assert summary.handles == [HANDLE]


def test_a_truncated_summary_starts_with_a_note_about_what_was_left_out() -> None:
    summary = parse_answer(summary_of("Body."), summarizer="test", dropped_rounds=4, total_rounds=10)
    assert summary.text.startswith("Note: 4 of the 10 rounds at the start of the conversation")
    assert summary.text.endswith("\n\nBody.")
    assert summary.dropped_rounds == 4


_SECTION_TEXT = st.text(alphabet=st.characters(exclude_characters="<>\r", exclude_categories=["Cs"]))


@given(st.lists(_SECTION_TEXT, min_size=9, max_size=9))
def test_each_section_written_under_its_heading_is_read_back(contents: list[str]) -> None:
    pairs = zip(SECTION_TITLES, contents, strict=True)
    lines = [f"{n}. {title}:\n{' '.join(text.split())}" for n, (title, text) in enumerate(pairs, start=1)]
    summary = parse_answer(summary_of("\n\n".join(lines)), summarizer="test")
    assert list(summary.sections) == list(SECTION_TITLES)
    for title, text in zip(SECTION_TITLES, contents, strict=True):
        assert summary.sections[title] == " ".join(text.split())


# --- too-long errors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "numbers"),
    [
        ("prompt is too long: 215000 tokens > 200000 maximum", (215_000, 200_000)),
        (
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 150123 tokens.",
            (150_123, 128_000),
        ),
        (
            "This model's maximum context length is 4096 tokens. However, you requested 6000 tokens "
            "(4000 in the messages, 2000 in the completion).",
            (4_000, 2_096),
        ),
        ("the request exceeds the available context size, try increasing it", None),
        ("prompt is too long", None),
    ],
)
def test_token_numbers_are_read_from_too_long_errors(message: str, numbers: tuple[int, int] | None) -> None:
    assert too_long_numbers(message) == numbers


def test_dropping_follows_the_numbers_in_the_error() -> None:
    sizes = [100] * 10
    # 25% over the limit plus a 10% margin: 35% of 1,000 characters, four rounds of 100.
    error = "prompt is too long: 125 tokens > 100 maximum"
    assert rounds_to_drop(sizes, prompt_chars=1_000, error=error, attempt=1) == 4


def test_without_numbers_a_growing_share_is_dropped() -> None:
    sizes = [100] * 20
    drops = [rounds_to_drop(sizes, prompt_chars=2_000, error="too long", attempt=n) for n in (1, 2, 3)]
    assert drops == [5, 10, 15]


@given(
    sizes=st.lists(st.integers(min_value=1, max_value=10_000), max_size=40),
    actual=st.integers(min_value=1, max_value=10**6),
    limit=st.integers(min_value=-10, max_value=10**6),
    attempt=st.integers(min_value=1, max_value=MAX_TOO_LONG_RETRIES),
    with_numbers=st.booleans(),
)
def test_dropping_always_removes_a_round_and_keeps_the_newest(
    sizes: list[int], actual: int, limit: int, attempt: int, with_numbers: bool
) -> None:
    error = f"prompt is too long: {actual} tokens > {limit} maximum" if with_numbers else "too long"
    dropped = rounds_to_drop(sizes, prompt_chars=sum(sizes) + 500, error=error, attempt=attempt)
    if len(sizes) <= 1:
        assert dropped == 0
    else:
        assert 1 <= dropped <= len(sizes) - 1


# --- the retry loop -----------------------------------------------------------------------


class Script:
    """A send function: raises or answers in order, and records each request."""

    def __init__(self, *steps: str | Exception) -> None:
        self.steps = list(steps)
        self.requests: list[SummaryRequest] = []

    def __call__(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        return step


def conversation(prompts: int, calls_per_prompt: int) -> list[Message]:
    messages: list[Message] = []
    for p in range(prompts):
        messages.append(Message(role="user", content=f"prompt {p}"))
        for c in range(calls_per_prompt):
            tool_id = f"t{p}_{c}"
            messages.append(Message(role="assistant", content=[ToolUseBlock(id=tool_id, name="Read", input={"n": c})]))
            messages.append(Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content="x" * 50)]))
        messages.append(Message(role="assistant", content=f"answer {p}"))
    return messages


def too_long() -> PromptTooLong:
    return PromptTooLong("prompt is too long")


def test_a_request_that_fits_is_sent_once_with_every_message() -> None:
    send = Script(summary_of("ok"))
    messages = conversation(3, 1)
    summary = summarize_rounds(messages, "be brief", summarizer="test", send=send)
    assert summary.text == "ok" and summary.dropped_rounds == 0
    [request] = send.requests
    assert request.messages == len(messages)
    assert "be brief" in request.prompt


@given(
    prompts=st.integers(min_value=2, max_value=6),
    calls=st.integers(min_value=0, max_value=3),
    failures=st.integers(min_value=1, max_value=3),
)
def test_retries_send_a_suffix_of_whole_rounds_and_never_split_a_tool_call(
    prompts: int, calls: int, failures: int
) -> None:
    messages = conversation(prompts, calls)
    rounds = group_rounds(messages)
    send = Script(*([too_long()] * failures), summary_of("ok"))
    try:
        summary = summarize_rounds(messages, None, summarizer="test", send=send)
    except SummarizerError as exc:
        assert "only the latest round" in str(exc)
        return
    counts = [r.messages for r in send.requests]
    assert counts == sorted(counts, reverse=True) and len(set(counts)) == len(counts)
    kept = counts[-1]
    suffixes = [sum(len(r) for r in rounds[i:]) for i in range(len(rounds))]
    assert kept in suffixes
    assert summary.dropped_rounds == suffixes.index(kept) > 0
    sent = messages[len(messages) - kept :]
    used = {b.id for m in sent for b in m.tool_uses()}
    answered = {b.tool_use_id for m in sent for b in m.tool_results()}
    assert used == answered


def test_too_long_on_every_attempt_stops_after_the_last_retry() -> None:
    send = Script(too_long())
    with pytest.raises(SummarizerError, match="still too long after 3 retries") as caught:
        summarize_rounds(conversation(20, 1), None, summarizer="test", send=send)
    assert len(send.requests) == 1 + MAX_TOO_LONG_RETRIES
    assert isinstance(caught.value.__cause__, PromptTooLong)


def test_a_single_round_that_is_too_long_fails_at_once() -> None:
    send = Script(too_long())
    with pytest.raises(SummarizerError, match="only the latest round"):
        summarize_rounds([Message(role="user", content="huge")], None, summarizer="test", send=send)
    assert len(send.requests) == 1


def test_other_failures_are_not_retried() -> None:
    send = Script(SummarizerError("the server answered HTTP 529"))
    with pytest.raises(SummarizerError, match="529"):
        summarize_rounds(conversation(5, 1), None, summarizer="test", send=send)
    assert len(send.requests) == 1


# --- configuration ------------------------------------------------------------------------


def test_the_key_comes_from_the_argument_then_the_named_variable_then_ours_then_the_providers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PROVIDER_KEY", "provider")
    assert resolve_api_key(None, provider_env="PROVIDER_KEY") == "provider"
    monkeypatch.setenv(API_KEY_ENV, "ours")
    assert resolve_api_key(None, provider_env="PROVIDER_KEY") == "ours"
    monkeypatch.setenv("NAMED_KEY", "named")
    assert resolve_api_key(None, provider_env="PROVIDER_KEY", api_key_env="NAMED_KEY") == "named"
    assert resolve_api_key("given", provider_env="PROVIDER_KEY", api_key_env="NAMED_KEY") == "given"


def test_an_empty_key_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "")
    monkeypatch.delenv("PROVIDER_KEY", raising=False)
    assert resolve_api_key(None, provider_env="PROVIDER_KEY") is None


@pytest.mark.parametrize(
    ("timeout", "tokens", "field"),
    [
        (0, 100, "timeout_seconds"),
        (float("inf"), 100, "timeout_seconds"),
        (True, 100, "timeout_seconds"),
        (1.0, 0, "max_output_tokens"),
        (1.0, 20_001, "max_output_tokens"),
        (1.0, 1.5, "max_output_tokens"),
    ],
)
def test_limits_out_of_range_are_config_errors(timeout: float, tokens: int, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        check_limits(timeout_seconds=timeout, max_output_tokens=tokens)


# --- real sessions ------------------------------------------------------------------------


def _inline_data(messages: list[Message]) -> list[str]:
    """The base64 payloads of every image and document, nested ones included."""
    found: list[str] = []
    for message in messages:
        for block in message.blocks():
            inner = block.content if isinstance(block, ToolResultBlock) and isinstance(block.content, list) else []
            for candidate in [block, *inner]:
                if isinstance(candidate, ImageBlock | DocumentBlock):
                    data = candidate.source.get("data")
                    if isinstance(data, str) and len(data) > 64:
                        found.append(data[:64])
    return found


def test_a_real_session_renders_every_prompt_and_no_inline_data(shared_transcript: Path) -> None:
    messages = read_transcript(shared_transcript, subagents=False).messages
    assert messages
    prompt = render_request(messages).prompt
    for data in _inline_data(messages):
        assert data not in prompt
    prompts = [m.text().strip() for m in messages if is_prompt(m) and not m.is_meta and m.text().strip()]
    assert prompts
    for text in prompts:
        assert text in prompt


def test_a_real_session_cut_for_length_keeps_tool_calls_with_their_results(shared_transcript: Path) -> None:
    messages = read_transcript(shared_transcript, subagents=False).messages
    send = Script(PromptTooLong("prompt is too long: 300000 tokens > 200000 maximum"), summary_of("ok"))
    summary = summarize_rounds(messages, None, summarizer="test", send=send)
    first, second = send.requests
    assert first.messages == len(messages) and 0 < second.messages < len(messages)
    assert summary.dropped_rounds > 0
    # A third of the prompt was over the limit: at least that much transcript goes, or all but the last round.
    only_last_round_left = second.messages == len(group_rounds(messages)[-1])
    assert only_last_round_left or len(first.prompt) - len(second.prompt) >= len(first.prompt) / 3
    sent = messages[len(messages) - second.messages :]
    calls_everywhere = {b.id for m in messages for b in m.tool_uses()}
    calls_sent = {b.id for m in sent for b in m.tool_uses()}
    for result in (b for m in sent for b in m.tool_results()):
        if result.tool_use_id in calls_everywhere:
            assert result.tool_use_id in calls_sent
