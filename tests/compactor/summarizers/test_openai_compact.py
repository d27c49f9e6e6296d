"""``openai-compact`` against a loopback server that speaks ``POST /v1/responses/compact``.

The server answers as the API reference shows
(https://platform.openai.com/docs/api-reference/responses/compact): a
``response.compaction`` object whose ``output`` is the user messages, then
one ``compaction`` item with ``encrypted_content``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from ccr import MemoryStore
from compactor.adapters.openai_responses import OpenAIResponsesAdapter
from compactor.core.config import load_settings
from compactor.core.errors import SummarizerError
from compactor.engine.orchestrator import Orchestrator
from compactor.summarizers import OpenAICompactSummarizer, make_summarizer
from tests.compactor.summarizers.conftest import LoopbackServer

ITEM = {"id": "cmp_001", "type": "compaction", "encrypted_content": "gAAAAABpM0" + "Q" * 64}
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Rewrite the parser"}]}


class CompactServer(LoopbackServer):
    def compacted(self, output: list[dict[str, Any]] | None = None) -> None:
        self.reply(
            200,
            {
                "id": "resp_001",
                "object": "response.compaction",
                "created_at": 1731459200,
                "output": [USER, ITEM] if output is None else output,
                "usage": {"input_tokens": 42897, "output_tokens": 12000, "total_tokens": 54912},
            },
        )


class NoFiles:
    def read(self, path: str) -> str | None:
        return None


@pytest.fixture
def server() -> Iterator[CompactServer]:
    server = CompactServer(endpoint="/v1/responses/compact", prefix="/v1")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def history() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"role": "developer", "content": "Be brief."},
        {"role": "user", "content": "Rewrite the parser"},
    ]
    for n in range(8):
        items += [
            {"type": "function_call", "call_id": f"call_{n}", "name": "bash", "arguments": json.dumps({"n": n})},
            {"type": "function_call_output", "call_id": f"call_{n}", "output": f"row {n} " * 600},
        ]
    return [*items, {"role": "user", "content": "Now the lexer tests"}]


def orchestrator(server: CompactServer, **llm: Any) -> Orchestrator:
    settings = load_settings(
        overrides={
            "summarizer": "openai-compact",
            "counter": "rough",
            "pipeline.tail_tokens": 200,
            "llm.base_url": server.base_url,
            "llm.model": "gpt-5.4",
            "llm.timeout_seconds": llm.get("timeout", 5),
        }
    )
    return Orchestrator(settings=settings, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())


def test_the_head_goes_as_responses_input_and_the_output_items_come_back_first_byte_for_byte(
    server: CompactServer,
) -> None:
    server.compacted()
    adapter = OpenAIResponsesAdapter()
    orch = orchestrator(server)
    for message in adapter.to_messages(history()):
        orch.add_message(message)
    result = orch.compact("manual")
    assert result.ok, result.report.error
    (request,) = server.requests
    assert request.path == "/v1/responses/compact"
    assert request.body["model"] == "gpt-5.4"
    sent = request.body["input"]
    assert sent[0] == {"role": "user", "content": "Rewrite the parser"}
    assert [i["type"] for i in sent[1:3]] == ["function_call", "function_call_output"]
    out = adapter.from_messages(orch.messages)
    assert out[0] == {"role": "developer", "content": "Be brief."}
    assert json.dumps(out[1:3]) == json.dumps([USER, ITEM])
    assert out[3]["role"] == "user" and "OpenAI compacted the earlier conversation itself" in json.dumps(out[3])
    assert result.report.summarizer == "openai-compact"
    stored = orch.store.get(result.report.dropped[0].handle)
    assert b"row 0 row 0" in stored and b"Rewrite the parser" in stored  # stored before it was dropped


@pytest.mark.parametrize(
    "answer",
    [
        {"object": "response", "output": []},
        {"object": "response.compaction", "output": [USER]},
        {"object": "response.compaction", "output": [ITEM, USER]},
        {"object": "response.compaction", "output": [{**ITEM, "encrypted_content": ""}]},
    ],
)
def test_an_answer_without_one_final_compaction_item_fails_closed(server: CompactServer, answer: Any) -> None:
    server.reply(200, answer)
    with (
        OpenAICompactSummarizer(base_url=server.base_url, model="gpt-5.4") as summarizer,
        pytest.raises(SummarizerError, match="openai-compact: the answer"),
    ):
        summarizer.summarize(OpenAIResponsesAdapter().to_messages(history()))


def test_a_rate_limited_or_failing_server_leaves_the_conversation_unchanged(server: CompactServer) -> None:
    server.reply(429, {"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}})
    orch = orchestrator(server)
    messages = OpenAIResponsesAdapter().to_messages(history())
    for message in messages:
        orch.add_message(message)
    before = list(orch.messages)
    result = orch.compact("manual")
    assert not result.ok and "HTTP 429: Rate limit reached" in (result.report.error or "")
    assert orch.messages == before
    assert orch.store.stats().entries == 0


def test_the_settings_make_it_and_a_custom_server_needs_no_key(server: CompactServer) -> None:
    settings = load_settings(overrides={"summarizer": "openai-compact", "llm.base_url": server.base_url})
    summarizer = make_summarizer(settings)
    assert isinstance(summarizer, OpenAICompactSummarizer)
    summarizer.close()
