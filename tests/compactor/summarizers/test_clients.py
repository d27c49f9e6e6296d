"""What both LLM summarizers do alike, each against a loopback server that speaks its protocol."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.summarizers.base import SECTION_TITLES, Summarizer


def test_a_summary_comes_back_with_its_nine_sections_and_without_the_analysis(
    client: Any, conversation: list[Message], good_answer: str
) -> None:
    client.server.answer(good_answer)
    with client.make() as summarizer:
        summary = summarizer.summarize(conversation, "Keep every module name.")
    assert summary.summarizer == client.name
    assert list(summary.sections) == list(SECTION_TITLES)
    assert summary.sections["Current work"] == "Module 5 was edited last."
    assert summary.sections["Files and code sections"] == "- src/module_5.py\n  - def f5(): return 5"
    assert "<analysis>" not in summary.text and "scratch work" not in summary.text
    assert summary.text.startswith("1. Primary Request and Intent:")
    assert summary.dropped_rounds == 0


def test_the_request_names_the_model_and_carries_the_sections_instructions_and_transcript(
    client: Any, conversation: list[Message], good_answer: str
) -> None:
    client.server.answer(good_answer)
    with client.make(max_output_tokens=12_000) as summarizer:
        summarizer.summarize(conversation, "Keep every module name.")
    [request] = client.server.requests
    assert request.path == client.server.endpoint
    assert client.key_of(request) == "test-key"
    assert request.body["model"] == client.model
    assert request.body["max_tokens"] == 12_000
    assert "summar" in client.system_of(request)
    prompt = client.prompt_of(request)
    for number, title in enumerate(SECTION_TITLES, start=1):
        assert f"{number}. {title}:" in prompt
    assert "<analysis>" in prompt and "<summary>" in prompt
    assert "Keep every module name." in prompt
    assert "Request 0: please edit src/module_0.py" in prompt
    assert '"file_path": "src/module_5.py"' in prompt
    assert "def f5():" in prompt


def test_it_is_a_summarizer(client: Any) -> None:
    with client.make() as summarizer:
        assert isinstance(summarizer, Summarizer)
        assert summarizer.name == client.name


def test_a_too_long_prompt_is_retried_without_the_oldest_rounds_and_says_so(
    client: Any, conversation: list[Message], good_answer: str
) -> None:
    client.server.too_long(actual=240_000, limit=200_000)
    client.server.answer(good_answer)
    with client.make() as summarizer:
        summary = summarizer.summarize(conversation)
    first, second = (client.prompt_of(r) for r in client.server.requests)
    assert len(second) < len(first)
    assert first.count("\n### ") > second.count("\n### ")
    assert "Request 0:" in first and "Request 0:" not in second
    assert "Request 5:" in second
    assert summary.dropped_rounds > 0
    assert f"{summary.dropped_rounds} of the 12 rounds at the start" in summary.text
    assert "left out" in summary.text
    assert list(summary.sections) == list(SECTION_TITLES)


def test_a_prompt_too_long_on_every_try_fails_after_three_retries(client: Any, conversation: list[Message]) -> None:
    client.server.always(400, client.server.too_long_body(201_000, 200_000))
    with client.make() as summarizer, pytest.raises(SummarizerError, match="still too long"):
        summarizer.summarize(conversation)
    sizes = [len(client.prompt_of(r)) for r in client.server.requests]
    assert len(sizes) == 4
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 4


@pytest.mark.parametrize(
    "answer", ["<analysis>thinking</analysis>\nHere is what happened: a lot.", "Sure! The user edited some modules."]
)
def test_an_answer_without_a_summary_tag_fails_closed(client: Any, conversation: list[Message], answer: str) -> None:
    client.server.answer(answer)
    with client.make() as summarizer, pytest.raises(SummarizerError, match="no <summary> tag"):
        summarizer.summarize(conversation)


def test_a_server_that_does_not_answer_in_time_fails_closed_without_retrying(
    client: Any, conversation: list[Message]
) -> None:
    client.server.hang()
    with (
        client.make(timeout_seconds=0.5) as summarizer,
        pytest.raises(SummarizerError, match=r"no answer within 0\.5 s"),
    ):
        summarizer.summarize(conversation)
    assert len(client.server.requests) == 1


def test_a_server_error_fails_closed_without_retrying(client: Any, conversation: list[Message]) -> None:
    client.server.error(500, "api_error", "Internal server error")
    with client.make() as summarizer, pytest.raises(SummarizerError, match="HTTP 500: Internal server error"):
        summarizer.summarize(conversation)
    assert len(client.server.requests) == 1


def test_a_refused_connection_fails_closed(client: Any, closed_port: int, conversation: list[Message]) -> None:
    summarizer = client.make(base_url=f"http://127.0.0.1:{closed_port}{client.server.prefix}", timeout_seconds=5)
    with summarizer, pytest.raises(SummarizerError, match="could not reach"):
        summarizer.summarize(conversation)


def test_the_compactor_key_variable_wins_over_the_providers(
    client: Any, conversation: list[Message], good_answer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(client.provider_key_env, "provider-key")
    monkeypatch.setenv("COMPACTOR_LLM_API_KEY", "compactor-key")
    client.server.answer(good_answer)
    with client.make(api_key=None) as summarizer:
        summarizer.summarize(conversation)
    assert client.key_of(client.server.requests[0]) == "compactor-key"


def test_without_the_sdk_it_says_which_extra_to_install(client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, client.name, None)
    with pytest.raises(ConfigError, match=rf"compactor\[{client.name}\]"):
        client.summarizer(api_key="k")


def test_stored_tool_results_show_their_handles_and_only_those_can_be_cited(client: Any) -> None:
    from compactor.core.messages import ToolResultBlock, ToolUseBlock
    from compactor.summarizers.base import CitingSummarizer

    log = "build log\n" + "ok\n" * 2_000
    messages = [
        Message(role="user", content="run the build"),
        Message(role="assistant", content=[ToolUseBlock(id="b1", name="Bash", input={"command": "make"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="b1", content=log)]),
        Message(role="assistant", content="It passed."),
    ]
    with client.make() as summarizer:
        assert isinstance(summarizer, CitingSummarizer)
        spans = summarizer.spans(messages)
        [stored] = [s.handle for s in spans if s.kind == "tool_result"]
        sections = "\n".join(f"{i}. {t}:\nsee <<ccr:{stored}>>" for i, t in enumerate(SECTION_TITLES, 1))
        client.server.answer(f"<summary>\n{sections}\nalso <<ccr:ccr_{'0' * 32}>>\n</summary>")
        summary = summarizer.summarize(messages, spans=spans)
    prompt = client.prompt_of(client.server.requests[0])
    assert f"stored in full as <<ccr:{stored}>>" in prompt
    assert "copy its marker" in prompt
    assert summary.handles == [stored]


def test_given_the_ledger_the_model_reads_its_facts_and_writes_the_briefing_alone(
    client: Any, conversation: list[Message], good_answer: str
) -> None:
    from compactor.core.ledger import SessionLedger
    from compactor.summarizers.ledger import merge_messages

    earlier = merge_messages(
        SessionLedger(),
        [
            Message(role="user", content="Port the importer. Don't change the CSV columns."),
            Message(
                role="assistant", content=[ToolUseBlock(id="b0", name="Bash", input={"command": "make import-check"})]
            ),
            Message(role="user", content=[ToolResultBlock(tool_use_id="b0", content="ok")]),
        ],
    )
    ledger = merge_messages(earlier, conversation)
    client.server.answer(good_answer)
    with client.make() as summarizer:
        summary = summarizer.summarize(conversation, "Keep every module name.", ledger=ledger)
    prompt = client.prompt_of(client.server.requests[0])
    assert "Keep every module name." in prompt
    assert "`make import-check`" in prompt and '"Don\'t change the CSV columns."' in prompt
    assert summary.text.startswith("1. Primary Request and Intent:")
    assert "ledger" not in summary.text.lower(), "the ledger is the model's input, not appended to its text"
    assert summary.index == "", "the pipeline adds the session's index after a model's summary"
