"""The memory MCP server, spoken to for real: ``python -m compactor.memory mcp`` over stdio with the SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from compactor.memory import memory_id, open_memory

TIMEOUT_S = 60
TOOLS = {"cavemem_remember", "cavemem_recall", "cavemem_supersede", "cavemem_history", "cavemem_forget"}
OLD_NAMES = {"memory_remember", "memory_recall", "memory_supersede", "memory_history", "memory_forget"}

Session = Callable[[ClientSession], Awaitable[Any]]
Talk = Callable[[Session], Any]


@pytest.fixture
def talk(mcp_talk: Callable[[list[str], Session], Any], tmp_path: Path) -> Talk:
    """Start ``compactor memory mcp`` on ``memory.db`` in the test's folder, run a conversation against it, stop it."""
    return lambda conversation: mcp_talk(
        ["-m", "compactor.memory", "--db", str(tmp_path / "memory.db"), "--ccr-store", str(tmp_path / "ccr.db"), "mcp"],
        conversation,
    )


def text_of(result: Any) -> str:
    return "".join(part.text for part in result.content)


def answer(result: Any) -> Any:
    assert not result.is_error, text_of(result)
    return json.loads(text_of(result))


def test_server_offers_the_five_cavemem_tools_and_their_old_names_for_one_release(talk: Talk) -> None:
    async def conversation(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in talk(conversation)}
    assert set(tools) == TOOLS | OLD_NAMES
    for name in ("cavemem_recall", "memory_recall"):
        assert tools[name].input_schema["required"] == ["query"]
        assert set(tools[name].input_schema["properties"]) == {"query", "limit", "token_budget"}
    assert set(tools["cavemem_supersede"].input_schema["required"]) == {"id", "text"}
    for old in OLD_NAMES:
        assert (tools[old].description or "").startswith(f"Old name of cavemem_{old.removeprefix('memory_')}")


def test_remember_recall_supersede_history_and_forget_through_the_client(talk: Talk) -> None:
    fact = "The nightly job exports invoices to the finance bucket at 03:00"

    async def conversation(session: ClientSession) -> Any:
        remembered = answer(await session.call_tool("cavemem_remember", {"text": fact}))
        recalled = answer(await session.call_tool("cavemem_recall", {"query": "invoices export job"}))
        off_topic = answer(await session.call_tool("cavemem_recall", {"query": "gpu drivers"}))
        new = answer(
            await session.call_tool("cavemem_supersede", {"id": remembered["id"], "text": fact + " and 15:00"})
        )
        chain = answer(await session.call_tool("cavemem_history", {"id": new["id"]}))
        forgotten = answer(await session.call_tool("cavemem_forget", {"id": remembered["id"]}))
        unknown = answer(await session.call_tool("cavemem_forget", {"id": "mem_" + "0" * 16}))
        after = answer(await session.call_tool("cavemem_history", {"id": new["id"]}))
        return remembered, recalled, off_topic, new, chain, forgotten, unknown, after

    remembered, recalled, off_topic, new, chain, forgotten, unknown, after = talk(conversation)
    assert remembered["id"] == memory_id(fact) and remembered["created"] is True
    assert [h["id"] for h in recalled["hits"]] == [memory_id(fact)]
    assert recalled["hits"][0]["basis"] == "inferred"
    assert off_topic == {"hits": [], "basis": "inferred"}
    assert set(new) == {"id", "supersedes", "created_at", "basis"} and new["supersedes"] == remembered["id"]
    assert set(chain) == {"history", "basis"}
    assert [v["id"] for v in chain["history"]] == [remembered["id"], new["id"]]
    assert forgotten == {"forgotten": True, "basis": "inferred"}
    assert unknown == {"forgotten": False, "basis": "inferred"}
    assert [v["id"] for v in after["history"]] == [new["id"]]
    for each in (remembered, recalled, off_topic, new, chain, forgotten, unknown, after):
        assert each["basis"] == "inferred"


def test_the_old_tool_names_answer_as_before_with_basis_added(talk: Talk) -> None:
    fact = "The staging database is restored from the nightly snapshot"

    async def conversation(session: ClientSession) -> Any:
        remembered = answer(await session.call_tool("memory_remember", {"text": fact}))
        recalled = answer(await session.call_tool("memory_recall", {"query": "staging snapshot"}))
        new = answer(await session.call_tool("memory_supersede", {"id": remembered["id"], "text": fact + " at 04:00"}))
        chain = answer(await session.call_tool("memory_history", {"id": new["id"]}))
        forgotten = answer(await session.call_tool("memory_forget", {"id": new["id"]}))
        return remembered, recalled, new, chain, forgotten

    remembered, recalled, new, chain, forgotten = talk(conversation)
    assert remembered["created"] is True and remembered["basis"] == "inferred"
    assert [h["id"] for h in recalled["hits"]] == [memory_id(fact)] and recalled["basis"] == "inferred"
    assert new["text"] == fact + " at 04:00" and new["supersedes"] == remembered["id"]
    assert new["valid_until"] is None and new["basis"] == "inferred"
    assert chain["versions"] == chain["history"] and [v["id"] for v in chain["versions"]] == [
        remembered["id"],
        new["id"],
    ]
    assert forgotten == {"forgotten": True, "basis": "inferred"}


def test_budget_zero_is_unlimited_and_negative_is_an_error_result(tmp_path: Path, talk: Talk) -> None:
    big = "ledger " + " ".join(f"row{i}" for i in range(6_000))
    with open_memory(tmp_path / "memory.db", recovery=tmp_path / "ccr.db") as db:
        db.remember(big)

    async def conversation(session: ClientSession) -> Any:
        return [
            await session.call_tool("memory_recall", {"query": "ledger", "token_budget": 0}),
            await session.call_tool("memory_recall", {"query": "ledger"}),
            await session.call_tool("memory_recall", {"query": "ledger", "token_budget": -5}),
            await session.call_tool("memory_recall", {"query": "ledger", "token_budget": 100}),
        ]

    unlimited, default, negative, small = talk(conversation)
    (whole,) = answer(unlimited)["hits"]
    assert whole["text"] == big and "recovery_handle" not in whole
    (head,) = answer(default)["hits"]
    assert head["tokens_added"] <= 2000 and head["recovery_handle"].startswith("ccr_")
    assert negative.is_error and "usage_error" in text_of(negative)
    (cut,) = answer(small)["hits"]
    assert cut["tokens_added"] <= 100
    with open_memory(tmp_path / "memory.db", recovery=tmp_path / "ccr.db") as db:
        assert db.recover(cut["recovery_handle"]) == big.encode()


def test_refused_calls_are_error_results_and_the_server_keeps_answering(tmp_path: Path, talk: Talk) -> None:
    async def conversation(session: ClientSession) -> Any:
        return [
            await session.call_tool("memory_remember", {"text": "   "}),
            await session.call_tool("memory_remember", {"text": "x" * (256 * 1024 + 1)}),
            await session.call_tool("memory_history", {"id": "not-an-id"}),
            await session.call_tool("memory_supersede", {"id": "mem_" + "1" * 16, "text": "y"}),
            await session.call_tool("memory_remember", {"text": "still here"}),
        ]

    empty, too_large, bad_id, unknown, afterwards = talk(conversation)
    assert empty.is_error and "memory_invalid_text" in text_of(empty)
    assert too_large.is_error and "memory_too_large" in text_of(too_large)
    assert bad_id.is_error and "usage_error" in text_of(bad_id)
    assert unknown.is_error and "memory_not_found" in text_of(unknown)
    assert answer(afterwards)["created"] is True


def _serve_raw(tmp_path: Path, **stdin: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compactor.memory", "--db", str(tmp_path / "memory.db"), "mcp"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "home")},
        **stdin,
    )


def test_garbage_on_stdin_exits_65_with_a_message(tmp_path: Path) -> None:
    done = _serve_raw(tmp_path, input="hello\nthis is not json-rpc\n")
    assert done.returncode == 65
    assert "compactor: input_unreadable: " in done.stderr and "JSON-RPC" in done.stderr


def test_a_stdin_that_ends_before_initialize_exits_65_and_a_closed_one_66(tmp_path: Path) -> None:
    empty = _serve_raw(tmp_path, stdin=subprocess.DEVNULL)
    assert empty.returncode == 65 and "compactor: input_unreadable: " in empty.stderr
    assert "initialize" in empty.stderr
    closed = subprocess.run(
        ["sh", "-c", 'exec "$0" -m compactor.memory --db "$1" mcp <&-', sys.executable, str(tmp_path / "memory.db")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "home")},
    )
    assert closed.returncode == 66 and "compactor: input_not_found: stdin is closed" in closed.stderr


def test_without_the_mcp_package_the_server_still_answers(tmp_path: Path) -> None:
    hide_sdk = (
        "import sys; sys.modules['mcp'] = None; from compactor.memory.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    done = subprocess.run(
        [sys.executable, "-c", hide_sdk, "--db", str(tmp_path / "memory.db"), "mcp"],
        input="".join(json.dumps(m) + "\n" for m in (hello, listing)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} == TOOLS | OLD_NAMES


_HELLO = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}) + "\n"
_LIST = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + "\n"


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> str:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return json.dumps(message) + "\n"


_PING = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}) + "\n"


def test_a_database_that_cannot_be_opened_answers_every_call_with_an_error_result_then_exits_saying_why(
    tmp_path: Path,
) -> None:
    (tmp_path / "memory.db").write_bytes(b"not a database\n" * 100)
    calls = _call(3, "cavemem_recall", {"query": "vault"}) + _call(4, "cavemem_remember", {"text": "a fact"})
    done = _serve_raw(tmp_path, input=_HELLO + _LIST + calls + _PING)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 9]
    assert {tool["name"] for tool in answers[1]["result"]["tools"]} >= TOOLS
    for result in (answers[2]["result"], answers[3]["result"]):
        assert result["isError"] is True and "not_a_store: " in result["content"][0]["text"]
    assert done.returncode == 73 and done.stderr.startswith("compactor: ") and "Traceback" not in done.stderr
    assert (tmp_path / "memory.db").read_bytes() == b"not a database\n" * 100


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        '{"jsonrpc":"2.0","id":5,"method":"\\udfff"}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"\\ud800","arguments":{}}}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"cavemem_remember","arguments":{"text":"k\\ud800"}}}',
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"cavemem_recall","arguments":{"query":"\\udc00"}}}',
    ],
)
def test_a_lone_surrogate_anywhere_in_a_request_is_answered_and_later_requests_too(tmp_path: Path, line: str) -> None:
    done = _serve_raw(tmp_path, input=_HELLO + line + "\n" + _PING)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(out) for out in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, json.loads(line)["id"], 9]
    assert answers[2]["result"] == {} and "Traceback" not in done.stderr
    with open_memory(tmp_path / "memory.db") as db:  # nothing half-text was remembered
        assert db.recall("k") == []


def test_a_server_no_client_spoke_to_opens_no_database(tmp_path: Path) -> None:
    done = _serve_raw(tmp_path, stdin=subprocess.DEVNULL)
    assert done.returncode == 65
    assert not (tmp_path / "memory.db").exists()
