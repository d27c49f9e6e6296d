"""Messages for the summarizers' tests: a user's text, a tool call, its result, the assistant's words."""

from __future__ import annotations

from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock


def user(text: str, **kw: object) -> Message:
    return Message(role="user", content=text, **kw)  # type: ignore[arg-type]


def call(tool_id: str, name: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


def result(tool_id: str, text: str, *, is_error: bool = False) -> Message:
    return Message(role="user", content=[ToolResultBlock(tool_use_id=tool_id, content=text, is_error=is_error)])


def say(text: str) -> Message:
    return Message(role="assistant", content=[TextBlock(text=text)])
