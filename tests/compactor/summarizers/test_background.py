"""The background summary against a loopback fake LLM: latency, hangs, 500s, 429s with retry-after.

No test measures time: a bound is shown as "the compaction returned before
the server answered" (the server holds its answer behind a gate the test
opens afterwards, and counts what it answered).
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from pathlib import Path
from typing import Any

import pytest

from ccr import open_store
from compactor.core.config import load_settings
from compactor.core.errors import ConfigError
from compactor.core.messages import Message, TextBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult
from compactor.summarizers.background import fingerprints, retry_after_seconds

from .conftest import OpenAIServer

LLM_MARK = "All six edits went through."
"""A sentence of ``good_answer`` that only the model's summary holds."""


def make(tmp_path: Path, server: OpenAIServer, **overrides: Any) -> Orchestrator:
    from compactor.summarizers.openai import OpenAISummarizer

    settings = load_settings(
        env={},
        overrides={
            "policy.context_window": 60_000,
            "pipeline.tail_tokens": 2_000,
            "background.start_share": 1.0,
            "background.max_wait_seconds": 30.0,
            **overrides,
        },
    )
    summarizer = OpenAISummarizer(base_url=server.base_url, model="local-model", api_key="test-key")
    return Orchestrator(
        settings=settings,
        store=open_store(tmp_path / "ccr.db"),
        counter=RoughCounter(),
        summarizer=summarizer,
    )


def loop(orch: Orchestrator, turns: int, start: int = 0, size: int = 4_000) -> None:
    for i in range(start, start + turns):
        orch.add_message(Message(role="user", content=f"step {i}: run the build"))
        orch.add_message(
            Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"make {i}"})])
        )
        orch.add_tool_result(f"t{i}", f"build {i} log\n" + "." * size)
        orch.add_message(Message(role="assistant", content=[TextBlock(text=f"Build {i} is done.")]))


def assert_recoverable(orch: Orchestrator, result: CompactionResult) -> None:
    assert result.ok, result.report.error
    assert result.report.dropped
    for span in result.report.dropped:
        assert orch.retrieve(span.handle).data  # stored before it was dropped


def assert_covers_head(result: CompactionResult) -> None:
    """The sources follow each other without a gap, from the head's first message."""
    sources = result.report.summary_sources
    assert sources and sources[0].first == 0
    for before, after in itertools.pairwise(sources):
        assert after.first == before.last + 1


def test_compaction_uses_the_background_summary_of_the_aged_out_head_and_extracts_the_newer_part(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    openai_server.always(200, openai_server.answer_body(good_answer))
    with make(tmp_path, openai_server, **{"background.start_share": 0.0}) as orch:
        loop(orch, 3)
        assert orch.background is not None and orch.background.requests >= 1  # started while the agent worked
        assert orch.background.wait_idle(30)
        loop(orch, 9, start=3)
        result = orch.compact("auto")
    assert_recoverable(orch, result)
    assert_covers_head(result)
    llm, *rest = result.report.summary_sources
    assert llm.source == "llm" and llm.summarizer == "openai"
    assert [s.source for s in rest] == ["extractive"] and rest[0].reason == "newer than the background summary"
    assert result.report.summarizer == "openai"
    summary = result.report.summary or ""
    assert LLM_MARK in summary
    assert "make 11" in result.messages[-1].text()  # the newest commands, in the index that follows the summary
    assert "step 0" in openai_server.requests[0].body["messages"][1]["content"]


def test_compaction_returns_before_a_slow_model_answers_and_says_why(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    gate = threading.Event()
    openai_server.answer(good_answer, gate=gate)
    with make(tmp_path, openai_server, **{"background.max_wait_seconds": 0.01}) as orch:
        loop(orch, 10)
        result = orch.compact("auto")
        answered_when_returned = openai_server.answered
        gate.set()
    assert answered_when_returned == 0 and len(openai_server.requests) == 1
    assert_recoverable(orch, result)
    [source] = result.report.summary_sources
    assert source.source == "extractive" and source.first == 0
    assert "did not finish within 0.01 s" in source.reason
    assert result.report.summarizer == "extractive"
    assert LLM_MARK not in (result.report.summary or "")


def test_a_server_error_falls_back_to_extractive_with_the_reason(tmp_path: Path, openai_server: OpenAIServer) -> None:
    openai_server.error(500, "server_error", "the model crashed")
    with make(tmp_path, openai_server) as orch:
        loop(orch, 10)
        result = orch.compact("auto")
    assert_recoverable(orch, result)
    [source] = result.report.summary_sources
    assert source.source == "extractive"
    assert "HTTP 500" in source.reason and "the model crashed" in source.reason


def test_a_429_with_retry_after_holds_back_new_requests_and_says_so(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    openai_server.reply(
        429,
        {"error": {"message": "slow down", "type": "rate_limit_error", "param": None, "code": None}},
        headers={"retry-after": "120"},
    )
    openai_server.always(200, openai_server.answer_body(good_answer))
    with make(tmp_path, openai_server, **{"background.start_share": 0.0, "background.refresh_share": 0.01}) as orch:
        loop(orch, 10)
        first = orch.compact("auto")
        loop(orch, 10, start=10)
        second = orch.compact("auto")
    assert len(openai_server.requests) == 1  # nothing more was sent while the server asked to wait
    for result in (first, second):
        assert_recoverable(orch, result)
        [source] = result.report.summary_sources
        assert source.source == "extractive"
        assert "HTTP 429" in source.reason and "no new request for 120 s" in source.reason


def test_an_unreachable_model_gives_an_extractive_compaction_that_says_so(tmp_path: Path, closed_port: int) -> None:
    server = OpenAIServer(endpoint="/v1/chat/completions", prefix="/v1")
    server.start()
    server.stop()  # nothing listens any more
    from compactor.summarizers.openai import OpenAISummarizer

    # The compaction waits for the background call's refusal (a loaded machine may take longer than the
    # default wait to see it), so that the reason is the refusal, not a call still in flight.
    overrides = {"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000, "background.max_wait_seconds": 30.0}
    settings = load_settings(env={}, overrides=overrides)
    summarizer = OpenAISummarizer(base_url=f"http://127.0.0.1:{closed_port}/v1", model="m", api_key="k")
    with Orchestrator(
        settings=settings, store=open_store(tmp_path / "ccr.db"), counter=RoughCounter(), summarizer=summarizer
    ) as orch:
        loop(orch, 10)
        result = orch.compact("auto")
    assert_recoverable(orch, result)
    [source] = result.report.summary_sources
    assert source.source == "extractive" and "could not reach" in source.reason


def test_a_background_summary_of_a_conversation_compacted_meanwhile_is_discarded(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    gate = threading.Event()
    stale = good_answer.replace(LLM_MARK, "STALE SUMMARY OF THE OLD HEAD.")
    openai_server.answer(stale, gate=gate)
    openai_server.answer(good_answer)
    with make(tmp_path, openai_server, **{"background.max_wait_seconds": 0.01}) as orch:
        loop(orch, 10)
        first = orch.compact("auto")  # returns before the model answers
        gate.set()
        assert orch.background is not None and orch.background.wait_idle(30)
        assert orch.background.discarded == 1
        loop(orch, 10, start=10)
        orch.settings.background.max_wait_seconds = 30.0
        second = orch.compact("auto")
    assert first.report.summary_sources[0].source == "extractive"
    assert_recoverable(orch, second)
    assert_covers_head(second)
    assert second.report.summary_sources[0].source == "llm"
    assert "STALE" not in (second.report.summary or "") and LLM_MARK in (second.report.summary or "")
    # The new head starts with the first compaction's summary: the model was asked about it, not the old head.
    assert "step 0: run the build" not in openai_server.requests[1].body["messages"][1]["content"].split("\n")


def test_a_model_that_answers_after_a_latency_within_the_bound_is_waited_for(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    openai_server.answer(good_answer, latency=0.05)
    with make(tmp_path, openai_server) as orch:
        loop(orch, 10)
        result = orch.compact("auto")
    assert_recoverable(orch, result)
    assert result.report.summary_sources[0].source == "llm"
    assert openai_server.answered == 1


def test_acompact_awaits_the_model_while_the_event_loop_keeps_running(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    gate = threading.Event()
    openai_server.answer(good_answer, gate=gate)

    async def run(orch: Orchestrator) -> CompactionResult:
        compaction = asyncio.ensure_future(orch.acompact("auto"))
        await asyncio.to_thread(openai_server.received.wait, 30)
        assert not compaction.done()
        gate.set()  # only a loop that is not blocked gets here
        return await compaction

    with make(tmp_path, openai_server) as orch:
        loop(orch, 10)
        result = asyncio.run(run(orch))
    assert_recoverable(orch, result)
    assert result.report.summary_sources[0].source == "llm"


def test_close_joins_the_worker_and_starts_nothing_after(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    openai_server.always(200, openai_server.answer_body(good_answer))
    orch = make(tmp_path, openai_server, **{"background.start_share": 0.0})
    loop(orch, 3)
    assert orch.background is not None and orch.background.requests >= 1
    orch.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("compactor-background-summary")]
    requests = orch.background.requests
    loop(orch, 3, start=3)
    assert orch.background.requests == requests
    orch.close()  # twice is harmless


def test_an_extractive_summarizer_or_background_off_means_no_worker(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    settings = load_settings(env={})
    assert Orchestrator(settings=settings, store=open_store(tmp_path / "a.db")).background is None
    with make(tmp_path, openai_server, **{"background.enabled": False}) as orch:
        assert orch.background is None
        loop(orch, 10)
        openai_server.error(500, "server_error", "down")
        result = orch.compact("auto")
    assert not result.ok and result.report.summary_sources == []  # the model is asked in place, and fails closed


def test_fingerprints_ignore_recorded_usage_but_not_content() -> None:
    from compactor.core.messages import Usage

    plain = Message(role="assistant", content="done")
    assert fingerprints([plain]) == fingerprints([plain.model_copy(update={"usage": Usage(input_tokens=5)})])
    assert fingerprints([plain]) != fingerprints([plain.model_copy(update={"content": "done!"})])


class _Response:
    def __init__(self, headers: dict[str, str]) -> None:
        self.headers = headers


class _StatusError(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("429")
        self.response = _Response(headers)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [({"retry-after": "7"}, 7.0), ({"retry-after-ms": "1500"}, 1.5), ({}, None), ({"retry-after": "soon"}, None)],
)
def test_retry_after_is_read_from_the_cause_of_a_summarizer_error(
    headers: dict[str, str], expected: float | None
) -> None:
    from compactor.core.errors import SummarizerError

    try:
        try:
            raise _StatusError(headers)
        except _StatusError as exc:
            raise SummarizerError("openai: the server answered HTTP 429") from exc
    except SummarizerError as wrapped:
        assert retry_after_seconds(wrapped) == expected


def test_background_settings_are_checked(tmp_path: Path) -> None:
    settings = load_settings(env={"COMPACTOR_BACKGROUND": "off", "COMPACTOR_BACKGROUND_MAX_WAIT": "0.5"})
    assert settings.background.enabled is False and settings.background.max_wait_seconds == 0.5
    with pytest.raises(ConfigError, match="max_wait_seconds"):
        load_settings(env={"COMPACTOR_BACKGROUND_MAX_WAIT": "-1"})


def test_acompact_returns_before_a_slow_model_answers(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    gate = threading.Event()
    openai_server.answer(good_answer, gate=gate)
    with make(tmp_path, openai_server, **{"background.max_wait_seconds": 0.01}) as orch:
        loop(orch, 10)
        result = asyncio.run(orch.acompact("auto"))
        answered_when_returned = openai_server.answered
        gate.set()
    assert answered_when_returned == 0
    assert_recoverable(orch, result)
    assert "did not finish within 0.01 s" in result.report.summary_sources[0].reason


def test_a_model_summary_too_long_to_shrink_the_context_gives_way_to_the_extractive_one(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    huge = good_answer.replace(LLM_MARK, LLM_MARK + " " + "word " * 40_000)
    openai_server.answer(huge)
    with make(tmp_path, openai_server) as orch:
        loop(orch, 10)
        result = orch.compact("auto")
    assert_recoverable(orch, result)
    [source] = result.report.summary_sources
    assert source.source == "extractive" and "would not have shrunk" in source.reason
    assert LLM_MARK not in (result.report.summary or "")


def test_a_new_background_summary_starts_only_once_the_context_grew_by_the_refresh_share(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    openai_server.always(200, openai_server.answer_body(good_answer))
    overrides = {"background.start_share": 0.2, "background.refresh_share": 0.2}
    with make(tmp_path, openai_server, **overrides) as orch:
        assert orch.background is not None
        while orch.background.requests == 0:
            loop(orch, 1, start=len(orch.messages))
        assert orch.background.wait_idle(30)
        mark = orch.context_tokens()
        loop(orch, 1, start=100)  # about 1,000 tokens: less than a fifth of the threshold
        assert orch.context_tokens() - mark < 0.2 * orch.should_compact().threshold
        assert orch.background.requests == 1
        while orch.context_tokens() - mark < 0.2 * orch.should_compact().threshold:
            loop(orch, 1, start=200 + len(orch.messages))
        assert orch.background.requests == 2


def test_a_store_that_refuses_fails_the_compaction_closed_with_a_background_summary_too(
    tmp_path: Path, openai_server: OpenAIServer, good_answer: str
) -> None:
    from ccr import MemoryStore
    from compactor.summarizers.openai import OpenAISummarizer

    openai_server.answer(good_answer)
    settings = load_settings(
        env={},
        overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000, "background.max_wait_seconds": 30.0},
    )
    summarizer = OpenAISummarizer(base_url=openai_server.base_url, model="local-model", api_key="test-key")
    with Orchestrator(
        settings=settings, store=MemoryStore(max_bytes=1_000), counter=RoughCounter(), summarizer=summarizer
    ) as orch:
        loop(orch, 10)
        # The model's summary is ready before the compaction (on a loaded machine it may not be yet).
        assert orch.background is not None and orch.background.wait_idle(30)
        before = list(orch.messages)
        result = orch.compact("auto")
        assert not result.ok and orch.messages == before
    assert openai_server.answered == 1  # the model's summary was there; the store still decides
