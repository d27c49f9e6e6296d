"""The Anthropic summarizer against a loopback server that speaks the Messages API."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from compactor.errors import ConfigError, SummarizerError
from compactor.messages import Message
from compactor.summarizers.anthropic import AnthropicSummarizer
from compactor.summarizers.base import SECTION_TITLES, Summarizer

MODEL = "claude-sonnet-4-6"


def make(server: Any, **options: Any) -> AnthropicSummarizer:
    settings: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "api_key": "test-key"}
    settings.update(options)
    return AnthropicSummarizer(**settings)


def key_of(request: Any) -> str:
    """The key a request carried: SDK versions send it as x-api-key or as a bearer token."""
    headers: dict[str, str] = request.headers
    if "x-api-key" in headers:
        return headers["x-api-key"]
    return headers["authorization"].removeprefix("Bearer ")


def prompt_of(request: Any) -> str:
    content = request.body["messages"][0]["content"]
    assert isinstance(content, str)
    return content


def test_a_summary_comes_back_with_its_nine_sections_and_without_the_analysis(
    anthropic_server: Any, conversation: list[Message], good_answer: str
) -> None:
    anthropic_server.answer(good_answer)
    with make(anthropic_server) as summarizer:
        summary = summarizer.summarize(conversation, "Keep every module name.")
    assert summary.summarizer == "anthropic"
    assert list(summary.sections) == list(SECTION_TITLES)
    assert summary.sections["Current work"] == "Module 5 was edited last."
    assert "<analysis>" not in summary.text and "scratch work" not in summary.text
    assert summary.text.startswith("1. Primary Request and Intent:")
    assert summary.dropped_rounds == 0


def test_the_request_names_the_model_and_carries_the_sections_instructions_and_transcript(
    anthropic_server: Any, conversation: list[Message], good_answer: str
) -> None:
    anthropic_server.answer(good_answer)
    with make(anthropic_server, max_output_tokens=12_000) as summarizer:
        summarizer.summarize(conversation, "Keep every module name.")
    [request] = anthropic_server.requests
    assert request.path == "/v1/messages"
    assert key_of(request) == "test-key"
    assert request.body["model"] == MODEL
    assert request.body["max_tokens"] == 12_000
    assert "summar" in request.body["system"]
    assert [m["role"] for m in request.body["messages"]] == ["user"]
    prompt = prompt_of(request)
    for number, title in enumerate(SECTION_TITLES, start=1):
        assert f"{number}. {title}:" in prompt
    assert "<analysis>" in prompt and "<summary>" in prompt
    assert "Keep every module name." in prompt
    assert "Request 0: please edit src/module_0.py" in prompt
    assert '"file_path": "src/module_5.py"' in prompt
    assert "def f5():" in prompt


def test_it_is_a_summarizer(anthropic_server: Any) -> None:
    with make(anthropic_server) as summarizer:
        assert isinstance(summarizer, Summarizer)
        assert summarizer.name == "anthropic"


def test_a_too_long_prompt_is_retried_without_the_oldest_rounds_and_says_so(
    anthropic_server: Any, conversation: list[Message], good_answer: str
) -> None:
    anthropic_server.too_long(actual=240_000, limit=200_000)
    anthropic_server.answer(good_answer)
    with make(anthropic_server) as summarizer:
        summary = summarizer.summarize(conversation)
    first, second = anthropic_server.requests
    assert len(prompt_of(second)) < len(prompt_of(first))
    assert prompt_of(first).count("\n### ") > prompt_of(second).count("\n### ")
    assert "Request 0:" in prompt_of(first) and "Request 0:" not in prompt_of(second)
    assert "Request 5:" in prompt_of(second)
    assert summary.dropped_rounds > 0
    assert f"{summary.dropped_rounds} of the 12 rounds at the start" in summary.text
    assert "left out" in summary.text
    assert list(summary.sections) == list(SECTION_TITLES)


def test_a_prompt_too_long_on_every_try_fails_after_three_retries(
    anthropic_server: Any, conversation: list[Message]
) -> None:
    anthropic_server.always(400, anthropic_server.too_long_body(201_000, 200_000))
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="still too long"):
        summarizer.summarize(conversation)
    sizes = [len(prompt_of(r)) for r in anthropic_server.requests]
    assert len(sizes) == 4
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4


def test_an_answer_without_a_summary_tag_fails_closed(anthropic_server: Any, conversation: list[Message]) -> None:
    anthropic_server.answer("<analysis>thinking</analysis>\nHere is what happened: a lot.")
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="no <summary> tag"):
        summarizer.summarize(conversation)


def test_an_answer_cut_off_inside_the_summary_fails_closed(
    anthropic_server: Any, conversation: list[Message]
) -> None:
    anthropic_server.answer("<summary>\n1. Primary Request and Intent:\n   The user", stop_reason="max_tokens")
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="cut off"):
        summarizer.summarize(conversation)


def test_a_response_that_is_not_a_message_fails_closed(anthropic_server: Any, conversation: list[Message]) -> None:
    anthropic_server.reply(200, {"unexpected": True})
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="no content"):
        summarizer.summarize(conversation)


def test_a_server_that_does_not_answer_in_time_fails_closed_without_retrying(
    anthropic_server: Any, conversation: list[Message]
) -> None:
    anthropic_server.hang()
    with make(anthropic_server, timeout_seconds=0.5) as summarizer, pytest.raises(
        SummarizerError, match=r"no answer within 0\.5 s"
    ):
        summarizer.summarize(conversation)
    assert len(anthropic_server.requests) == 1


def test_a_server_error_fails_closed_without_retrying(anthropic_server: Any, conversation: list[Message]) -> None:
    anthropic_server.error(500, "api_error", "Internal server error")
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="HTTP 500: Internal server error"):
        summarizer.summarize(conversation)
    assert len(anthropic_server.requests) == 1


def test_another_bad_request_is_not_mistaken_for_a_too_long_prompt(
    anthropic_server: Any, conversation: list[Message]
) -> None:
    anthropic_server.error(400, "invalid_request_error", "model: unknown model")
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="HTTP 400: model: unknown model"):
        summarizer.summarize(conversation)
    assert len(anthropic_server.requests) == 1


def test_a_refused_connection_fails_closed(closed_port: int, conversation: list[Message]) -> None:
    summarizer = AnthropicSummarizer(base_url=f"http://127.0.0.1:{closed_port}", api_key="k", timeout_seconds=5)
    with summarizer, pytest.raises(SummarizerError, match="could not reach"):
        summarizer.summarize(conversation)


def test_an_empty_conversation_is_refused_before_any_request(anthropic_server: Any) -> None:
    with make(anthropic_server) as summarizer, pytest.raises(SummarizerError, match="nothing to summarize"):
        summarizer.summarize([])
    assert anthropic_server.requests == []


def test_the_compactor_key_variable_wins_over_the_providers(
    anthropic_server: Any, conversation: list[Message], good_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "provider-key")
    monkeypatch.setenv("COMPACTOR_LLM_API_KEY", "compactor-key")
    anthropic_server.answer(good_answer)
    with make(anthropic_server, api_key=None) as summarizer:
        summarizer.summarize(conversation)
    assert key_of(anthropic_server.requests[0]) == "compactor-key"


def test_a_named_key_variable_is_read_first(
    anthropic_server: Any, conversation: list[Message], good_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTOR_LLM_API_KEY", "compactor-key")
    monkeypatch.setenv("MY_TEAM_KEY", "team-key")
    anthropic_server.answer(good_answer)
    with make(anthropic_server, api_key=None, api_key_env="MY_TEAM_KEY") as summarizer:
        summarizer.summarize(conversation)
    assert key_of(anthropic_server.requests[0]) == "team-key"


def test_without_any_key_it_refuses_to_start(anthropic_server: Any) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        make(anthropic_server, api_key=None)


def test_without_the_sdk_it_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ConfigError, match=r"compactor\[anthropic\]"):
        AnthropicSummarizer(api_key="k")


@pytest.mark.parametrize("tokens", [0, -1, 20_001])
def test_an_output_budget_out_of_range_is_a_config_error(tokens: int) -> None:
    with pytest.raises(ConfigError, match="max_output_tokens"):
        AnthropicSummarizer(api_key="k", max_output_tokens=tokens)
