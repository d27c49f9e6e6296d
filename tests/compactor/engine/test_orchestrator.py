"""The Orchestrator, as an agent loop uses it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from ccr import HandleNotFound, InvalidHandle, PutRequest, handle_for, open_store
from compactor.core.config import load_settings
from compactor.core.messages import Message, TextBlock, ToolUseBlock, Usage
from compactor.core.session import ReadFileEntry
from compactor.core.tokens import (
    CachedCounter,
    RoughCounter,
    TiktokenCounter,
    anchor_index,
    count_all,
    usage_anchored_estimate,
)
from compactor.engine.orchestrator import Orchestrator


def make(tmp_path: Path, **overrides: object) -> Orchestrator:
    settings = load_settings(
        env={},
        overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000, **overrides},
    )
    return Orchestrator(settings=settings, store=open_store(tmp_path / "ccr.db"), counter=RoughCounter())


def loop(orch: Orchestrator, turns: int, size: int = 4_000, start: int = 0) -> None:
    for i in range(start, start + turns):
        orch.add_message(Message(role="user", content=f"step {i}: run the build"))
        orch.add_message(
            Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"make {i}"})])
        )
        orch.add_tool_result(f"t{i}", f"build {i} log\n" + "." * size)
        orch.add_message(Message(role="assistant", content=[TextBlock(text=f"Build {i} is done.")]))


def test_orchestrators_handed_one_cached_counter_count_each_text_once_between_them(tmp_path: Path) -> None:
    shared = CachedCounter(TiktokenCounter())
    settings = load_settings(env={}, overrides={"policy.context_window": 1_000_000})
    first = Orchestrator(settings=settings, store=open_store(tmp_path / "a.db"), counter=shared)
    loop(first, 3)
    tokenized = shared._tokenized
    second = Orchestrator(settings=settings, store=open_store(tmp_path / "b.db"), counter=shared)
    loop(second, 3)
    assert first.counter is shared and second.counter is shared
    assert tokenized > 0 and shared._tokenized == tokenized
    assert second.tokens_of_messages() == first.tokens_of_messages()


def test_repeated_tool_results_are_deduplicated_before_counting(tmp_path: Path) -> None:
    orch = make(tmp_path)
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="a", name="Bash", input={"command": "ls"})]))
    first = orch.add_tool_result("a", "x" * 5_000)
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="b", name="Bash", input={"command": "ls"})]))
    before = orch.context_tokens()
    second = orch.add_tool_result("b", "x" * 5_000)
    assert "[result-id: r1]" in first.tool_results()[0].text()
    assert "r1" in second.tool_results()[0].text() and len(second.tool_results()[0].text()) < 300
    assert orch.context_tokens() - before < 100
    assert orch.state.dedup.hits == {"Bash": 1}


def test_dedup_can_be_turned_off(tmp_path: Path) -> None:
    orch = make(tmp_path, **{"dedup.enabled": False})
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="a", name="Bash", input={})]))
    assert orch.add_tool_result("a", "y" * 5_000).tool_results()[0].text() == "y" * 5_000


def test_should_compact_fires_at_the_threshold_and_compact_shrinks_the_context(tmp_path: Path) -> None:
    orch = make(tmp_path)
    turns = 0
    while not orch.should_compact().compact:
        loop(orch, 1, start=turns)
        turns += 1
        assert turns < 200, "the policy never fired"
    decision = orch.should_compact()
    assert decision.tokens >= decision.threshold
    result = orch.compact("auto")
    assert result.ok
    assert orch.context_tokens() < decision.threshold
    assert orch.messages[0].is_compact_summary
    assert not orch.should_compact().compact


def test_compaction_clears_recorded_usage_so_the_estimate_follows_the_new_context(tmp_path: Path) -> None:
    orch = make(tmp_path)
    loop(orch, 10)
    orch.add_message(Message(role="assistant", content="ok", usage=Usage(input_tokens=50_000)))
    assert orch.context_tokens() >= 50_000
    assert orch.compact().ok
    assert orch.context_tokens() < 20_000


def test_retrieve_brings_back_dropped_text_exactly_by_query_and_by_lines(tmp_path: Path) -> None:
    orch = make(tmp_path)
    loop(orch, 10)
    result = orch.compact("manual")
    handle = result.report.dropped[0].handle
    exact = orch.retrieve(handle)
    assert b"step 0: run the build" in exact.data
    found = orch.retrieve(handle, query="make 3")
    assert b"make 3" in found.data and len(found.data) < len(exact.data)
    assert orch.retrieve(handle, lines=(1, 1)).data.count(b"\n") <= 1
    with pytest.raises(InvalidHandle):
        orch.retrieve("not-a-handle")
    with pytest.raises(HandleNotFound):
        orch.retrieve("ccr_" + "0" * 32)


def test_three_failed_compactions_stop_auto_compaction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTOR_CCR_MAX_BYTES", "64")
    orch = make(tmp_path)
    loop(orch, 30)
    messages = list(orch.messages)
    for _ in range(3):
        assert orch.should_compact().compact
        result = orch.maybe_compact()
        assert result is not None and not result.ok
        assert result.report.error_id == "ccr_budget_exceeded"
    decision = orch.should_compact()
    assert not decision.compact and decision.reason == "too_many_failures"
    assert "failed 3 times" in (decision.message or "")
    assert orch.messages == messages


def test_each_report_counts_the_dedup_hits_of_its_own_window(tmp_path: Path) -> None:
    orch = make(tmp_path)

    def repeat(tag: str) -> None:
        for i in range(2):
            orch.add_message(Message(role="assistant", content=[ToolUseBlock(id=f"{tag}{i}", name="Bash", input={})]))
            orch.add_tool_result(f"{tag}{i}", f"{tag} output\n" + "z" * 2_000)

    loop(orch, 5)
    repeat("a")
    loop(orch, 5, start=5)
    first = orch.compact()
    repeat("b")
    repeat("c")
    loop(orch, 5, start=10)
    second = orch.compact()
    assert first.report.dedup.hits == 1
    assert second.report.dedup.hits == 2
    assert second.report.dedup.saved_bytes > 0


def test_a_file_changed_on_disk_after_it_was_read_is_restored_as_changed(tmp_path: Path) -> None:
    import threading

    source = tmp_path / "app.py"
    source.write_text("VERSION = 1\n")
    orch = make(tmp_path)
    marked = threading.Event()
    watcher = orch.watch_read_files([tmp_path], on_stale=lambda keys: marked.set())
    try:
        orch.add_message(
            Message(role="assistant", content=[ToolUseBlock(id="r", name="Read", input={"file_path": str(source)})])
        )
        orch.add_tool_result("r", "     1\tVERSION = 1\n")
        assert str(source) in orch.state.read_files
        source.write_text("VERSION = 2\n")
        assert marked.wait(10), f"the change was not seen (error: {watcher.error})"
        loop(orch, 6)
        result = orch.compact()
    finally:
        watcher.stop()
    restored = [m.text() for m in result.messages if m.is_meta and str(source) in m.text()]
    assert restored and "VERSION = 2" in restored[0]
    assert "changed" in restored[0].lower()


def test_compaction_turned_off_refuses_even_a_manual_compact(tmp_path: Path) -> None:
    orch = make(tmp_path, **{"policy.compact": False})
    loop(orch, 40)
    messages = list(orch.messages)
    assert not orch.should_compact().compact
    result = orch.compact("manual")
    assert not result.ok and result.report.error_id == "compaction_disabled"
    assert orch.messages == messages


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(0, 3_000)),
        st.tuples(st.just("answer"), st.none() | st.integers(1_000, 50_000)),
        st.tuples(st.just("tool"), st.integers(0, 3)),
        st.tuples(st.just("compact"), st.none()),
    ),
    min_size=1,
    max_size=30,
)


@hypothesis_settings(max_examples=25, deadline=None)
@given(steps=_steps)
def test_counts_kept_as_messages_arrive_equal_a_full_recount(steps: list[tuple[str, int | None]]) -> None:
    settings = load_settings(env={}, overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 500})
    counter = RoughCounter()
    orch = Orchestrator(settings=settings, store=open_store(":memory:"), counter=counter, overhead_tokens=100)
    compacted = 0
    for number, (action, value) in enumerate(steps):
        if action == "user":
            orch.add_message(Message(role="user", content=f"note {number} " + "u" * (value or 0)))
        elif action == "answer":
            usage = Usage(input_tokens=value) if value is not None else None
            orch.add_message(Message(role="assistant", content=[TextBlock(text=f"answer {number}")], usage=usage))
        elif action == "tool":
            orch.add_message(Message(role="assistant", content=[ToolUseBlock(id=f"t{number}", name="Bash", input={})]))
            orch.add_tool_result(f"t{number}", f"output {value}\n" + "o" * 2_000)
        elif orch.compact("manual").ok:
            compacted += 1
        messages = orch.messages
        assert orch.tokens_of_messages() == sum(counter.count_message(m) for m in messages)
        anchor = anchor_index(messages)
        expected = (
            orch.calibration.tokens(count_all(messages, counter))
            if anchor is None
            else usage_anchored_estimate(messages, counter)
        )
        assert orch.context_tokens() == expected


def test_one_deduper_serves_the_context_and_a_new_one_the_context_after_a_compaction(tmp_path: Path) -> None:
    orch = make(tmp_path)
    loop(orch, 3)
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="a", name="Bash", input={})]))
    first = orch.add_tool_result("a", "z" * 5_000).tool_results()[0].text()
    tag = first.rsplit("[result-id: ", 1)[1].rstrip("]")
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="b", name="Bash", input={})]))
    assert f"[result-id: {tag}] above" in orch.add_tool_result("b", "z" * 5_000).tool_results()[0].text()
    loop(orch, 3, start=3)
    assert orch.compact("manual").ok
    orch.add_message(Message(role="assistant", content=[ToolUseBlock(id="c", name="Bash", input={})]))
    # The compaction forgot what was seen: the same output is a first occurrence again, numbered on.
    again = orch.add_tool_result("c", "z" * 5_000).tool_results()[0].text()
    assert again.startswith("zzz")
    assert int(again.rsplit("[result-id: r", 1)[1].rstrip("]")) > int(tag[1:])


def test_counts_after_compactions_and_recorded_usage_equal_a_full_recount(tmp_path: Path) -> None:
    orch = make(tmp_path)
    counter = orch.counter
    for round_ in range(3):
        loop(orch, 4, start=10 * round_)
        orch.add_message(Message(role="assistant", content=[TextBlock(text="ok")], usage=Usage(input_tokens=9_000)))
        loop(orch, 1, start=10 * round_ + 5)
        assert orch.context_tokens() == usage_anchored_estimate(orch.messages, counter)
        assert orch.compact("manual").ok
        assert orch.tokens_of_messages() == sum(counter.count_message(m) for m in orch.messages)
        assert orch.context_tokens() == orch.calibration.tokens(count_all(orch.messages, counter))


def _read_big_file(orch: Orchestrator, tmp_path: Path) -> None:
    """The session read a file too large for its attachment budget: a compaction stores its cut tail."""
    big = tmp_path / "big.py"
    big.write_text("".join(f"value_{n} = {n}  # a line of the big file\n" for n in range(3_000)))
    orch.state.record_read(ReadFileEntry(path=str(big), content=big.read_text(), timestamp=1.0))


def test_a_compaction_commits_one_transaction_with_the_records_asked_to_go_with_it(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db")
    orch = Orchestrator(
        settings=load_settings(
            env={},
            overrides={
                "policy.context_window": 60_000,
                "pipeline.tail_tokens": 2_000,
                "attachments.file_tokens": 1_000,
            },
        ),
        store=store,
        counter=RoughCounter(),
    )
    loop(orch, 12)
    _read_big_file(orch, tmp_path)
    asked = PutRequest(data=b"recorded with the compaction", producer="test")
    result = orch.compact("manual", also_store=[asked])
    assert result.ok
    tails = [a.handle for a in result.report.attachments if a.handle is not None]
    assert tails and len(result.report.dropped) > 1
    assert store.commits == 1
    assert all(store.contains(h) for h in [*tails, *(d.handle for d in result.report.dropped)])
    assert store.get(handle_for(asked.data)) == asked.data


def test_a_refused_compaction_stores_nothing_it_was_asked_to_store_with_it(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db", max_bytes=64)
    orch = Orchestrator(
        settings=load_settings(env={}, overrides={"pipeline.tail_tokens": 2_000}), store=store, counter=RoughCounter()
    )
    loop(orch, 12)
    messages = list(orch.messages)
    result = orch.compact("manual", also_store=[PutRequest(data=b"small enough alone")])
    assert not result.ok and result.report.error_id == "ccr_budget_exceeded"
    assert orch.messages == messages
    assert store.stats().entries == 0 and store.commits == 0


def _read_ten_files_without_timestamps(tmp_path: Path, **overrides: object) -> tuple[Orchestrator, list[str]]:
    """An API-driven session (no message carries a time) that reads f0 ... f9 in turn, then works on."""
    orch = make(tmp_path, **overrides)
    paths = []
    for i in range(10):
        source = tmp_path / f"f{i}.py"
        source.write_text(f"VALUE_{i} = {i}\n")
        paths.append(str(source))
        orch.add_message(Message(role="user", content=f"look at f{i}"))
        orch.add_message(
            Message(role="assistant", content=[ToolUseBlock(id=f"r{i}", name="Read", input={"file_path": str(source)})])
        )
        orch.add_tool_result(f"r{i}", f"     1\tVALUE_{i} = {i}\n")
    loop(orch, 6)
    return orch, paths


def _restored_paths(orch: Orchestrator) -> list[str]:
    result = orch.compact()
    assert result.report.ok
    return [e.path for e in result.report.attachments if e.type == "file" and e.path is not None]


def test_without_timestamps_recent_restores_the_last_files_read(tmp_path: Path) -> None:
    orch, paths = _read_ten_files_without_timestamps(
        tmp_path, **{"attachments.selection.strategy": "recent", "attachments.max_files": 5}
    )
    assert _restored_paths(orch) == paths[9:4:-1]


def test_without_timestamps_the_default_restores_the_newest_files_too(tmp_path: Path) -> None:
    orch, paths = _read_ten_files_without_timestamps(tmp_path)
    restored = _restored_paths(orch)
    assert restored[:5] == paths[9:4:-1], "reads alike in activity: the newest first"


def test_a_pinned_rule_stands_word_for_word_in_every_later_summary(tmp_path: Path) -> None:
    from compactor.core.errors import UsageError

    orch = Orchestrator(store=open_store(tmp_path / "ccr.db"))
    assert orch.pin("Never push to main; open a PR instead.") == "Never push to main; open a PR instead."
    orch.pin(Message(role="user", content="  Never push to main; open a PR instead.  "))
    assert orch.pins == ["Never push to main; open a PR instead."]
    with pytest.raises(UsageError):
        orch.pin("   ")
    for round_ in range(2):
        for i in range(30):
            orch.add_message(Message(role="user", content=f"round {round_} step {i} " + "x" * 1_500))
            orch.add_message(Message(role="assistant", content=f"Did step {i}. " + "y" * 1_500))
        result = orch.compact()
        assert result.ok, result.report.error
        assert '"Never push to main; open a PR instead."' in result.messages[0].text()
    assert orch.unpin("Never push to main; open a PR instead.") and orch.pins == []


@pytest.mark.parametrize("where", ["user", "assistant", "tool_input"])
def test_compact_fails_closed_on_a_lone_surrogate_and_stores_nothing(where: str, tmp_path: Path) -> None:
    """Text no UTF-8 holds cannot be stored: the compaction fails closed, naming it, and never raises."""
    orch = make(tmp_path)
    for turn in range(12):
        text = f"turn {turn}: " + "words " * 400
        broken = "\ud800 " + text if turn == 3 else text
        orch.add_message(Message(role="user", content=broken if where == "user" else text))
        blocks: list[Any] = [TextBlock(text=broken if where == "assistant" else text)]
        if where == "tool_input" and turn == 3:
            blocks.append(ToolUseBlock(id="t1", name="Bash", input={"command": "echo \udfff"}))
        orch.add_message(Message(role="assistant", content=blocks))
    before = list(orch.messages)
    result = orch.compact("manual")
    assert not result.ok and result.report.error_id == "input_invalid"
    assert "lone surrogate" in (result.report.error or "") and "nothing was compacted" in (result.report.error or "")
    assert orch.messages == before and orch.store.stats().entries == 0


def test_a_session_the_client_put_in_plan_mode_is_briefed_as_planning(tmp_path: Path) -> None:
    orch = make(tmp_path)
    loop(orch, 6)
    orch.add_message(Message(role="user", content="plan the unit tests first"), permission_mode="plan")
    loop(orch, 2, start=6)
    summary = orch.compact("manual").summary_message.text()  # type: ignore[union-attr]
    assert "In plan mode: finish the plan and ask for approval with ExitPlanMode" in summary
    orch.add_message(Message(role="user", content="go ahead and write them"), permission_mode="default")
    loop(orch, 6, start=8)
    assert "In plan mode" not in orch.compact("manual").summary_message.text(), (
        "shift+tab left plan mode: no call says so"
    )
