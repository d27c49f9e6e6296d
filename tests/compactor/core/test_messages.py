"""Messages in the Anthropic shape: their JSON forms."""

from __future__ import annotations

import json

from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.engine.spans import messages_jsonl


def _conversation() -> list[Message]:
    return [
        Message(role="user", content="fix the bug in  é 日本 \U0001f600 and \x1b[31m"),
        Message(
            role="assistant",
            content=[
                TextBlock(text="Reading it."),
                ToolUseBlock(id="t1", name="Read", input={"z": 1, "a": [1.5, None, {"b": True}], "file_path": "/a.py"}),
            ],
        ),
        Message(
            role="user",
            content=[
                ToolResultBlock(tool_use_id="t1", content=[TextBlock(text="line\n"), TextBlock(text="two")]),
            ],
        ),
        Message(role="assistant", content=[{"type": "server_tool_use", "id": "s1", "extra": {"k": "v"}}]),
    ]


def test_api_json_is_the_api_shape_as_compact_json_in_field_order() -> None:
    for message in _conversation():
        assert message.api_json() == json.dumps(message.to_api(), ensure_ascii=False, separators=(",", ":"))
        assert json.loads(message.api_json()) == message.to_api()


def test_api_json_of_text_with_a_lone_surrogate_is_still_its_api_shape() -> None:
    message = Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="half \ud800 a pair")])
    assert json.loads(message.api_json()) == message.to_api()


def test_canonical_json_does_not_depend_on_key_order() -> None:
    one = Message(role="assistant", content=[ToolUseBlock(id="t", name="Bash", input={"a": 1, "b": 2})])
    two = Message(role="assistant", content=[ToolUseBlock(id="t", name="Bash", input={"b": 2, "a": 1})])
    assert one.canonical_json() == two.canonical_json()
    assert one.api_json() != two.api_json()


def test_a_stored_head_holds_one_api_shaped_message_per_line() -> None:
    conversation = _conversation()
    lines = messages_jsonl(conversation).decode("utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [m.to_api() for m in conversation]
