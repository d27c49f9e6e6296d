"""Real sessions replayed through each adapter compact exactly as the native path does.

Each shared transcript's conversation, up to its first recorded compaction
(or whole), in the API's shape, goes Anthropic shape -> framework -> back, is compacted once,
and the report must equal the one the same conversation gives without the
detour; the compacted history must convert to the framework and back too.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ccr import MemoryStore
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import load_settings
from compactor.core.messages import Message, ToolResultBlock
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport
from tests.compactor.adapters.conftest import NoFiles

ADAPTERS = {
    "openai_chat": ("compactor.adapters.openai_chat", "OpenAIChatAdapter", None),
    "openai_responses": ("compactor.adapters.openai_responses", "OpenAIResponsesAdapter", None),
    "langchain": ("compactor.adapters.langchain", "LangChainAdapter", "langchain_core"),
    "pydantic_ai": ("compactor.adapters.pydantic_ai", "PydanticAIAdapter", "pydantic_ai"),
}


def only_results(message: Message) -> bool:
    return (
        message.role == "user"
        and isinstance(message.content, list)
        and bool(message.content)
        and all(isinstance(b, ToolResultBlock) for b in message.content)
    )


def api_shape(messages: list[Message]) -> list[Message]:
    """The messages as the Messages API takes them: the results of parallel calls in one user message.

    Claude Code records each parallel result as its own record; a framework
    (and the API) has them answer one assistant turn together.
    """
    out: list[Message] = []
    for message in messages:
        if out and only_results(message) and only_results(out[-1]):
            out[-1] = Message(role="user", content=[*out[-1].blocks(), *message.blocks()])
        else:
            out.append(message)
    return out


def conversation(path: Path) -> list[Message]:
    """The main chain's messages before the first recorded compaction, role and content only, in API shape."""
    transcript = read_transcript(path, subagents=False)
    out: list[Message] = []
    for entry in transcript.entries:
        if entry.kind == "compact_boundary":
            break
        message = entry.message
        if message is not None and not message.is_compact_summary:
            out.append(Message(role=message.role, content=message.content))
    return api_shape(out)


def compacted(messages: list[Message]) -> tuple[CompactionReport, list[Message]]:
    config = load_settings(overrides={"pipeline.tail_tokens": 4_000})
    orch = Orchestrator(settings=config, store=MemoryStore(max_bytes=1 << 28), files=NoFiles())
    for message in messages:
        orch.add_message(message)
    return orch.compact("manual").report, orch.messages


_NATIVE: dict[Path, tuple[CompactionReport, list[Message]]] = {}


def comparable(report: CompactionReport) -> dict[str, Any]:
    return report.model_dump(mode="json")


@pytest.fixture(params=sorted(ADAPTERS))
def make_adapter(request: pytest.FixtureRequest) -> Callable[[], Any]:
    module, name, needs = ADAPTERS[request.param]
    if needs is not None:
        pytest.importorskip(needs)
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def test_a_real_session_through_the_adapter_compacts_as_the_native_path_does(
    shared_transcript: Path, make_adapter: Callable[[], Any]
) -> None:
    messages = conversation(shared_transcript)
    if len(messages) < 4:
        pytest.skip("too short to compact")
    if shared_transcript not in _NATIVE:  # the native path once per session, for every adapter
        _NATIVE[shared_transcript] = compacted(messages)
    native_report, native_out = _NATIVE[shared_transcript]

    framework = make_adapter().from_messages(messages)
    reader = make_adapter()
    read_back = reader.to_messages(framework)
    assert read_back == messages
    report, out = compacted(read_back)

    assert comparable(report) == comparable(native_report)
    # Too short a session may not shrink: then both refuse alike (and the comparison above covers it).
    assert not native_report.ok or (report.dropped and report.post_tokens < report.pre_tokens)
    assert out == native_out
    # The compacted history in the framework's shape reads back as the same conversation
    # (flags such as is_compact_summary are the Message's own metadata, not the API's).
    again = make_adapter().to_messages(reader.from_messages(out))
    assert [m.to_api() for m in again] == [m.to_api() for m in out]
