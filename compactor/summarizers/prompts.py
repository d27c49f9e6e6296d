"""What a user-role message says the user typed, if anything.

Claude Code writes much more than the user's words into user-role
messages: tool results, system reminders, background-task notifications,
the wrappers of slash commands and of ``!`` shell input, their output, and
the client's own notes. Only some of it is the user speaking. ``typed`` sorts
one message: the text the user typed (a request, a slash command with its
arguments, or shell input), or None for everything else. The summarizer and
the fact-survival measure (``compactor.engine.survival``) both use it, so that they
agree on what "the user's messages" are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from compactor.core.client_text import NOT_TYPED, REMINDER, shell_input, slash_command
from compactor.core.messages import Message
from compactor.engine.rounds import is_prompt

__all__ = [
    "CLIENT_COMMANDS",
    "QUEUED_MESSAGE",
    "Typed",
    "TypedKind",
    "collapse",
    "is_queued_text",
    "queued",
    "strip_reminders",
    "typed",
]

QUEUED_MESSAGE = (
    "<system-reminder>\nThe user sent the following message while you were working:\n{text}\n\n"
    "Address it and continue with your task.\n</system-reminder>"
)
"""How a message the user queued while the agent worked reaches the model (Claude Code records it
only as a ``queue-operation`` line and attaches it to the next request): the reader adds it, in
these words, to the tool results it came with."""
_QUEUED = re.compile(
    r"\A<system-reminder>\nThe user sent the following message while you were working:\n(.*)\n\n"
    r"Address it and continue with your task\.\n</system-reminder>\Z",
    re.S,
)

TypedKind = Literal["request", "command", "client_command", "shell"]
"""``request``: words; ``command``: a slash command (a skill or a custom command);
``client_command``: a slash command that drives the client (``/compact``, ``/mcp``);
``shell``: ``!`` input run by the user."""

CLIENT_COMMANDS = frozenset(
    {
        "add-dir",
        "agents",
        "bashes",
        "clear",
        "compact",
        "config",
        "context",
        "cost",
        "doctor",
        "exit",
        "export",
        "help",
        "hooks",
        "ide",
        "login",
        "logout",
        "mcp",
        "memory",
        "model",
        "permissions",
        "plugin",
        "release-notes",
        "resume",
        "rewind",
        "status",
        "statusline",
        "theme",
        "todos",
        "usage",
        "vim",
    }
)
"""Slash commands that operate the client rather than ask for work."""


@dataclass(frozen=True)
class Typed:
    """What the user typed: the text as they would have written it, and its kind."""

    text: str
    kind: TypedKind

    @property
    def is_request(self) -> bool:
        """True when it asks for work: words or a slash command that is not a client command."""
        return self.kind in ("request", "command")


def strip_reminders(text: str) -> str:
    """``text`` without its ``<system-reminder>`` blocks, stripped."""
    return REMINDER.sub("", text).strip()


def collapse(text: str) -> str:
    """``text`` with every run of whitespace made one space (how facts are compared)."""
    return " ".join(text.split())


def is_queued_text(text: str) -> bool:
    """Whether a text block is a queued message the reader added (``QUEUED_MESSAGE``)."""
    return _QUEUED.match(text) is not None


def queued(message: Message) -> list[str]:
    """The messages the user queued that reached the model with ``message`` (``QUEUED_MESSAGE``)."""
    if message.role != "user":
        return []
    found = []
    for block in message.blocks():
        text = getattr(block, "text", None)
        if isinstance(text, str) and (match := _QUEUED.match(text)) is not None:
            found.append(match.group(1).strip())
    return found


def typed(message: Message) -> Typed | None:
    """The text the user typed in ``message``, or None when the user did not type it.

    None for assistant messages, tool results, meta messages (restored
    files, skills, reminders), compaction summaries, task notifications,
    command output and the client's notes. A slash command comes back as
    ``/name args`` and shell input as ``!command``.
    """
    if not is_prompt(message) or message.is_meta or message.is_compact_summary:
        return None
    text = strip_reminders(message.text())
    if not text or text.startswith(NOT_TYPED):
        return None
    command = slash_command(text)
    if command is not None:
        name = command.split(" ", 1)[0]
        return Typed(command, "client_command" if name[1:] in CLIENT_COMMANDS else "command")
    shell = shell_input(text)
    if shell is not None:
        return Typed(shell, "shell")
    return Typed(text, "request")
