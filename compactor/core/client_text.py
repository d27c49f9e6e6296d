"""How Claude Code wraps what it writes into user messages, and how it words a refused tool call.

One definition for every reader of a session: the summarizers' ``typed`` (on models), the status
line's ``typed_text`` (on raw JSON, which must stay light) and the ledger. Standard library only.
``take_queued`` is what one ``queue-operation`` record does to the messages the user queued while
the agent worked, for the transcript reader and the status line alike.
"""

from __future__ import annotations

import re

__all__ = [
    "BASH_INPUT",
    "COMMAND_ARGS",
    "COMMAND_NAME",
    "NOT_TYPED",
    "REFUSAL_REASON",
    "REFUSED",
    "REMINDER",
    "shell_input",
    "slash_command",
    "take_queued",
]

REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)
NOT_TYPED = (
    "<task-notification>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-stdout>",
    "<bash-stderr>",
    "<user-prompt-submit-hook>",
    "[Request interrupted by user",
    "Stop hook feedback:",
    "Base directory for this skill:",
    "PreToolUse:",
    "PostToolUse:",
)
"""How text in a user message opens when the user did not type it."""
COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
REFUSED = ("The user doesn't want to proceed", "The user doesn't want to take this action")
"""How the client words a tool call the user turned down: neither an error nor, alone, an instruction."""
REFUSAL_REASON = re.compile(r"the user said:\s*(.+)", re.S | re.I)
"""A refusal the user typed a reason with: the reason is the user's own words."""


def slash_command(text: str) -> str | None:
    """``/name args`` when ``text`` is the client's wrapper of a slash command the user typed, else None."""
    name = COMMAND_NAME.search(text)
    if name is None or not text.lstrip().startswith(("<command-name>", "<command-message>")):
        return None
    command = name.group(1).strip()
    command = command if command.startswith("/") else "/" + command
    args = COMMAND_ARGS.search(text)
    return f"{command} {args.group(1).strip() if args else ''}".strip()


def shell_input(text: str) -> str | None:
    """``!command`` when ``text`` is the client's wrapper of shell input the user typed, else None."""
    shell = BASH_INPUT.fullmatch(text)
    return None if shell is None else "!" + shell.group(1).strip()


def take_queued(waiting: list[str], operation: object, content: object) -> list[str]:
    """Apply one ``queue-operation`` to ``waiting`` (changed in place); returns the messages it delivers.

    ``enqueue`` adds a typed message (a background task's notification is queued too, but delivered
    on its own); ``remove`` is a request taking every message waiting while the agent works: those
    reach the model with it; ``dequeue`` makes the first the next prompt, which the file records as
    a user line of its own; ``popAll`` puts them back into the input box.
    """
    if operation == "enqueue":
        if isinstance(content, str) and content.strip() and not content.lstrip().startswith("<task-notification>"):
            waiting.append(content.strip())
    elif operation == "remove":
        taken = list(waiting)
        waiting.clear()
        return taken
    elif operation == "dequeue" and waiting:
        waiting.pop(0)
    elif operation == "popAll":
        waiting.clear()
    return []
