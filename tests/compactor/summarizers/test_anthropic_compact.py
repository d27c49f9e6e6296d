"""``anthropic-compact`` against a loopback server that speaks on-demand compaction.

The server answers as the documentation shows
(https://platform.claude.com/docs/en/build-with-claude/compaction-on-demand):
one ``compaction`` block with ``content`` and ``signature``, ``stop_reason``
``"compaction"``, usage only in ``usage.iterations``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from attachments import DiskFiles
from ccr import open_store
from compactor.core.config import load_settings
from compactor.core.errors import ConfigError, SummarizerError
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import SessionState
from compactor.core.tokens import RoughCounter
from compactor.engine.pipeline import CompactOptions, compact
from compactor.engine.spans import messages_jsonl
from compactor.summarizers import AnthropicCompactSummarizer, make_summarizer
from compactor.summarizers.anthropic_compact import COMPACT_BETA, MAX_INSTRUCTIONS_CHARS
from tests.compactor.summarizers.conftest import LoopbackServer

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"

BLOCK = {
    "type": "compaction",
    "content": "Summary of the conversation: the parser was rewritten; tests for the lexer are next.",
    "signature": "EuYBCkQYAiJA" + "x" * 40,
}


class CompactServer(LoopbackServer):
    def compacted(self, block: dict[str, Any] = BLOCK) -> None:
        self.reply(
            200,
            {
                "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
                "type": "message",
                "role": "assistant",
                "model": "claude-opus-5-5",
                "content": [block],
                "stop_reason": "compaction",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "iterations": [{"type": "compaction", "input_tokens": 144, "output_tokens": 276}],
                },
            },
        )

    def no_summary(self, stop_reason: str) -> None:
        self.reply(
            200,
            {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "m",
                "content": [],
                "stop_reason": stop_reason,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
        )


@pytest.fixture
def server() -> Iterator[CompactServer]:
    server = CompactServer(endpoint="/v1/messages")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def make(server: CompactServer, **options: Any) -> AnthropicCompactSummarizer:
    settings: dict[str, Any] = {
        "base_url": server.base_url,
        "model": "claude-opus-5-5",
        "api_key": "test-key",
        "timeout_seconds": 5,
    }
    settings.update(options)
    return AnthropicCompactSummarizer(**settings)


def session(rounds: int = 8) -> list[Message]:
    out = [Message(role="user", content="Rewrite the parser in src/parser.py")]
    for n in range(rounds):
        out += [
            Message(
                role="assistant", content=[ToolUseBlock(id=f"t{n}", name="Bash", input={"command": f"make step{n}"})]
            ),
            Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{n}", content=f"step {n} " * 500)]),
        ]
    return [
        *out,
        Message(role="assistant", content=[TextBlock(text="Steps done.")]),
        Message(role="user", content="Now the lexer tests"),
        Message(role="assistant", content="On it."),
    ]


def run(messages: Sequence[Message], summarizer: Any) -> tuple[Any, Any]:
    store = open_store(":memory:")
    out = compact(
        messages,
        SessionState(),
        store=store,
        counter=RoughCounter(),
        summarizer=summarizer,
        files=DiskFiles(),
        options=CompactOptions(tail_tokens=200),
    )
    return out, store


def test_the_request_is_an_on_demand_compaction_of_the_head_in_the_messages_shape(server: CompactServer) -> None:
    server.compacted()
    messages = session()
    with make(server) as summarizer:
        out, _store = run(messages, summarizer)
    assert out.ok, out.report.error
    (request,) = server.requests
    assert request.path == "/v1/messages"
    assert request.headers["anthropic-beta"] == COMPACT_BETA
    assert request.headers.get("x-api-key", request.headers.get("authorization", "")).endswith("test-key")
    assert request.body["compaction"] == {"type": "summarize"}
    assert "context_management" not in request.body  # the API refuses both on one request
    assert request.body["model"] == "claude-opus-5-5" and request.body["max_tokens"] == 20_000
    tail = [m for m in out.messages[1:] if not m.is_meta]
    assert request.body["messages"] == [m.to_api() for m in messages[: len(messages) - len(tail)]]


def test_the_returned_block_opens_the_summary_byte_for_byte_after_every_dropped_byte_is_stored(
    server: CompactServer,
) -> None:
    server.compacted()
    messages = session()
    with make(server) as summarizer:
        out, store = run(messages, summarizer)
    assert out.ok, out.report.error
    summary = out.messages[0]
    assert json.dumps(summary.to_api()["content"][0]) == json.dumps(BLOCK)
    assert "Anthropic compacted the earlier conversation itself" in summary.text()
    index = out.messages[-1]
    assert index.is_meta and "Index of the session" in index.text() and "make step0" in index.text()
    tail = [m for m in out.messages[1:] if not m.is_meta]
    assert store.get(out.report.dropped[0].handle) == messages_jsonl(messages[: len(messages) - len(tail)])
    assert out.report.summarizer == "anthropic-compact"


def test_compacting_again_sends_the_earlier_block_first_and_keeps_only_the_new_one(server: CompactServer) -> None:
    first = {**BLOCK, "content": "Earlier summary.", "signature": "old"}
    server.compacted()
    messages = [Message.model_validate({"role": "assistant", "content": [first]}), *session()]
    with make(server) as summarizer:
        out, _store = run(messages, summarizer)
    assert out.ok, out.report.error
    assert server.requests[0].body["messages"][0] == {"role": "assistant", "content": [first]}
    blocks = [
        b
        for m in out.messages
        if isinstance(m.content, list)
        for b in m.to_api()["content"]
        if b.get("type") == "compaction"
    ]
    assert blocks == [BLOCK]
    assert "replaces 1 earlier provider compaction" in out.messages[0].text()


def test_custom_instructions_are_sent_inside_a_prompt_that_still_asks_for_a_summary(server: CompactServer) -> None:
    server.compacted()
    with make(server) as summarizer:
        summarizer.summarize(session(), "Keep every file name.")
    instructions = server.requests[0].body["compaction"]["instructions"]
    assert "Keep every file name." in instructions and "Do not call tools" in instructions
    with make(server) as summarizer, pytest.raises(SummarizerError, match="at most 16,384"):
        summarizer.summarize(session(), "x" * MAX_INSTRUCTIONS_CHARS)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("stop_reason", "why"),
    [
        ("max_tokens", "cut off"),
        ("refusal", "declined"),
        ("tool_use", "called a tool"),
        ("model_context_window_exceeded", "no room"),
        ("end_turn", "no text"),
    ],
)
def test_an_answer_without_a_summary_fails_the_compaction_closed(
    server: CompactServer, stop_reason: str, why: str
) -> None:
    server.no_summary(stop_reason)
    messages = session()
    with make(server) as summarizer:
        out, store = run(messages, summarizer)
    assert not out.ok and why in (out.report.error or "")
    assert out.messages == messages
    assert store.stats().entries == 0  # nothing was dropped, so nothing was stored either


def test_a_server_error_or_a_block_with_no_summary_fails_closed(server: CompactServer) -> None:
    server.reply(
        529,
        {
            "type": "error",
            "error": {
                "type": "overloaded_error",
                "message": "Overloaded",
                "details": {"error_code": "compaction_unavailable"},
            },
        },
    )
    with (
        make(server) as summarizer,
        pytest.raises(SummarizerError, match=r"HTTP 529: Overloaded .compaction_unavailable"),
    ):
        summarizer.summarize(session())
    server.compacted({"type": "compaction", "content": None})
    with make(server) as summarizer, pytest.raises(SummarizerError, match="holds no summary"):
        summarizer.summarize(session())


def test_a_server_that_never_answers_fails_closed_within_the_timeout(server: CompactServer) -> None:
    server.hang()
    with make(server, timeout_seconds=0.5) as summarizer, pytest.raises(SummarizerError, match="no answer within"):
        summarizer.summarize(session())


def test_the_settings_name_it_and_a_missing_key_is_a_config_error(server: CompactServer) -> None:
    settings = load_settings(overrides={"summarizer": "anthropic-compact", "llm.base_url": server.base_url})
    with pytest.raises(ConfigError, match="no API key"):
        make_summarizer(settings)
    settings = load_settings(
        overrides={
            "summarizer": "anthropic-compact",
            "llm.base_url": server.base_url,
            "llm.api_key_env": "MY_KEY",
        }
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MY_KEY", "k")
        summarizer = make_summarizer(settings)
    assert isinstance(summarizer, AnthropicCompactSummarizer)
    summarizer.close()  # type: ignore[attr-defined]


def test_replay_on_the_command_line_compacts_with_it_and_writes_the_block_into_the_output(
    server: CompactServer, tmp_path: Path
) -> None:
    server.always(
        200,
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-5-5",
            "content": [BLOCK],
            "stop_reason": "compaction",
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    )
    out = tmp_path / "out.jsonl"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compactor",
            "replay",
            str(LONG),
            "--json",
            "--summarizer",
            "anthropic-compact",
            "--store",
            str(tmp_path / "ccr.db"),
            "--output",
            str(out),
        ],
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "COMPACTOR_LLM_BASE_URL": server.base_url, "COMPACTOR_LLM_API_KEY": "test-key"},
    )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["compactions"] and all(c["summarizer"] == "anthropic-compact" for c in report["compactions"])
    assert len(server.requests) == len(report["compactions"])
    assert all(r.headers["anthropic-beta"] == COMPACT_BETA for r in server.requests)
    assert json.dumps(BLOCK, separators=(",", ":")) in out.read_text()
