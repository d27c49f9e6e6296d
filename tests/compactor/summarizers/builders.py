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


def ran(n: int, command: str, output: str = "ok") -> list[Message]:
    """A shell call numbered ``n`` and its output."""
    return [call(f"b{n}", "Bash", command=command), result(f"b{n}", output)]


def edited(n: int, path: str) -> list[Message]:
    """An edit numbered ``n`` of ``path`` that went through."""
    return [call(f"e{n}", "Edit", file_path=path, old_string="a", new_string="b"), result(f"e{n}", "ok")]
