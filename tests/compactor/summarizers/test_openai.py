"""The OpenAI-compatible summarizer against a loopback server that speaks chat completions."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from compactor.errors import ConfigError, SummarizerError
from compactor.messages import Message
from compactor.summarizers.base import SECTION_TITLES, Summarizer
from compactor.summarizers.openai import LOCAL_SERVER_KEY, OpenAISummarizer

MODEL = "qwen2.5-coder:7b"


def make(server: Any, **options: Any) -> OpenAISummarizer:
    settings: dict[str, Any] = {"base_url": server.base_url, "model": MODEL, "api_key": "test-key"}
    settings.update(options)
    return OpenAISummarizer(**settings)


def key_of(request: Any) -> str:
    headers: dict[str, str] = request.headers
    return headers["authorization"].removeprefix("Bearer ")


def prompt_of(request: Any) -> str:
    system, user = request.body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    content = user["content"]
    assert isinstance(content, str)
    return content


def test_a_summary_comes_back_with_its_nine_sections_and_without_the_analysis(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.answer(good_answer)
    with make(openai_server) as summarizer:
        summary = summarizer.summarize(conversation, "Keep every module name.")
    assert summary.summarizer == "openai"
    assert list(summary.sections) == list(SECTION_TITLES)
    assert summary.sections["Files and code sections"] == "- src/module_5.py\n  - def f5(): return 5"
    assert "<analysis>" not in summary.text and "scratch work" not in summary.text
    assert summary.dropped_rounds == 0


def test_the_request_names_the_model_and_carries_the_sections_instructions_and_transcript(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.answer(good_answer)
    with make(openai_server, max_output_tokens=8_000) as summarizer:
        summarizer.summarize(conversation, "Keep every module name.")
    [request] = openai_server.requests
    assert request.path == "/v1/chat/completions"
    assert key_of(request) == "test-key"
    assert request.body["model"] == MODEL
    assert request.body["max_tokens"] == 8_000
    assert "summar" in request.body["messages"][0]["content"]
    prompt = prompt_of(request)
    for number, title in enumerate(SECTION_TITLES, start=1):
        assert f"{number}. {title}:" in prompt
    assert "<analysis>" in prompt and "<summary>" in prompt
    assert "Keep every module name." in prompt
    assert "Request 0: please edit src/module_0.py" in prompt
    assert '"file_path": "src/module_5.py"' in prompt


def test_openai_itself_gets_the_current_output_limit_field(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.answer(good_answer)
    with make(openai_server, token_field="max_completion_tokens") as summarizer:
        summarizer.summarize(conversation)
    body = openai_server.requests[0].body
    assert body["max_completion_tokens"] == 20_000 and "max_tokens" not in body


def test_a_local_server_without_a_key_gets_a_placeholder(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.answer(good_answer)
    with make(openai_server, api_key=None) as summarizer:
        summarizer.summarize(conversation)
    assert key_of(openai_server.requests[0]) == LOCAL_SERVER_KEY


def test_openai_itself_without_a_key_refuses_to_start() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAISummarizer()


def test_it_is_a_summarizer(openai_server: Any) -> None:
    with make(openai_server) as summarizer:
        assert isinstance(summarizer, Summarizer)
        assert summarizer.name == "openai"


def test_a_too_long_prompt_is_retried_without_the_oldest_rounds_and_says_so(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.too_long(actual=150_000, limit=128_000)
    openai_server.answer(good_answer)
    with make(openai_server) as summarizer:
        summary = summarizer.summarize(conversation)
    first, second = openai_server.requests
    assert len(prompt_of(second)) < len(prompt_of(first))
    assert prompt_of(first).count("\n### ") > prompt_of(second).count("\n### ")
    assert "Request 0:" in prompt_of(first) and "Request 0:" not in prompt_of(second)
    assert "Request 5:" in prompt_of(second)
    assert summary.dropped_rounds > 0
    assert f"{summary.dropped_rounds} of the 12 rounds at the start" in summary.text


def test_a_context_error_without_a_code_is_recognized_by_its_message(
    openai_server: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_server.error(
        400,
        "BadRequestError",
        "This model's maximum context length is 4096 tokens. However, you requested 6000 tokens "
        "(4000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
    )
    openai_server.answer(good_answer)
    with make(openai_server) as summarizer:
        summary = summarizer.summarize(conversation)
    assert len(openai_server.requests) == 2
    assert summary.dropped_rounds > 0


def test_a_prompt_too_long_on_every_try_fails_after_three_retries(
    openai_server: Any, conversation: list[Message]
) -> None:
    openai_server.always(400, openai_server.too_long_body(130_000, 128_000))
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="still too long"):
        summarizer.summarize(conversation)
    sizes = [len(prompt_of(r)) for r in openai_server.requests]
    assert len(sizes) == 4
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4


def test_an_answer_without_a_summary_tag_fails_closed(openai_server: Any, conversation: list[Message]) -> None:
    openai_server.answer("Sure! The user edited some modules.")
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="no <summary> tag"):
        summarizer.summarize(conversation)


def test_an_answer_with_an_empty_summary_fails_closed(openai_server: Any, conversation: list[Message]) -> None:
    openai_server.answer("<analysis>done</analysis><summary>\n  \n</summary>")
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="empty"):
        summarizer.summarize(conversation)


def test_an_answer_without_content_fails_closed(openai_server: Any, conversation: list[Message]) -> None:
    openai_server.answer(None, finish_reason="length")
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="no text"):
        summarizer.summarize(conversation)


def test_a_response_without_choices_fails_closed(openai_server: Any, conversation: list[Message]) -> None:
    openai_server.reply(200, {"object": "chat.completion"})
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="no choices"):
        summarizer.summarize(conversation)


def test_a_server_that_does_not_answer_in_time_fails_closed_without_retrying(
    openai_server: Any, conversation: list[Message]
) -> None:
    openai_server.hang()
    with make(openai_server, timeout_seconds=0.5) as summarizer, pytest.raises(
        SummarizerError, match=r"no answer within 0\.5 s"
    ):
        summarizer.summarize(conversation)
    assert len(openai_server.requests) == 1


def test_a_server_error_fails_closed_without_retrying(openai_server: Any, conversation: list[Message]) -> None:
    openai_server.error(500, "server_error", "The server had an error")
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="HTTP 500: The server had an error"):
        summarizer.summarize(conversation)
    assert len(openai_server.requests) == 1


def test_an_unknown_model_is_not_mistaken_for_a_too_long_prompt(
    openai_server: Any, conversation: list[Message]
) -> None:
    openai_server.reply(404, {"error": f"model '{MODEL}' not found"})
    with make(openai_server) as summarizer, pytest.raises(SummarizerError, match="HTTP 404: model"):
        summarizer.summarize(conversation)
    assert len(openai_server.requests) == 1


def test_a_refused_connection_fails_closed(closed_port: int, conversation: list[Message]) -> None:
    summarizer = OpenAISummarizer(base_url=f"http://127.0.0.1:{closed_port}/v1", timeout_seconds=5)
    with summarizer, pytest.raises(SummarizerError, match="could not reach"):
        summarizer.summarize(conversation)


def test_the_compactor_key_variable_wins_over_the_providers(
    openai_server: Any, conversation: list[Message], good_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "provider-key")
    monkeypatch.setenv("COMPACTOR_LLM_API_KEY", "compactor-key")
    openai_server.answer(good_answer)
    with make(openai_server, api_key=None) as summarizer:
        summarizer.summarize(conversation)
    assert key_of(openai_server.requests[0]) == "compactor-key"


def test_without_the_sdk_it_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ConfigError, match=r"compactor\[openai\]"):
        OpenAISummarizer(api_key="k")


def test_an_unknown_output_limit_field_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="token_field"):
        OpenAISummarizer(api_key="k", token_field="max_output")  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [0, -2.5, float("nan")])
def test_a_timeout_that_is_not_positive_is_a_config_error(seconds: float) -> None:
    with pytest.raises(ConfigError, match="timeout_seconds"):
        OpenAISummarizer(api_key="k", timeout_seconds=seconds)
