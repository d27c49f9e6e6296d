"""The CCR MCP server, spoken to for real: ``python -m ccr mcp`` over stdio with the SDK's client."""

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

from ccr import marker, open_store
from ccr.mcp_server import retrieve_text, stats_text
from ccr.recovery import recover

TIMEOUT_S = 60
"""Upper bound on one whole conversation with the server (start, calls, shutdown)."""

MESSAGES = b"".join(
    json.dumps({"role": role, "content": text}).encode() + b"\n"
    for role, text in [
        ("user", "please fix the failing test in inventory/pricing.py"),
        ("assistant", "reading the pricing module first"),
        ("user", "also rename the helper in reports.py"),
        ("assistant", "done: the discount rounding was off by one cent"),
    ]
)


@pytest.fixture
def store_file(tmp_path: Path) -> Path:
    return tmp_path / "home" / "ccr.db"


@pytest.fixture
def handle(store_file: Path) -> str:
    with open_store(store_file) as store:
        return store.put(MESSAGES, content_type="application/x-ndjson", producer="test")


Session = Callable[[ClientSession], Awaitable[Any]]
Talk = Callable[[Session], Any]


@pytest.fixture
def talk(mcp_talk: Callable[[list[str], Session], Any], store_file: Path) -> Talk:
    """Start ``ccr mcp --store store_file``, run a conversation against it, stop it: what it returned."""
    return lambda conversation: mcp_talk(["-m", "ccr", "mcp", "--store", str(store_file)], conversation)


def text_of(result: Any) -> str:
    return "".join(part.text for part in result.content)


def test_server_offers_ccr_retrieve_and_ccr_stats(talk: Talk) -> None:
    async def conversation(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in talk(conversation)}
    assert set(tools) == {"ccr_retrieve", "ccr_stats"}
    schema = tools["ccr_retrieve"].input_schema
    assert schema["required"] == ["handle"]
    assert set(schema["properties"]) == {"handle", "query", "lines", "bytes", "max_tokens", "exact"}


def test_retrieve_gives_back_the_original_whole_by_query_and_by_range(handle: str, talk: Talk) -> None:
    async def conversation(session: ClientSession) -> Any:
        return [
            await session.call_tool("ccr_retrieve", {"handle": handle, "exact": True}),
            await session.call_tool("ccr_retrieve", {"handle": marker(handle), "exact": True}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "query": "rename helper"}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "lines": [2, 3], "exact": True}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "bytes": [0, 10]}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "lines": [2, 3]}),
        ]

    whole, by_marker, by_query, by_lines, by_bytes, shown = talk(conversation)
    assert not any(r.is_error for r in (whole, by_marker, by_query, by_lines, by_bytes, shown))
    assert text_of(whole) == MESSAGES.decode()
    assert text_of(by_marker) == MESSAGES.decode()
    assert "rename the helper in reports.py" in text_of(by_query)
    assert "failing test" not in text_of(by_query)
    assert text_of(by_lines) == "".join(MESSAGES.decode().splitlines(keepends=True)[1:3])
    assert text_of(by_bytes) == MESSAGES[:10].decode()
    # Without "exact", a stored conversation is shown as its messages' text.
    assert (
        text_of(shown) == "[line 2: assistant]\nreading the pricing module first\n[line 3: user]\n"
        "also rename the helper in reports.py\n"
    )


def test_a_large_answer_is_bounded_by_max_tokens_through_the_server(store_file: Path, talk: Talk) -> None:
    with open_store(store_file) as store:
        big = store.put("".join(f"row {i}: value {i * 3}\n" for i in range(20_000)).encode())

    async def conversation(session: ClientSession) -> Any:
        return [
            await session.call_tool("ccr_retrieve", {"handle": big}),
            await session.call_tool("ccr_retrieve", {"handle": big, "max_tokens": 200}),
            await session.call_tool("ccr_retrieve", {"handle": big, "max_tokens": 0}),
        ]

    default, small, unbounded = talk(conversation)
    assert "answer cut to 5,000 tokens" in text_of(default) and len(text_of(default)) < 30_000
    assert "answer cut to 200 tokens" in text_of(small) and '"lines": [' in text_of(small)
    assert text_of(unbounded).count("\n") == 20_000


def test_bad_calls_are_error_results_and_the_server_keeps_answering(handle: str, talk: Talk) -> None:
    unknown = "ccr_" + "0" * 32

    async def conversation(session: ClientSession) -> Any:
        return [
            await session.call_tool("ccr_retrieve", {"handle": "not a handle"}),
            await session.call_tool("ccr_retrieve", {"handle": unknown}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "query": "x", "lines": [1, 2]}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "lines": [1, 2, 3]}),
            await session.call_tool("ccr_retrieve", {"handle": handle, "exact": True}),
        ]

    malformed, missing, two_selections, bad_range, afterwards = talk(conversation)
    assert malformed.is_error and "ccr_invalid_handle" in text_of(malformed)
    assert missing.is_error and "ccr_not_found" in text_of(missing)
    assert two_selections.is_error and "at most one" in text_of(two_selections)
    assert bad_range.is_error and "lines" in text_of(bad_range)
    assert not afterwards.is_error and text_of(afterwards) == MESSAGES.decode()


def test_a_query_that_matches_nothing_says_so_before_the_whole_original(
    store_file: Path, handle: str, talk: Talk
) -> None:
    async def conversation(session: ClientSession) -> Any:
        return await session.call_tool("ccr_retrieve", {"handle": handle, "query": "zebra", "exact": True})

    result = talk(conversation)
    first, rest = text_of(result).split("\n", 1)
    assert not result.is_error
    assert "zebra" in first and "whole original" in first
    assert rest == MESSAGES.decode()


def serve_raw(store_file: Path, stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    """``ccr mcp`` fed ``stdin`` as it is (None: stdin closed)."""
    return subprocess.run(
        [sys.executable, "-m", "ccr", "mcp", "--store", str(store_file)],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=TIMEOUT_S,
        preexec_fn=(lambda: os.close(0)) if stdin is None else None,
        stdin=subprocess.DEVNULL if stdin is None else None,
    )


INITIALIZE = (
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    ).encode()
    + b"\n"
    + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    + b"\n"
)


@pytest.mark.parametrize(
    ("stdin", "code", "says"),
    [
        (None, 66, b"stdin is closed"),
        (b"", 65, b"before any MCP client sent 'initialize'"),
        (b"hello server\n", 65, b"not JSON-RPC"),
        (INITIALIZE + b"{not json\n", 65, b"not JSON-RPC"),
    ],
)
def test_closed_empty_or_garbage_stdin_exits_non_zero_with_a_message(
    store_file: Path, stdin: bytes | None, code: int, says: bytes
) -> None:
    done = serve_raw(store_file, stdin)
    assert done.returncode == code, done.stderr
    assert says in done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize(
    "line",
    [b"sk-secret-token-in-a-payload\n", b'{"jsonrpc": "1.0", "params": "sk-secret-token"}\n', b"\xffsk-secret-token\n"],
)
def test_a_bad_stdin_line_is_described_but_none_of_its_bytes_reach_stderr(store_file: Path, line: bytes) -> None:
    done = serve_raw(store_file, INITIALIZE + line)
    assert done.returncode == 65
    assert b"secret" not in done.stderr
    number = INITIALIZE.count(b"\n") + 1
    assert f"line {number}, {len(line):,} bytes".encode() in done.stderr


def test_a_client_that_initializes_and_hangs_up_ends_the_server_with_exit_0(store_file: Path) -> None:
    done = serve_raw(store_file, INITIALIZE)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["id"] == 1


def test_stats_reports_the_store_as_json(handle: str, talk: Talk) -> None:
    async def conversation(session: ClientSession) -> Any:
        return await session.call_tool("ccr_stats", {})

    result = talk(conversation)
    stats = json.loads(text_of(result))
    assert not result.is_error
    assert stats["entries"] == 1
    assert stats["payload_bytes"] == len(MESSAGES)
    assert stats["full"] is False
    assert stats["basis"] == "inferred"


def test_without_the_mcp_package_the_server_still_answers_and_never_imports_it(store_file: Path, handle: str) -> None:
    hide_sdk = (
        "import sys; sys.modules['mcp'] = None; from ccr.cli import main; code = main(sys.argv[1:]); "
        "assert not [m for m in sys.modules if m.split('.')[0] == 'mcp' and sys.modules[m] is not None]; "
        "sys.exit(code)"
    )
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "ccr_retrieve", "arguments": {"handle": handle, "lines": [1, 1], "exact": True}},
    }
    done = subprocess.run(
        [sys.executable, "-c", hide_sdk, "mcp", "--store", str(store_file)],
        input=INITIALIZE + json.dumps(call).encode() + b"\n",
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[1]["result"]["content"][0]["text"] == MESSAGES.decode().splitlines()[0] + "\n"


def test_retrieve_text_answers_exactly_as_the_agent_loop_recovery_tool() -> None:
    store = open_store(":memory:")
    handle = store.put(MESSAGES)
    assert retrieve_text(store, handle, lines=[1, 1]) == (
        recover(store, {"handle": handle, "lines": [1, 1]}).content,
        False,
    )
    text, is_error = retrieve_text(store, "nope")
    assert is_error and text == recover(store, {"handle": "nope"}).content


def test_stats_text_is_the_store_stats_json() -> None:
    store = open_store(":memory:")
    store.put(b"abc")
    assert json.loads(stats_text(store)) == store.stats().model_dump(mode="json")


def call_line(request_id: int, tool: str, arguments: dict[str, Any]) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return json.dumps(message).encode() + b"\n"


LISTING = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode() + b"\n"
PING = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}).encode() + b"\n"


def test_a_store_that_cannot_be_opened_answers_every_call_with_an_error_result_then_exits_saying_why(
    tmp_path: Path,
) -> None:
    not_a_store = tmp_path / "notes.db"
    not_a_store.write_bytes(b"these are notes, not an SQLite file\n" * 100)
    calls = call_line(3, "ccr_stats", {}) + call_line(4, "ccr_retrieve", {"handle": "ccr_" + "0" * 32})
    done = serve_raw(not_a_store, INITIALIZE + LISTING + calls + PING)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 9]
    assert {t["name"] for t in answers[1]["result"]["tools"]} == {"ccr_retrieve", "ccr_stats"}
    for result in (answers[2]["result"], answers[3]["result"]):
        assert result["isError"] is True and "not_a_store: " in result["content"][0]["text"]
    assert done.returncode == 73 and done.stderr.startswith(b"ccr: not_a_store: ") and b"Traceback" not in done.stderr
    assert not_a_store.read_bytes() == b"these are notes, not an SQLite file\n" * 100


def damage(db: Path, how: str) -> None:
    data = bytearray(db.read_bytes())
    if how == "halved":
        data = data[: len(data) // 2]
    elif how == "header":
        data[:16] = b"x" * 16
    elif how == "zeroed page":
        data[4096 : 2 * 4096] = bytes(4096)
    elif how == "schema page":
        data[100:4096] = b"\xff" * (4096 - 100)
    db.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["halved", "header", "zeroed page", "schema page"])
def test_a_damaged_store_gets_a_json_rpc_answer_for_every_request_never_a_silent_exit(tmp_path: Path, how: str) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        handles = [store.put(b"record %d " % i * 400, metadata={"kind": "tool_result"}) for i in range(40)]
    damage(db, how)
    calls = b"".join(
        [
            call_line(3, "ccr_stats", {}),
            call_line(4, "ccr_retrieve", {"handle": handles[-1]}),
            call_line(5, "ccr_retrieve", {"handle": handles[0], "lines": [1, 1]}),
        ]
    )
    done = serve_raw(db, INITIALIZE + LISTING + calls + PING)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5, 9], done.stderr
    assert b"Traceback" not in done.stderr
    errors = [a["result"]["content"][0]["text"] for a in answers[2:5] if a["result"]["isError"]]
    assert errors, "damage this large must show in at least one answer"
    assert all(": " in text for text in errors)
    assert done.returncode in (0, 65, 73)


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
        b'{"jsonrpc":"2.0","id":5,"method":"\\ud800"}',
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ccr_\\udfffstats","arguments":{}}}',
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ccr_retrieve","arguments":{"handle":"\\ud800"}}}',
        b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ccr_retrieve","arguments":{"handle":"h","query":"x\\udc00"}}}',
    ],
)
def test_a_lone_surrogate_anywhere_in_a_request_is_answered_and_later_requests_too(
    store_file: Path, handle: str, line: bytes
) -> None:
    done = serve_raw(store_file, INITIALIZE + line + b"\n" + PING)
    assert done.returncode == 0, done.stderr
    answers = [json.loads(out) for out in done.stdout.splitlines()]
    assert [a["id"] for a in answers] == [1, json.loads(line)["id"], 9]
    assert answers[2]["result"] == {}
    assert b"Traceback" not in done.stderr


def test_a_server_no_client_spoke_to_opens_no_store(tmp_path: Path) -> None:
    never = tmp_path / "never" / "ccr.db"
    done = serve_raw(never, b"")
    assert done.returncode == 65 and b"before any MCP client sent 'initialize'" in done.stderr
    assert not never.exists()
