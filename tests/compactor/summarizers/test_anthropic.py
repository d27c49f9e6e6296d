"""The Anthropic summarizer against a loopback server that speaks the Messages API.

Behaviour both LLM summarizers share is tested once for each in ``test_clients.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.messages import Message
from compactor.summarizers.anthropic import AnthropicSummarizer


def test_an_answer_cut_off_inside_the_summary_fails_closed(anthropic_client: Any, conversation: list[Message]) -> None:
    anthropic_client.server.answer("<summary>\n1. Primary Request and Intent:\n   The user", stop_reason="max_tokens")
    with anthropic_client.make() as summarizer, pytest.raises(SummarizerError, match="cut off"):
        summarizer.summarize(conversation)


def test_a_response_that_is_not_a_message_fails_closed(anthropic_client: Any, conversation: list[Message]) -> None:
    anthropic_client.server.reply(200, {"unexpected": True})
    with anthropic_client.make() as summarizer, pytest.raises(SummarizerError, match="no content"):
        summarizer.summarize(conversation)


def test_another_bad_request_is_not_mistaken_for_a_too_long_prompt(
    anthropic_client: Any, conversation: list[Message]
) -> None:
    anthropic_client.server.error(400, "invalid_request_error", "model: unknown model")
    with anthropic_client.make() as summarizer, pytest.raises(SummarizerError, match="HTTP 400: model: unknown model"):
        summarizer.summarize(conversation)
    assert len(anthropic_client.server.requests) == 1


def test_an_empty_conversation_is_refused_before_any_request(anthropic_client: Any) -> None:
    with anthropic_client.make() as summarizer, pytest.raises(SummarizerError, match="nothing to summarize"):
        summarizer.summarize([])
    assert anthropic_client.server.requests == []


def test_a_named_key_variable_is_read_first(
    anthropic_client: Any, conversation: list[Message], good_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COMPACTOR_LLM_API_KEY", "compactor-key")
    monkeypatch.setenv("MY_TEAM_KEY", "team-key")
    anthropic_client.server.answer(good_answer)
    with anthropic_client.make(api_key=None, api_key_env="MY_TEAM_KEY") as summarizer:
        summarizer.summarize(conversation)
    assert anthropic_client.key_of(anthropic_client.server.requests[0]) == "team-key"


def test_without_any_key_it_refuses_to_start(anthropic_client: Any) -> None:
    with pytest.raises(ConfigError, match="ANTHROPIC_API_KEY"):
        anthropic_client.make(api_key=None)


@pytest.mark.parametrize("tokens", [0, -1, 20_001])
def test_an_output_budget_out_of_range_is_a_config_error(tokens: int) -> None:
    with pytest.raises(ConfigError, match="max_output_tokens"):
        AnthropicSummarizer(api_key="k", max_output_tokens=tokens)
