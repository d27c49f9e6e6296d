"""The plugin's memory MCP server inside the real client: what one session remembers, the next recalls."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_api import Call, Say, last_tool_result
from harness import Session

World = Callable[..., Session]
TOOL = "mcp__plugin_compactor_memory__cavemem_{}".format
OLD_TOOL = "mcp__plugin_compactor_memory__memory_{}".format
FACT = "The staging database is rebuilt every Sunday at 02:00 UTC."
NEWER = "The staging database is rebuilt every Saturday at 03:00 UTC."


def with_last_id(name: str, **extra: Any) -> Callable[[dict[str, Any]], Call]:
    """A call of memory tool ``name`` on the id the previous call answered."""
    return lambda body: Call(TOOL(name), {"id": json.loads(last_tool_result(body))["id"], **extra})


def test_memory_tools_answer_and_a_new_session_recalls_what_an_earlier_one_remembered(world: World) -> None:
    session = world()
    tools = ",".join(TOOL(n) for n in ("remember", "recall", "supersede", "history", "forget"))
    session.run(
        "remember when staging is rebuilt",
        script=[
            Call("ToolSearch", {"query": f"select:{tools}"}),
            Call(TOOL("remember"), {"text": FACT}),
            with_last_id("supersede", text=NEWER),
            with_last_id("history"),
            Say("Remembered."),
        ],
    )
    ((_, remembered, error),) = session.api.tool_results(TOOL("remember"))
    assert not error and json.loads(remembered)["created"] is True
    ((_, superseded, error),) = session.api.tool_results(TOOL("supersede"))
    assert not error
    ((_, history, error),) = session.api.tool_results(TOOL("history"))
    assert not error and FACT in history and NEWER in history

    session.run(
        "when is staging rebuilt?",
        cont=False,
        script=[
            Call("ToolSearch", {"query": f"select:{tools}"}),
            Call(TOOL("recall"), {"query": "staging database rebuilt"}),
            Call(TOOL("forget"), {"id": json.loads(superseded)["id"]}),
            Call(TOOL("recall"), {"query": "staging database rebuilt"}),
            Say("Saturday at 03:00 UTC."),
        ],
    )
    assert len(session.transcripts()) == 2, "the second run must be a new session"
    (first_recall, second_recall) = session.api.tool_results(TOOL("recall"))
    hits = json.loads(first_recall[1])["hits"]
    assert [hit["text"] for hit in hits] == [NEWER]
    ((_, forgotten, error),) = session.api.tool_results(TOOL("forget"))
    assert not error and json.loads(forgotten)["forgotten"]
    assert json.loads(second_recall[1])["hits"] == []


def test_the_old_memory_tool_names_still_answer_for_one_release(world: World) -> None:
    session = world()
    session.run(
        "remember when staging is rebuilt",
        script=[
            Call("ToolSearch", {"query": f"select:{OLD_TOOL('remember')},{OLD_TOOL('history')}"}),
            Call(OLD_TOOL("remember"), {"text": FACT}),
            lambda body: Call(OLD_TOOL("history"), {"id": json.loads(last_tool_result(body))["id"]}),
            Say("Remembered."),
        ],
    )
    ((_, remembered, error),) = session.api.tool_results(OLD_TOOL("remember"))
    assert not error and json.loads(remembered)["basis"] == "inferred"
    ((_, history, error),) = session.api.tool_results(OLD_TOOL("history"))
    assert not error and [v["text"] for v in json.loads(history)["versions"]] == [FACT]
