"""The project's own MCP stdio layer: JSON-RPC 2.0 answers, tool results, negotiation, line protocol."""

from __future__ import annotations

import io
import json
from typing import Annotated, Any

import pytest
from pydantic import Field

from ccr.mcp_stdio import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_PROTOCOL_VERSION,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    McpServer,
    Preloading,
    Tool,
    ToolError,
    opening_server,
    serve_lines,
)


def echo(
    text: Annotated[str, Field(description="what to say back")],
    times: Annotated[list[int] | None, Field(description="how often")] = None,
) -> str:
    if text == "fail":
        raise ToolError("asked to fail")
    return text * (times[0] if times else 1)


SERVER = McpServer("t", "be nice", [Tool.from_function(echo, "says it back")], version="1.2")


def request(method: str, params: Any = None, id_: int = 7) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        message["params"] = params
    answer = SERVER.handle(message)
    assert answer is not None and answer["id"] == id_
    return answer


def test_initialize_echoes_a_known_protocol_version_and_offers_the_latest_otherwise() -> None:
    known = request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})["result"]
    assert known["protocolVersion"] == "2025-03-26"
    assert known["serverInfo"] == {"name": "t", "version": "1.2"}
    assert known["instructions"] == "be nice" and known["capabilities"] == {"tools": {"listChanged": False}}
    unknown = request("initialize", {"protocolVersion": "1999-01-01"})["result"]
    assert unknown["protocolVersion"] == LATEST_PROTOCOL_VERSION


def test_ping_answers_an_empty_result_and_notifications_get_no_answer() -> None:
    assert request("ping")["result"] == {}
    assert SERVER.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    assert SERVER.handle({"jsonrpc": "2.0", "id": 3, "result": {}}) is None


def test_tools_list_shows_the_schema_of_the_arguments_model_named_as_the_sdk_names_it() -> None:
    (tool,) = request("tools/list")["result"]["tools"]
    assert tool["name"] == "echo" and tool["description"] == "says it back"
    schema = tool["inputSchema"]
    assert schema["title"] == "echoArguments" and schema["required"] == ["text"]
    assert schema["properties"]["text"] == {"description": "what to say back", "title": "Text", "type": "string"}


def test_a_tool_call_answers_text_and_a_refusal_is_an_error_result() -> None:
    ok = request("tools/call", {"name": "echo", "arguments": {"text": "hi", "times": [2]}})["result"]
    assert ok == {"content": [{"type": "text", "text": "hihi"}], "isError": False}
    refused = request("tools/call", {"name": "echo", "arguments": {"text": "fail"}})["result"]
    assert refused["isError"] is True and refused["content"][0]["text"].endswith("asked to fail")


def test_arguments_that_do_not_validate_are_an_error_result_and_a_json_string_list_is_decoded() -> None:
    bad = request("tools/call", {"name": "echo", "arguments": {"times": "nope"}})["result"]
    assert bad["isError"] is True and "text" in bad["content"][0]["text"]
    decoded = request("tools/call", {"name": "echo", "arguments": {"text": "5", "times": "[3]"}})["result"]
    assert decoded == {"content": [{"type": "text", "text": "555"}], "isError": False}


def test_unknown_methods_tools_and_bad_params_are_json_rpc_errors() -> None:
    assert request("resources/list")["error"]["code"] == METHOD_NOT_FOUND
    assert request("tools/call", {"name": "nosuch", "arguments": {}})["error"]["code"] == INVALID_PARAMS
    assert request("tools/call", {"arguments": {}})["error"]["code"] == INVALID_PARAMS
    assert request("tools/call", ["not", "an", "object"])["error"]["code"] == INVALID_PARAMS
    invalid = SERVER.handle({"jsonrpc": "1.0", "id": 1, "method": "ping"})
    assert invalid is not None and invalid["error"]["code"] == INVALID_REQUEST


def test_serve_lines_answers_one_line_per_request_and_counts_what_was_not_json_rpc() -> None:
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode() + b"\n",
        b"\n",
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n",
        b"{not json\n",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode() + b"\n",
    ]
    out = io.BytesIO()
    session = serve_lines(SERVER, lines, out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [1, None, 2]
    assert answers[1]["error"]["code"] == PARSE_ERROR
    assert session.initialized and session.bad_lines == 1 and session.first_bad == b"{not json\n"


def test_a_preloading_server_makes_its_tools_once_initialize_is_written() -> None:
    made: list[bytes] = []
    output = io.BytesIO()

    def make() -> list[Tool]:
        made.append(output.getvalue())  # what had been written when the making started
        return [Tool.from_function(echo, "says it back")]

    server = McpServer("t", "be nice", Preloading(make), version="1.2")
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode(),
    ]
    serve_lines(server, lines, output)
    hello, listed = (json.loads(line) for line in output.getvalue().splitlines())
    assert hello["result"]["serverInfo"]["name"] == "t"
    assert [t["name"] for t in listed["result"]["tools"]] == ["echo"]
    assert len(made) == 1 and json.loads(made[0])["id"] == 1  # made once, after the answer to initialize


def test_what_making_the_tools_raised_is_raised_when_they_are_asked_for() -> None:
    def make() -> list[Tool]:
        raise ToolError("the store cannot be opened")

    preloading = Preloading(make)
    server = McpServer("t", "be nice", preloading)
    assert server.handle({"jsonrpc": "2.0", "id": 1, "method": "ping"}) is not None
    with pytest.raises(ToolError, match="cannot be opened"):
        preloading.tools()
    listing = server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert listing is not None and listing["error"]["code"] == INTERNAL_ERROR  # answered, not raised
    assert server.handle({"jsonrpc": "2.0", "id": 3, "method": "ping"}) == {"jsonrpc": "2.0", "id": 3, "result": {}}


def lines_of(*messages: Any) -> list[bytes]:
    return [(m if isinstance(m, str) else json.dumps(m)).encode() + b"\n" for m in messages]


HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
LAST_PING = {"jsonrpc": "2.0", "id": 99, "method": "ping"}


@pytest.mark.parametrize(
    ("line", "code"),
    [
        ('{"jsonrpc":"2.0","id":1,"method":"\\ud800"}', METHOD_NOT_FOUND),
        ('{"jsonrpc":"2.0","id":1,"method":"ping\\udfff"}', METHOD_NOT_FOUND),
        ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\\ud800"}}', INVALID_PARAMS),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo\\udc00","arguments":{}}}',
            INVALID_PARAMS,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\ud800"}}}',
            INVALID_PARAMS,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"\\ud800":"a"}}}',
            INVALID_PARAMS,
        ),
        (
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","times":["\\ud801"]}}}',
            INVALID_PARAMS,
        ),
        ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"\\udbff"}}}', INVALID_PARAMS),
    ],
)
def test_a_lone_surrogate_in_a_method_tool_name_or_argument_is_a_json_rpc_error_and_serving_goes_on(
    line: str, code: int
) -> None:
    out = io.BytesIO()
    session = serve_lines(SERVER, lines_of(HELLO, line, LAST_PING), out)
    answers = [json.loads(answer) for answer in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 99]
    assert answers[1]["error"]["code"] == code
    assert answers[2]["result"] == {} and session.bad_lines == 0


@pytest.mark.parametrize("request_id", ["\\ud800", "x\\udfff", "\\udc00\\ud800", "\\ud83d"])
def test_a_lone_surrogate_in_an_id_comes_back_exactly_as_sent_in_a_valid_line(request_id: str) -> None:
    out = io.BytesIO()
    ping = '{"jsonrpc":"2.0","id":"' + request_id + '","method":"ping"}'
    serve_lines(SERVER, lines_of(HELLO, ping, LAST_PING), out)
    _hello, echoed, last = out.getvalue().splitlines()
    assert echoed.isascii()
    assert json.loads(echoed)["id"] == json.loads(ping)["id"]  # the client can match it to its request
    assert json.loads(last)["id"] == 99


def test_a_tool_that_fails_unforeseen_is_an_internal_error_and_one_of_ours_an_error_result() -> None:
    from ccr.errors import StoreError

    def broken() -> str:
        raise RuntimeError("nobody foresaw this")

    def unreadable() -> str:
        raise StoreError("store x.db failed: database disk image is malformed")

    server = McpServer("t", "be nice", [Tool.from_function(broken, "fails"), Tool.from_function(unreadable, "fails")])
    failed = server.handle({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "broken"}})
    assert failed is not None and failed["error"]["code"] == INTERNAL_ERROR
    assert "nobody foresaw" not in failed["error"]["message"]
    refused = server.handle({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "unreadable"}})
    assert refused is not None and refused["result"]["isError"] is True
    assert "store_error: store x.db failed" in refused["result"]["content"][0]["text"]


def test_a_resource_that_cannot_be_opened_leaves_the_tools_listed_and_every_call_an_error_result() -> None:
    from ccr.errors import DamagedFile

    class Resource:
        def close(self) -> None: ...

        def text(self) -> str:
            return "never"

    def cannot_open() -> Resource:
        raise DamagedFile("store x.db is damaged: run 'ccr repair'")

    def tools_for(resource: Resource) -> list[Tool]:
        def read() -> str:
            return resource.text()

        return [Tool.from_function(read, "reads")]

    with opening_server("t", "be nice", cannot_open, tools_for) as server:
        out = io.BytesIO()
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read"}}
        listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        serve_lines(server, lines_of(HELLO, listing, call, call | {"id": 3}, LAST_PING), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [0, 1, 2, 3, 99]
    assert [t["name"] for t in answers[1]["result"]["tools"]] == ["read"]
    for result in (answers[2]["result"], answers[3]["result"]):
        assert result["isError"] is True and "ccr_damaged_file: " in result["content"][0]["text"]
    assert [type(e) for e in server.failures] == [DamagedFile]


@pytest.mark.parametrize("newline", [b"\n", b""])
def test_a_line_past_the_limit_is_read_in_bounded_chunks_dropped_and_the_next_line_answered(newline: bytes) -> None:
    from ccr.mcp_stdio import Oversized, bounded_lines

    class Counting(io.BytesIO):
        def __init__(self, data: bytes) -> None:
            super().__init__(data)
            self.asked: list[int] = []

        def readline(self, size: int | None = -1) -> bytes:
            self.asked.append(-1 if size is None else size)
            return super().readline(size)

    ping = json.dumps(LAST_PING).encode() + b"\n"
    stream = Counting(lines_of(HELLO)[0] + b'{"jsonrpc":"2.0","id":5,"x":"' + b"a" * 5000 + newline + ping)
    lines = list(bounded_lines(stream, limit=1000))
    assert all(0 < size <= 1 << 20 for size in stream.asked)  # never an unbounded read
    oversized = [line for line in lines if isinstance(line, Oversized)]
    assert len(oversized) == 1
    if newline:
        assert oversized[0].size == 5030 and oversized[0].startswith(b'{"jsonrpc"') and lines[-1] == ping
        out = io.BytesIO()
        session = serve_lines(SERVER, lines, out)
        answers = [json.loads(answer) for answer in out.getvalue().splitlines()]
        assert [a["id"] for a in answers] == [0, None, 99] and answers[1]["error"]["code"] == PARSE_ERROR
        assert session.bad_lines == 1 and session.describe_first_bad().startswith("line 2, 5,030 bytes, longer than")
