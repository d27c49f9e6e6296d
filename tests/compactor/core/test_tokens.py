"""Token counters, the per-message cache and the usage-anchored estimate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.core.errors import ConfigError
from compactor.core.messages import ImageBlock, Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from compactor.core.tokens import (
    CachedCounter,
    MessageTally,
    RoughCounter,
    TiktokenCounter,
    TokenCounter,
    anchor_index,
    count_all,
    is_json_file_read,
    make_counter,
    message_key,
    rough_file_tokens,
    text_key,
    usage_anchored_estimate,
    utf16_length,
)
from tests.conftest import RecordingTiktoken


class CountingCounter:
    """A rough counter that records which messages it was asked to count."""

    name = "counting"

    def __init__(self) -> None:
        self.counted: list[str] = []
        self._rough = RoughCounter()

    def count_text(self, text: str) -> int:
        return self._rough.count_text(text)

    def count_message(self, message: Message) -> int:
        self.counted.append(message.text())
        return self._rough.count_message(message)


def user(text: str) -> Message:
    return Message(role="user", content=text)


def assistant(text: str, usage: Usage | None = None, message_id: str | None = None) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)], usage=usage, message_id=message_id)


def read_result(body: str) -> Message:
    numbered = "".join(f"{i:>6}\u2192{line}\n" for i, line in enumerate(body.splitlines(), start=1))
    return Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content=numbered)])


def test_both_counters_follow_the_protocol() -> None:
    assert isinstance(TiktokenCounter(), TokenCounter)
    assert isinstance(RoughCounter(), TokenCounter)
    assert isinstance(CachedCounter(RoughCounter()), TokenCounter)


def test_tiktoken_counts_cl100k_tokens_offline() -> None:
    assert TiktokenCounter().count_text("hello world") == 2


def test_rough_counter_counts_a_quarter_of_the_characters_rounded_up() -> None:
    assert RoughCounter().count_text("x" * 40) == 10
    assert RoughCounter().count_text("x" * 41) == 11


def test_rough_counter_measures_utf16_code_units_like_javascript() -> None:
    assert utf16_length("\U0001f600") == 2
    assert utf16_length("a\u00e9") == 2
    assert RoughCounter().count_text("\U0001f600" * 4) == 2


def test_images_and_documents_cost_two_thousand_each() -> None:
    message = Message(role="user", content=[ImageBlock(), TextBlock(text="abcd")])
    assert RoughCounter().count_message(message) == 2_001
    assert TiktokenCounter().count_message(message) == 2_000 + TiktokenCounter().count_text("abcd")


def test_a_tool_call_counts_its_name_and_compact_json_input() -> None:
    block = ToolUseBlock(id="t1", name="Read", input={"file_path": "/a.py"})
    message = Message(role="assistant", content=[block])
    expected = len("Read" + json.dumps({"file_path": "/a.py"}, separators=(",", ":")))
    assert RoughCounter().count_message(message) == -(-expected // 4)


def test_a_json_file_read_counts_half_the_characters() -> None:
    body = json.dumps({"name": "demo", "items": list(range(50))}, indent=2)
    message = read_result(body)
    text = message.tool_results()[0].text()
    assert is_json_file_read(text)
    assert RoughCounter().count_message(message) == -(-len(text) // 2)


def test_a_python_file_read_counts_a_quarter() -> None:
    message = read_result("def f():\n    return {1: 2}\n")
    text = message.tool_results()[0].text()
    assert not is_json_file_read(text)
    assert RoughCounter().count_message(message) == -(-len(text) // 4)


def test_plain_json_output_without_line_numbers_counts_a_quarter() -> None:
    assert not is_json_file_read('{"a": 1}')


def test_rough_file_tokens_uses_the_file_suffix() -> None:
    assert rough_file_tokens("x" * 100, "conf/app.JSON") == 50
    assert rough_file_tokens("x" * 100, "log.jsonl") == 50
    assert rough_file_tokens("x" * 100, "main.py") == 25


def test_make_counter_knows_both_names_and_rejects_others() -> None:
    assert make_counter("rough").name == "rough"
    assert make_counter("tiktoken").name == "tiktoken"
    with pytest.raises(ConfigError, match="unknown token counter"):
        make_counter("words")


def test_the_cache_key_depends_on_content_only() -> None:
    a = Message(role="user", content="same", uuid="1")
    b = Message(role="user", content="same", uuid="2")
    assert message_key(a) == message_key(b)
    assert message_key(a) != message_key(user("other"))


def test_cached_counter_tokenizes_each_distinct_message_once() -> None:
    inner = CountingCounter()
    cached = CachedCounter(inner)
    cached.count_message(user("one"))
    cached.count_message(user("one"))
    cached.count_message(user("two"))
    assert inner.counted == ["one", "two"]
    assert (cached.hits, cached.misses) == (1, 2)


def test_a_growing_conversation_only_counts_the_new_message() -> None:
    inner = CountingCounter()
    cached = CachedCounter(inner)
    messages = [user(f"message {i}") for i in range(100)]
    first = cached.count_messages(messages)
    inner.counted.clear()
    messages.append(user("the newest one"))
    second = cached.count_messages(messages)
    assert inner.counted == ["the newest one"]
    assert second == first + RoughCounter().count_text("the newest one")


def test_a_rebuilt_list_with_the_same_content_is_not_tokenized_again() -> None:
    inner = CountingCounter()
    cached = CachedCounter(inner)
    cached.count_messages([user("a"), user("b")])
    inner.counted.clear()
    assert cached.count_messages([user("a"), user("b")]) == 2
    assert inner.counted == []


def test_a_shorter_or_changed_conversation_is_counted_correctly() -> None:
    cached = CachedCounter(RoughCounter())
    messages = [user("x" * 40), user("y" * 80), user("z" * 4)]
    assert cached.count_messages(messages) == 31
    assert cached.count_messages(messages[:2]) == 30
    assert cached.count_messages([messages[0], user("w" * 8)]) == 12


def test_the_cache_forgets_the_oldest_entries_beyond_its_size() -> None:
    inner = CountingCounter()
    cached = CachedCounter(inner, max_entries=2)
    for text in ("a", "b", "c", "a"):
        cached.count_message(user(text))
    assert inner.counted == ["a", "b", "c", "a"]


def test_a_tokenizing_counter_counts_each_distinct_text_once_across_messages_and_texts() -> None:
    inner = RecordingTiktoken()
    cached = CachedCounter(inner)
    result = "line of a tool result\n" * 50
    message = Message(
        role="user",
        content=[
            ToolResultBlock(tool_use_id="t1", content=result),
            ToolResultBlock(tool_use_id="t2", content=result),
            TextBlock(text="a note"),
            ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "AA=="}),
        ],
    )
    assert cached.count_message(message) == TiktokenCounter().count_message(message)
    assert inner.texts == [result, "a note"]
    assert cached.count_message(message.model_copy()) == TiktokenCounter().count_message(message)
    assert (cached.hits, cached.misses) == (1, 1)
    assert cached.count_text(result) == TiktokenCounter().count_text(result)
    lone = "a note\ud800"
    assert cached.count_text(lone) == cached.count_text(lone) == TiktokenCounter().count_text(lone)
    assert inner.texts == [result, "a note", "a note\ud800"]


def test_text_keys_differ_by_content_and_take_lone_surrogates() -> None:
    assert text_key("a") == text_key("a") != text_key("b")
    assert text_key("\ud800") != text_key("")
    long = "x" * 10_000
    assert text_key(long) == text_key("x" * 10_000) != text_key(long + "\ud800")
    assert isinstance(text_key(long), bytes) and len(text_key(long)) == 16  # the cache does not keep it alive


def test_the_rough_counter_counts_texts_without_a_cache() -> None:
    cached = CachedCounter(RoughCounter())
    assert cached.count_text("x" * 40) == 10
    assert cached._text_counts == {}


def test_a_cache_of_size_zero_counts_every_time_instead_of_failing() -> None:
    inner = CountingCounter()
    cached = CachedCounter(inner, max_entries=0)
    assert cached.count_message(user("a")) == cached.count_message(user("a")) == 1
    assert cached.count_messages([user("a"), user("b")]) == 2
    assert inner.counted == ["a", "a", "a", "b"]


@settings(max_examples=50, deadline=None)
@given(texts=st.lists(st.text(max_size=60), max_size=20), cut=st.integers(0, 20))
def test_cached_totals_equal_the_plain_sum(texts: list[str], cut: int) -> None:
    rough = RoughCounter()
    cached = CachedCounter(rough)
    messages = [user(t) for t in texts]
    assert cached.count_messages(messages[:cut]) == sum(rough.count_message(m) for m in messages[:cut])
    assert cached.count_messages(messages) == sum(rough.count_message(m) for m in messages)


def test_without_usage_the_estimate_counts_everything() -> None:
    messages = [user("x" * 40), assistant("y" * 40)]
    assert usage_anchored_estimate(messages, RoughCounter()) == 20
    assert count_all(messages, CachedCounter(RoughCounter())) == 20


def test_the_estimate_is_the_last_usage_total_plus_newer_messages() -> None:
    usage = Usage(input_tokens=10, cache_creation_input_tokens=200, cache_read_input_tokens=3_000, output_tokens=40)
    messages = [
        user("x" * 4_000),
        assistant("old", usage=Usage(input_tokens=999_999)),
        user("x" * 400),
        assistant("answer", usage=usage),
        user("z" * 40),
        user("w" * 80),
    ]
    assert usage_anchored_estimate(messages, RoughCounter()) == 3_250 + 10 + 20


def test_a_streamed_answer_counts_results_between_its_records() -> None:
    usage = Usage(input_tokens=1_000)
    messages = [
        user("hi"),
        assistant("part one", usage=usage, message_id="msg_1"),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="r" * 40)]),
        assistant("part two", usage=usage, message_id="msg_1"),
        user("q" * 4),
    ]
    expected = 1_000 + sum(RoughCounter().count_message(m) for m in messages[2:])
    assert usage_anchored_estimate(messages, RoughCounter()) == expected


def test_text_with_a_lone_surrogate_still_has_a_cache_key() -> None:
    assert message_key(user("a\ud800b")) != message_key(user("a\ud801b"))
    assert CachedCounter(RoughCounter()).count_message(user("a\ud800b")) == 1


def test_tiktoken_loads_offline_from_the_bundled_file_with_an_empty_cache(tmp_path: Path) -> None:
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise OSError('network use is not allowed here')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from compactor.core.tokens import TiktokenCounter\n"
        "print(TiktokenCounter().count_text('hello world'))\n"
    )
    cache = tmp_path / "empty-cache"
    cache.mkdir()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "2"


_tally_messages = st.builds(
    lambda role, text, usage, answer: Message(
        role=role,
        content=text,
        usage=Usage(input_tokens=usage) if role == "assistant" and usage is not None else None,
        message_id=f"msg{answer}" if role == "assistant" and answer is not None else None,
    ),
    st.sampled_from(["user", "assistant"]),
    st.text(max_size=40),
    st.none() | st.integers(0, 10_000),
    st.none() | st.integers(0, 2),
)
_tally_steps = st.lists(
    st.one_of(
        st.tuples(st.just("append"), _tally_messages),
        st.tuples(st.just("reset"), st.lists(_tally_messages, max_size=6)),
        st.tuples(st.just("forget_usage"), st.none()),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(steps=_tally_steps)
def test_a_tally_always_equals_a_full_recount(steps: list[tuple[str, object]]) -> None:
    counter = RoughCounter()
    tally = MessageTally(counter)
    messages: list[Message] = []
    for action, value in steps:
        if action == "append":
            assert isinstance(value, Message)
            messages.append(value)
            tally.append(value)
        elif action == "reset":
            assert isinstance(value, list)
            messages = list(value)
            tally.reset(messages)
        else:
            messages = [m.model_copy(update={"usage": None}) for m in messages]
            tally.forget_usage(messages)
        assert len(tally) == len(messages)
        assert tally.total == sum(counter.count_message(m) for m in messages)
        assert tally.anchor == anchor_index(messages)
        expected = usage_anchored_estimate(messages, counter) if anchor_index(messages) else None
        assert tally.anchored_estimate() == expected


def test_the_anchor_moves_back_to_the_first_record_of_a_streamed_answer() -> None:
    tally = MessageTally(RoughCounter())
    tally.append(Message(role="assistant", content="part one", message_id="m1"))
    tally.append(Message(role="user", content="x" * 400))
    tally.append(Message(role="assistant", content="part two", message_id="m1", usage=Usage(input_tokens=1_000)))
    assert tally.anchor is not None and tally.anchor[0] == 0
    assert tally.anchored_estimate() == 1_000 + tally.since(1)


def test_forgetting_usage_needs_the_same_number_of_messages() -> None:
    tally = MessageTally(RoughCounter(), [Message(role="user", content="hi")])
    with pytest.raises(ValueError):
        tally.forget_usage([])
