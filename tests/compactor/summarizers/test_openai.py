"""The OpenAI-compatible summarizer against a loopback server that speaks chat completions.

Behaviour both LLM summarizers share is tested once for each in ``test_clients.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.messages import Message
from compactor.summarizers.openai import LOCAL_SERVER_KEY, OpenAISummarizer


def test_openai_itself_gets_the_current_output_limit_field(
    openai_client: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_client.server.answer(good_answer)
    with openai_client.make(token_field="max_completion_tokens") as summarizer:
        summarizer.summarize(conversation)
    body = openai_client.server.requests[0].body
    assert body["max_completion_tokens"] == 20_000 and "max_tokens" not in body


def test_a_local_server_without_a_key_gets_a_placeholder(
    openai_client: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_client.server.answer(good_answer)
    with openai_client.make(api_key=None) as summarizer:
        summarizer.summarize(conversation)
    assert openai_client.key_of(openai_client.server.requests[0]) == LOCAL_SERVER_KEY


def test_openai_itself_without_a_key_refuses_to_start() -> None:
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAISummarizer()


def test_a_context_error_without_a_code_is_recognized_by_its_message(
    openai_client: Any, conversation: list[Message], good_answer: str
) -> None:
    openai_client.server.error(
        400,
        "BadRequestError",
        "This model's maximum context length is 4096 tokens. However, you requested 6000 tokens "
        "(4000 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
    )
    openai_client.server.answer(good_answer)
    with openai_client.make() as summarizer:
        summary = summarizer.summarize(conversation)
    assert len(openai_client.server.requests) == 2
    assert summary.dropped_rounds > 0


def test_an_answer_with_an_empty_summary_fails_closed(openai_client: Any, conversation: list[Message]) -> None:
    openai_client.server.answer("<analysis>done</analysis><summary>\n  \n</summary>")
    with openai_client.make() as summarizer, pytest.raises(SummarizerError, match="empty"):
        summarizer.summarize(conversation)


def test_an_answer_without_content_fails_closed(openai_client: Any, conversation: list[Message]) -> None:
    openai_client.server.answer(None, finish_reason="length")
    with openai_client.make() as summarizer, pytest.raises(SummarizerError, match="no text"):
        summarizer.summarize(conversation)


def test_a_response_without_choices_fails_closed(openai_client: Any, conversation: list[Message]) -> None:
    openai_client.server.reply(200, {"object": "chat.completion"})
    with openai_client.make() as summarizer, pytest.raises(SummarizerError, match="no choices"):
        summarizer.summarize(conversation)


def test_an_unknown_model_is_not_mistaken_for_a_too_long_prompt(
    openai_client: Any, conversation: list[Message]
) -> None:
    openai_client.server.reply(404, {"error": f"model '{openai_client.model}' not found"})
    with openai_client.make() as summarizer, pytest.raises(SummarizerError, match="HTTP 404: model"):
        summarizer.summarize(conversation)
    assert len(openai_client.server.requests) == 1


def test_an_unknown_output_limit_field_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="token_field"):
        OpenAISummarizer(api_key="k", token_field="max_output")  # type: ignore[arg-type]


@pytest.mark.parametrize("seconds", [0, -2.5, float("nan")])
def test_a_timeout_that_is_not_positive_is_a_config_error(seconds: float) -> None:
    with pytest.raises(ConfigError, match="timeout_seconds"):
        OpenAISummarizer(api_key="k", timeout_seconds=seconds)
