"""compact(): reversible or nothing."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attachments import Budgets, DiskFiles
from ccr import BudgetExceeded, PutRequest, find_handles, handle_for, open_store
from compactor.core.errors import SummarizerError
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import InvokedSkill, ReadFileEntry, SessionState
from compactor.core.tokens import CachedCounter, RoughCounter, TiktokenCounter
from compactor.engine.dedup import Deduper, tool_name_map
from compactor.engine.pipeline import CompactOptions, compact, merge_instructions, split_tail, store_spans
from compactor.engine.spans import Span, head_spans, messages_jsonl
from compactor.memory import open_memory
from compactor.summarizers import ExtractiveSummarizer, Summary
from tests.conftest import RecordingTiktoken

COUNTER = RoughCounter()


def user(text: str) -> Message:
    return Message(role="user", content=text)


def call(tool_id: str, name: str = "Bash", **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


def result(tool_id: str, text: str) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=text)])


def say(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])


def conversation(rounds: int = 12, size: int = 3_000) -> list[Message]:
    messages = [user("Build the report generator")]
    for i in range(rounds):
        messages += [call(f"t{i}", command=f"make step{i}"), result(f"t{i}", f"step {i} output\n" + "x" * size)]
    messages += [say("All steps ran."), user("Now write the docs"), say("Writing them.")]
    return messages


def run(messages: Sequence[Message], state: SessionState | None = None, **kw: object):  # type: ignore[no-untyped-def]
    store = kw.pop("store", None) or open_store(":memory:")
    options = kw.pop("options", None) or CompactOptions(tail_tokens=2_000)
    out = compact(
        messages,
        state or SessionState(),
        store=store,  # type: ignore[arg-type]
        counter=COUNTER,
        summarizer=kw.pop("summarizer", None) or ExtractiveSummarizer(),  # type: ignore[arg-type]
        files=DiskFiles(),
        options=options,  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )
    return out, store


def test_the_dropped_head_comes_back_byte_for_byte() -> None:
    messages = conversation()
    out, store = run(messages)
    assert out.ok
    tail = out.messages[1 : 1 + (len(out.messages) - 1 - len([m for m in out.messages if m.is_meta]))]
    head = messages[: len(messages) - len(tail)]
    assert store.get(out.report.dropped[0].handle) == messages_jsonl(head)
    assert head + tail == messages


def test_every_dropped_handle_resolves_and_the_summary_names_the_head() -> None:
    out, store = run(conversation())
    for span in out.report.dropped:
        assert len(store.get(span.handle)) == span.bytes
    assert out.report.dropped[0].handle in find_handles(out.messages[0].text())


def test_output_is_summary_then_tail_then_attachments(tmp_path: Path) -> None:
    source = tmp_path / "report.py"
    source.write_text("print('hello')\n")
    state = SessionState()
    state.record_read(ReadFileEntry(path=str(source), content="print('hello')\n", timestamp=1.0))
    out, _ = run(conversation(), state)
    first, *rest = out.messages
    assert first.is_compact_summary and first.role == "user"
    assert "continues from an earlier conversation" in first.text()
    metas = [m for m in rest if m.is_meta]
    assert metas and rest[-len(metas) :] == metas
    assert all(m.text().startswith("<system-reminder>") for m in metas)
    assert [a.path for a in out.report.attachments if a.type == "file"] == [str(source)]


def test_read_file_state_is_snapshotted_then_cleared(tmp_path: Path) -> None:
    state = SessionState(memory_paths=["/repo/CLAUDE.md"])
    state.record_read(ReadFileEntry(path=str(tmp_path / "a.txt"), content="a", timestamp=1.0))
    out, _ = run(conversation(), state)
    assert out.state.read_files == {} and out.state.memory_paths == []
    assert state.read_files, "the caller's state is not mutated"


def test_tail_is_whole_rounds_and_never_splits_a_tool_call() -> None:
    messages = conversation(rounds=30, size=500)
    head, tail = split_tail(messages, 1_000, COUNTER)
    assert head + tail == messages
    calls = {u.id for m in tail for u in m.tool_uses()}
    results = {r.tool_use_id for m in tail for r in m.tool_results()}
    assert results <= calls
    assert sum(COUNTER.count_message(m) for m in tail) <= 1_000


def test_a_store_that_refuses_leaves_the_messages_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTOR_CCR_MAX_BYTES", "100")
    messages = conversation()
    state = SessionState()
    out, store = run(messages, state, store=open_store(":memory:"))
    assert not out.ok
    assert out.messages == messages and out.state is state
    assert out.report.error_id == "ccr_budget_exceeded"
    assert out.boundary is None
    assert store.stats().entries == 0


class FailingSummarizer:
    name = "failing"

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Summary:
        raise SummarizerError("the model is down")


def test_a_failing_summarizer_fails_closed() -> None:
    messages = conversation()
    out, _ = run(messages, summarizer=FailingSummarizer())
    assert not out.ok and out.messages == messages
    assert out.report.error_id == "summarizer_failed"
    assert "the model is down" in (out.report.error or "")


def test_nothing_to_compact_is_reported_not_raised() -> None:
    out, _ = run([], options=CompactOptions(tail_tokens=10_000))
    assert not out.ok and out.messages == []
    assert out.report.error_id == "nothing_to_compact"


def test_a_conversation_smaller_than_the_tail_budget_still_compacts_its_older_half() -> None:
    messages = conversation(rounds=6, size=3_000)
    out, _ = run(messages, options=CompactOptions(tail_tokens=100_000))
    assert out.ok
    tail = [m for m in out.messages[1:] if not m.is_meta]
    assert 0 < len(tail) < len(messages)
    total = sum(COUNTER.count_message(m) for m in messages)
    assert sum(COUNTER.count_message(m) for m in tail) <= total // 2


def test_a_single_round_is_summarized_whole() -> None:
    messages = [user("Summarize this log:\n" + "line of log output\n" * 4_000), say("It is a log.")]
    out, _ = run(messages, options=CompactOptions(tail_tokens=10_000))
    assert out.ok and [m for m in out.messages[1:] if not m.is_meta] == []


def test_a_compaction_that_would_not_shrink_the_context_fails_closed() -> None:
    messages = [user("hi"), say("hello")]
    out, _ = run(messages, options=CompactOptions(tail_tokens=10_000))
    assert not out.ok and out.messages == messages
    assert out.report.error_id == "compaction_did_not_shrink"
    assert out.report.post_tokens == out.report.pre_tokens


def test_the_report_shows_the_summary_and_the_compacted_context_in_order() -> None:
    messages = conversation()
    out, _ = run(messages)
    report = out.report
    assert report.summary and report.summary in report.context[0].text
    attached = sum(e.part == "attachment" for e in report.context)
    assert [e.part for e in report.context] == (
        ["summary"] + ["tail"] * (len(report.context) - 2 - attached) + ["attachment"] * attached + ["index"]
    )
    assert len(report.context) == len(out.messages)
    index = out.messages[-1]
    assert index.is_meta and "Index of the session so far" in index.text()
    assert report.briefing is not None and report.briefing.index_chars == len(index.text())
    tail_calls = [e for e in report.context if e.part == "tail" and "[tool call Bash]" in e.text]
    assert tail_calls, "the preserved tail's tool calls are shown by name"
    assert sum(e.tokens for e in report.context) == sum(COUNTER.count_message(m) for m in out.messages)


class ModelLikeSummarizer:
    """Writes a briefing as a model would (text only, citing nothing), through the citing protocol."""

    name = "model-like"

    def spans(self, messages: Sequence[Message]) -> list[Span]:
        return head_spans(messages)

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary:
        return Summary(text="1. Primary request and intent:\nThe model's own words.", summarizer=self.name)


def test_a_models_summary_is_followed_by_the_same_index_of_the_session() -> None:
    messages = conversation()
    out, store = run(messages, summarizer=ModelLikeSummarizer())
    assert out.ok, out.report.error
    assert out.report.summary == "1. Primary request and intent:\nThe model's own words."
    index = out.messages[-1]
    assert index.is_meta and "Index of the session so far" in index.text()
    listing = find_handles(index.text())
    assert listing and all(store.contains(h) for h in listing), "the index cites only what was stored"
    assert out.report.context[-1].part == "index"
    assert out.report.briefing is not None and out.report.briefing.next_step is None


class RecordingSummarizer:
    name = "recording"

    def __init__(self) -> None:
        self.instructions: str | None = None

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Summary:
        self.instructions = instructions
        return Summary(text="short", summarizer=self.name)


def test_custom_instructions_come_before_hook_instructions() -> None:
    summarizer = RecordingSummarizer()
    run(conversation(), summarizer=summarizer, instructions="keep the API notes", hook_instructions="mention tests")
    assert summarizer.instructions == "keep the API notes\n\nmention tests"
    assert merge_instructions(None, "  ") is None


def test_auto_trigger_tells_the_model_to_carry_on() -> None:
    out, _ = run(conversation(), trigger="auto")
    assert "without asking the user" in out.messages[0].text()
    manual, _ = run(conversation(), trigger="manual")
    assert "without asking the user" not in manual.messages[0].text()


def test_a_preserved_reference_to_a_dropped_result_is_expanded() -> None:
    state = SessionState()
    deduper = Deduper(state.dedup)
    body = "listing\n" + "file.py\n" * 200
    raw = [user("look"), call("a", command="ls"), result("a", body)]
    raw += [say("x" * 4_000), user("again"), call("b", command="ls"), result("b", body), say("same")]
    names = tool_name_map(raw)
    messages = [deduper.apply_to_message(m, names) if m.tool_results() else m for m in raw]
    assert "[result-id: r1]" in messages[2].tool_results()[0].text()
    repeat = messages[6].tool_results()[0].text()
    assert "r1" in repeat and body not in repeat
    out, _ = run(messages, state, options=CompactOptions(tail_tokens=800))
    tail_results = [r.text() for m in out.messages for r in m.tool_results()]
    assert any(body in text for text in tail_results), "the reference was re-expanded"
    assert out.state.dedup.seen == {} and out.state.dedup.counter == 1


def test_report_sizes_are_consistent() -> None:
    out, _ = run(conversation(), trigger="auto")
    report = out.report
    assert report.post_tokens < report.pre_tokens
    assert 0 < report.summary_tokens < report.head_tokens
    assert report.basis == "inferred"
    assert json.loads(report.model_dump_json())["dropped"][0]["kind"] == "head"


texts = st.text(alphabet=st.characters(codec="utf-8"), min_size=0, max_size=400)


@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(st.tuples(texts, texts, texts), min_size=2, max_size=12))
def test_recover_of_compact_gives_back_the_conversation(rounds: list[tuple[str, str, str]]) -> None:
    messages: list[Message] = []
    for i, (prompt, command, output) in enumerate(rounds):
        messages += [user(prompt or "?"), call(f"id{i}", command=command), result(f"id{i}", output)]
    out, store = run(messages, options=CompactOptions(tail_tokens=50))
    if not out.ok:
        assert out.messages == messages
        return
    metas = sum(1 for m in out.messages if m.is_meta)
    tail = out.messages[1 : len(out.messages) - metas]
    head_lines = store.get(out.report.dropped[0].handle).decode().split("\n")[:-1]
    head = [Message.model_validate(json.loads(line)) for line in head_lines]
    assert head + tail == messages


def test_recovered_content_is_not_stored_or_summarized_again() -> None:
    recovered = "RECOVERED " + "r" * 5_000
    messages = [
        user("what did the build say?"),
        Message(
            role="assistant", content=[ToolUseBlock(id="rc", name="ccr_retrieve", input={"handle": "ccr_" + "a" * 32})]
        ),
        result("rc", recovered),
        *conversation(),
    ]
    out, store = run(messages)
    assert out.ok
    head = store.get(out.report.dropped[0].handle).decode()
    assert "RECOVERED" not in head and "repeat the recovery call rc" in head
    assert all(b"RECOVERED" not in store.get(d.handle) for d in out.report.dropped)
    assert "RECOVERED" not in out.messages[0].text()


@pytest.mark.parametrize("tool", ["tokenjuice_retrieve", "retrieve_tool_output"])
def test_tinyjuice_recovery_answers_are_not_stored_or_summarized_again(tool: str) -> None:
    recovered = "RECOVERED " + "r" * 5_000
    messages = [
        user("what did the build say?"),
        Message(role="assistant", content=[ToolUseBlock(id="rc", name=tool, input={"token": "tj:" + "a" * 32})]),
        result("rc", recovered),
        *conversation(),
    ]
    out, store = run(messages)
    assert out.ok
    assert all(b"RECOVERED" not in store.get(d.handle) for d in out.report.dropped)
    assert "RECOVERED" not in out.messages[0].text()


class CitingFake:
    """A summarizer that cites whatever handles it is told to."""

    name = "citing-fake"

    def __init__(self, cite: list[str]) -> None:
        self.cite = cite

    def summarize(self, messages: Sequence[Message], instructions: str | None = None) -> Summary:
        return Summary(
            text="see " + " ".join(f"<<ccr:{h}>>" for h in self.cite), summarizer=self.name, handles=self.cite
        )


def test_a_summary_may_cite_what_an_earlier_compaction_stored_but_nothing_unstored() -> None:
    store = open_store(":memory:")
    earlier = store.put(b"stored by an earlier compaction")
    ok, _ = run(conversation(), store=store, summarizer=CitingFake([earlier]))
    assert ok.ok
    made_up = "ccr_" + "1" * 32
    refused, _ = run(conversation(), store=store, summarizer=CitingFake([made_up]))
    assert not refused.ok and made_up in (refused.report.error or "")


def test_a_second_compaction_names_the_earlier_summary_and_reminders_for_what_they_are() -> None:
    first, store = run(conversation())
    assert first.ok
    again = [*first.messages, *conversation()[1:]]
    second, _ = run(again, store=store)
    assert second.ok
    by_kind = {d.kind: store.get(d.handle) for d in second.report.dropped if d.handle}
    assert by_kind["summary"].startswith(b"This session continues"), "the earlier summary is stored as one"
    typed = [store.get(d.handle) for d in second.report.dropped if d.kind == "user_message"]
    assert not any(t.startswith(b"This session continues") for t in typed), "a summary is not typed by the user"
    if any(m.is_meta for m in first.messages):
        assert "reminder" in by_kind


def test_a_stored_tool_result_of_several_text_blocks_is_counted_from_its_blocks_exactly(tmp_path: Path) -> None:
    inner = RecordingTiktoken()
    counter = CachedCounter(inner)
    blocks = [TextBlock(text="first part\n    with lines\n" * 40), TextBlock(text="second part, more\n" * 40)]
    message = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=blocks), TextBlock(text="note")])
    sizes = [counter.count_message(message)]
    spans = head_spans([message], tool_result_min_bytes=1)
    inner.texts.clear()
    store = open_store(tmp_path / "store.db")
    _, tokens = store_spans(spans, store, head_sizes=sizes, counter=counter, producer="test", head=[message])
    store.close()
    [index] = [i for i, span in enumerate(spans) if span.kind == "tool_result"]
    assert tokens[index] == TiktokenCounter().count_text(message.tool_results()[0].text())
    assert inner.texts and all(len(t) < 40 for t in inner.texts)  # the joints, not the joined result


def _with_cut_file_and_skill(tmp_path: Path) -> SessionState:
    """A state whose file and skill attachments are both cut to their budgets, so both store a tail."""
    source = tmp_path / "big.py"
    source.write_text("".join(f"value_{n} = {n}  # a line of the big file\n" for n in range(3_000)))
    state = SessionState()
    state.record_read(ReadFileEntry(path=str(source), content=source.read_text(), timestamp=1.0))
    state.invoke_skill(InvokedSkill(name="big", path="/s/big/SKILL.md", content="step\n" * 4_000, invoked_at=1.0))
    return state


ASKED = PutRequest(data=b'{"line": 1}\n', content_type="application/x-ndjson", producer="test:segment")


def test_one_compaction_stores_spans_tails_and_the_records_asked_for_in_one_transaction(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    store = counting_store("ccr.db")
    out, _ = run(
        conversation(),
        _with_cut_file_and_skill(tmp_path),
        store=store,
        also_store=[ASKED],
        options=CompactOptions(tail_tokens=2_000, budgets=Budgets(file_tokens=1_000, skill_tokens=1_000)),
    )
    assert out.ok
    tails = [a.handle for a in out.report.attachments if a.handle is not None]
    assert {a.type for a in out.report.attachments if a.handle is not None} == {"file", "skill"}
    assert len(out.report.dropped) > 1 and tails
    assert store.commits == 1
    for handle in [d.handle for d in out.report.dropped] + tails:
        assert store.contains(handle)
    assert store.get(handle_for(ASKED.data)) == ASKED.data


def test_a_refused_write_stores_nothing_of_the_compaction_and_drops_nothing(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    options = CompactOptions(tail_tokens=2_000, budgets=Budgets(file_tokens=1_000, skill_tokens=1_000))
    measured, _ = run(
        conversation(),
        _with_cut_file_and_skill(tmp_path),
        store=open_store(tmp_path / "all.db"),
        also_store=[ASKED],
        options=options,
    )
    assert measured.ok
    needed = open_store(tmp_path / "all.db").stats().payload_bytes
    assert needed > len(ASKED.data)
    # Room for all but one byte of it: spans, tails and the asked-for record go in together or not at all.
    small = counting_store("small.db", max_bytes=needed - 1)
    messages = conversation()
    state = _with_cut_file_and_skill(tmp_path)
    out, _ = run(messages, state, store=small, also_store=[ASKED], options=options)
    assert not out.ok and out.report.error_id == BudgetExceeded.error_id
    assert out.messages == messages and out.state is state and out.boundary is None
    assert small.stats().entries == 0 and small.commits == 0


def test_a_summary_may_cite_a_record_stored_with_its_own_compaction() -> None:
    out, store = run(conversation(), summarizer=CitingFake([handle_for(ASKED.data)]), also_store=[ASKED])
    assert out.ok
    assert store.get(handle_for(ASKED.data)) == ASKED.data


def test_a_compaction_that_fails_after_naming_its_spans_stores_none_of_them() -> None:
    store = open_store(":memory:")
    out, _ = run(conversation(), store=store, summarizer=CitingFake(["ccr_" + "1" * 32]), also_store=[ASKED])
    assert not out.ok
    assert store.stats().entries == 0


def test_a_cut_memory_is_stored_in_the_compactions_one_transaction(
    tmp_path: Path, counting_store: Callable[..., Any]
) -> None:
    big = "".join(f"write the docs for the report generator, note {i}\n" for i in range(4_000))
    db_path = tmp_path / "memory.db"
    with open_memory(db_path, recovery=tmp_path / "seed.db") as db:
        db.remember_many([big])
    store = counting_store("ccr.db")
    options = CompactOptions(tail_tokens=2_000, memory_db=str(db_path), budgets=Budgets(memory_tokens=500))
    out, _ = run(conversation(), store=store, options=options)
    assert out.ok
    (memory,) = [a for a in out.report.attachments if a.type == "memory"]
    assert memory.truncated and memory.handle is not None
    assert store.get(memory.handle) == big.encode()
    assert store.commits == 1
