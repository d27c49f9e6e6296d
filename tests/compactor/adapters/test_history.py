"""CompactingHistory follows a framework's history across calls, whichever way the framework keeps it."""

from __future__ import annotations

import asyncio
from typing import Any

from ccr import MemoryStore
from compactor.adapters import CompactingHistory, OpenAIChatAdapter
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from tests.compactor.adapters.conftest import NoFiles


def session() -> Orchestrator:
    config = load_settings(
        overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000, "counter": "rough"}
    )
    return Orchestrator(settings=config, store=MemoryStore(max_bytes=1 << 26), files=NoFiles())


def turn(n: int) -> list[dict[str, Any]]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "build", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": f"c{n}", "content": f"build {n} b{n:04d}x\n" + f"line {n}\n" * 2_000},
    ]


def test_a_framework_that_keeps_what_it_was_given_continues_the_compacted_history() -> None:
    history = CompactingHistory(OpenAIChatAdapter, session())
    items: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "go"}]
    for n in range(12):
        items = history.process(items + turn(n))
    assert history.reports, "no compaction happened"
    assert items[0] == {"role": "system", "content": "Be brief."}
    assert "compacted" in items[1]["content"]
    assert len(history.orchestrator.messages) < 1 + 2 * 12


def test_a_framework_that_keeps_its_own_list_has_only_its_new_messages_added() -> None:
    history = CompactingHistory(OpenAIChatAdapter, session())
    own: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    sent: list[dict[str, Any]] = []
    for n in range(12):
        own = own + turn(n)
        sent = history.process(own)
    assert len(history.reports) >= 1
    assert "compacted" in sent[0]["content"]
    # The newest result goes out as it came in (dedup numbers it: it is long enough to repeat).
    assert sent[-1]["tool_call_id"] == own[-1]["tool_call_id"]
    assert sent[-1]["content"].startswith(own[-1]["content"])
    assert len(sent) < len(own)
    # Had the whole list been added again each call, the context would grow past the threshold.
    assert all(r.pre_tokens < r.threshold + 10_000 for r in history.reports)


def test_another_conversation_starts_the_session_over() -> None:
    history = CompactingHistory(OpenAIChatAdapter, session())
    history.process([{"role": "user", "content": "first"}, *turn(0)])
    other = [{"role": "user", "content": "second"}]
    assert history.process(other) == other
    assert [m.text() for m in history.orchestrator.messages] == ["second"]


def test_the_recovery_tool_answers_from_the_store_and_explains_a_bad_handle() -> None:
    history = CompactingHistory(OpenAIChatAdapter, session())
    items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(12):
        items = history.process(items + turn(n))
    head = history.reports[0].dropped[0].handle
    assert "b0002x" in history.retrieve(f"<<ccr:{head}>>", query="b0002x")
    assert "not" in history.retrieve("ccr_" + "0" * 32).lower()


def test_the_async_path_gives_the_same_history_and_reports_as_the_sync_one() -> None:
    sync_history = CompactingHistory(OpenAIChatAdapter, session())
    async_history = CompactingHistory(OpenAIChatAdapter, session())

    async def run_async(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for n in range(12):
            items = await async_history.aprocess(items + turn(n))
        return items

    items: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n in range(12):
        items = sync_history.process(items + turn(n))
    awaited = asyncio.run(run_async([{"role": "user", "content": "go"}]))

    assert async_history.reports, "no compaction happened"
    assert len(async_history.reports) == len(sync_history.reports)
    assert [r.summary for r in async_history.reports] == [r.summary for r in sync_history.reports]
    assert [m["role"] for m in awaited] == [m["role"] for m in items]
