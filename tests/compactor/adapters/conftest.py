"""Shared pieces of the adapter tests: generated Anthropic-shaped histories, a compacting session, a file
source with no files, and a scripted LangChain chat model with the build tool it calls."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from ccr import MemoryStore
from compactor.core.config import load_settings
from compactor.core.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from compactor.engine.orchestrator import Orchestrator

# Generated histories per property test; COMPACTOR_ADAPTER_EXAMPLES=3000 for a thorough run.
settings.register_profile(
    "adapters",
    max_examples=int(os.environ.get("COMPACTOR_ADAPTER_EXAMPLES", "150")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)

ROUND_TRIPS = settings.get_profile("adapters")
"""The settings of the round-trip property tests."""
COMPACTIONS = settings(ROUND_TRIPS, max_examples=max(20, ROUND_TRIPS.max_examples // 5))
"""The settings of the property tests that compact (each compaction costs more)."""

Problems = Callable[[Sequence[Any], Sequence[Any]], list[str]]
"""A format's validity check: what makes a history invalid for its API, given its instructions."""


def assert_reads_and_writes_back(adapter_type: Callable[[], Any], history: Any, problems: Problems | None) -> None:
    """``history`` reads into messages that write back unchanged; written anew by an adapter that did
    not read them (as a compaction's new messages are), they read back the same (and are valid)."""
    adapter = adapter_type()
    messages = adapter.to_messages(history)
    assert adapter.from_messages(messages) == history
    written = adapter_type().from_messages(messages)
    assert adapter_type().to_messages(written) == messages
    if problems is not None:
        assert not problems(written, [])


def assert_anthropic_history_comes_back(
    adapter_type: Callable[[], Any], messages: list[Message], problems: Problems
) -> None:
    """Anthropic-shaped ``messages`` written in the format are valid there and read back the same."""
    written = adapter_type().from_messages(messages)
    assert not problems(written, [])
    assert adapter_type().to_messages(written) == messages


_words = st.text(max_size=12)
_json_scalar = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | _words
_json = st.recursive(
    _json_scalar,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2),
    max_leaves=3,
)
_inputs = st.dictionaries(st.text(min_size=1, max_size=6), _json, max_size=3)
_image = st.builds(
    lambda data: ImageBlock(source={"type": "base64", "media_type": "image/png", "data": data}),
    st.sampled_from(["aGVsbG8=", "iVBORw0KGgo=", ""]),
)


@st.composite
def anthropic_history(draw: st.DrawFn) -> list[Message]:
    """A valid Anthropic-shaped history in the order frameworks keep it.

    Rounds of: a user prompt (a string or text/image blocks), then assistant
    answers (thinking, text, tool calls, some parallel) each followed by one
    user message carrying a result for every call (a string or text blocks,
    some errors); a round may end with a plain answer.
    """
    messages: list[Message] = []
    counter = iter(range(10**6))
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.booleans()):
            messages.append(Message(role="user", content=draw(_words)))
        else:
            prompt: list[ContentBlock] = draw(
                st.lists(st.builds(TextBlock, text=_words) | _image, min_size=1, max_size=3)
            )
            messages.append(Message(role="user", content=prompt))
        for _ in range(draw(st.integers(0, 3))):
            blocks: list[ContentBlock] = []
            if draw(st.booleans()):
                blocks.append(ThinkingBlock(thinking=draw(_words), signature=draw(st.none() | st.just("sig=="))))
            blocks.extend(TextBlock(text=t) for t in draw(st.lists(_words, max_size=2)))
            uses = []
            for _ in range(draw(st.integers(1, 3))):
                extra = {"caller": {"type": "direct"}} if draw(st.booleans()) else {}
                uses.append(
                    ToolUseBlock(
                        id=f"toolu_{next(counter)}",
                        name=draw(st.sampled_from(["Read", "Bash", "Grep"])),
                        input=draw(_inputs),
                        **extra,
                    )
                )
            messages.append(Message(role="assistant", content=[*blocks, *uses]))
            results: list[ContentBlock] = []
            for use in uses:
                content: Any = draw(_words | st.lists(st.builds(TextBlock, text=_words), min_size=1, max_size=2))
                results.append(ToolResultBlock(tool_use_id=use.id, content=content, is_error=draw(st.booleans())))
            messages.append(Message(role="user", content=results))
        if draw(st.booleans()):
            messages.append(Message(role="assistant", content=[TextBlock(text=draw(_words))]))
    return messages


class NoFiles:
    """A file source where no file exists (the generated histories name none)."""

    def read(self, path: str) -> str | None:
        return None


def compacting_session() -> Orchestrator:
    """An Orchestrator that keeps a short tail, counts roughly and stores in memory."""
    config = load_settings(overrides={"pipeline.tail_tokens": 50, "counter": "rough"})
    return Orchestrator(settings=config, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())


def compact_once(messages: Sequence[Message]) -> tuple[list[Message], bool]:
    """The messages after one manual compaction (and whether it happened)."""
    orch = compacting_session()
    for message in messages:
        orch.add_message(message)
    result = orch.compact("manual")
    return orch.messages, result.ok


BUILDS = 12
"""How many times the scripted chat model asks for a build before it says ``done``."""


@functools.cache
def _scripted_chat_model_type() -> type[Any]:
    """The scripted LangChain chat model's class (made once, when a test first asks; LangChain is optional)."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from pydantic import Field

    class ScriptedChatModel(BaseChatModel):
        """Builds ``BUILDS`` times; after the first compaction asks for build 2's log back by a word only it holds.

        ``seen`` holds every list of messages it was called with, ``offered`` the tool names of each
        ``bind_tools``, ``recovered`` what ``ccr_retrieve`` gave back.
        """

        builds: int = 0
        recovered: str | None = None
        seen: list[Any] = Field(default_factory=list)
        offered: list[set[str]] = Field(default_factory=list)

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
            self.offered.append({t.name if hasattr(t, "name") else t["name"] for t in tools})
            return self

        def _generate(
            self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> ChatResult:
            self.seen.append(list(messages))
            last = messages[-1]
            if isinstance(last, ToolMessage) and last.name == "ccr_retrieve":
                self.recovered = str(last.content)
            handle = re.search(r"<<ccr:(ccr_[0-9a-f]{32})>>", " ".join(str(m.content) for m in messages))
            if handle is not None and self.recovered is None:
                call = {"name": "ccr_retrieve", "args": {"handle": handle.group(1), "query": "b0002x"}, "id": "rec"}
                answer = AIMessage(content="", tool_calls=[call])
            elif self.builds < BUILDS:
                self.builds += 1
                call = {"name": "run_build", "args": {"turn": self.builds}, "id": f"b{self.builds}"}
                answer = AIMessage(content="", tool_calls=[call])
            else:
                answer = AIMessage(content="done")
            return ChatResult(generations=[ChatGeneration(message=answer)])

        def check_conversation(self) -> None:
            """Every call began with the user's message, and every tool result answered a call it had seen."""
            for seen in self.seen:
                assert isinstance(seen[0], HumanMessage)
                calls = {c["id"] for m in seen if isinstance(m, AIMessage) for c in m.tool_calls}
                assert {m.tool_call_id for m in seen if isinstance(m, ToolMessage)} <= calls

    return ScriptedChatModel


@functools.cache
def _run_build_tool() -> Any:
    from langchain_core.tools import tool

    @tool
    def run_build(turn: int) -> str:
        """Run the build."""
        return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500

    return run_build


@pytest.fixture
def scripted_agent() -> SimpleNamespace:
    """A fresh scripted chat model (``model``) and the ``run_build`` tool it calls, for a real LangChain or
    LangGraph agent offline; the test skips without ``langchain_core``."""
    pytest.importorskip("langchain_core")
    return SimpleNamespace(model=_scripted_chat_model_type()(), run_build=_run_build_tool())


@pytest.fixture(scope="session")
def strategies() -> SimpleNamespace:
    """The shared strategies (use with ``st.data()``)."""
    return SimpleNamespace(anthropic_history=anthropic_history, json=_json, words=_words, inputs=_inputs)


@pytest.fixture(scope="session")
def compactor_run() -> Callable[[Sequence[Message]], tuple[list[Message], bool]]:
    return compact_once
