"""A small MCP server over stdio: JSON-RPC 2.0, one message per line, tools only.

``ccr mcp`` and ``compactor memory mcp`` are served by this module rather than by the
official ``mcp`` SDK, whose import alone outlasts the start a client waits
for (docs/ARCHITECTURE.md, "Why it is fast"). It serves what these servers
need of the protocol: ``initialize`` (with protocol version negotiation),
``notifications/initialized``, ``ping``, ``tools/list`` and ``tools/call``.
The official client still drives them in the tests, which is what proves
them compliant.

A tool is a plain function with annotated parameters (``Tool.from_function``):
its arguments are validated by a pydantic model built from its signature,
named ``<tool>Arguments`` as the SDK names it, whose JSON schema is the
tool's ``inputSchema``. The function returns the result text; a
``ToolError`` (or arguments that do not validate) becomes a result with
``isError`` true, which the model reads, never a failure of the server.
Requests the server cannot take get JSON-RPC errors: parse error (-32700),
invalid request (-32600), method not found (-32601), invalid params
(-32602, also for an unknown tool, and for params holding a lone surrogate,
an unpaired ``\\ud800`` escape, which is not text), internal error (-32603,
a tool that failed in a way nobody foresaw). A tool that raises one of the
project's errors (a store that cannot be read) gives a result with ``isError``
true naming its ``error_id``. Whatever a line holds, it gets its answer and
the server goes on with the next one: an answer that cannot be written as
UTF-8 (an id holding a lone surrogate) is written with ASCII escapes, so the
id comes back exactly as it was sent.

pydantic is imported only where tools are made or called: a server whose
tools are made in the background (``Preloading``) answers ``initialize``
before it loads.
"""

from __future__ import annotations

import copy
import inspect
import json
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar, cast

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_PROTOCOL_VERSION",
    "MAX_LINE_BYTES",
    "METHOD_NOT_FOUND",
    "Oversized",
    "PARSE_ERROR",
    "PROTOCOL_VERSIONS",
    "McpServer",
    "Preloading",
    "StdioSession",
    "Tool",
    "ToolError",
    "bounded_lines",
    "opening_server",
    "serve_lines",
]

PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The MCP revisions these servers speak (their tools-only subset is the same in each), oldest first."""
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]
"""Offered to a client that asks for a revision not listed: it may then hang up (the spec's negotiation)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class ToolError(Exception):
    """Raised by a tool function: its message becomes a result with ``isError`` true."""


@dataclass(frozen=True)
class Tool:
    """One tool: its name, what the model is told, how its arguments are checked, and the function."""

    name: str
    description: str
    arguments: type[BaseModel]
    """Validates a call's arguments; its JSON schema is the tool's ``inputSchema``."""
    function: Callable[..., str]
    """Called with the validated arguments as keywords; returns the result text."""
    _decoded: frozenset[str] = field(default=frozenset(), repr=False)

    @classmethod
    def from_function(cls, function: Callable[..., str], description: str, name: str | None = None) -> Tool:
        """A tool from an annotated function (``Annotated[T, Field(description=...)]`` per parameter).

        A parameter whose type is not ``str`` also accepts its value as a
        JSON string (``"[1, 5]"`` for a list), as the SDK does: some clients
        send arrays that way.
        """
        from pydantic import create_model

        name = name or function.__name__
        fields: dict[str, Any] = {}
        for parameter in inspect.signature(function, eval_str=True).parameters.values():
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (parameter.annotation, default)
        arguments = create_model(f"{name}Arguments", **fields)
        decoded = frozenset(key for key, info in arguments.model_fields.items() if info.annotation is not str)
        return cls(name=name, description=description, arguments=arguments, function=function, _decoded=decoded)

    def listing(self) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it."""
        return {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.arguments.model_json_schema(by_alias=True),
        }

    def call(self, arguments: Mapping[str, Any]) -> tuple[str, bool]:
        """Run the tool: ``(text, is_error)``; the project's errors are error results naming their id."""
        from pydantic import ValidationError

        from ccr.root_errors import CompactorError

        given = dict(arguments)
        for key in self._decoded & given.keys():
            value = given[key]
            if isinstance(value, str):
                try:
                    parsed = json.loads(value)
                except ValueError:
                    continue
                if not isinstance(parsed, str | int | float):  # '"5"' stays the text it was sent as
                    given[key] = parsed
        try:
            checked = self.arguments.model_validate(given)
            return self.function(**{key: getattr(checked, key) for key in type(checked).model_fields}), False
        except (ToolError, ValidationError) as exc:
            return f"Error executing tool {self.name}: {exc}", True
        except CompactorError as exc:  # a store that cannot be read, ...: the model reads why
            return f"Error executing tool {self.name}: {exc.error_id}: {exc}", True


class _RequestError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class Preloading:
    """Tools made in a background thread once the server has answered ``initialize``.

    Making a server's tools can cost ten times Python's own start (pydantic
    builds their argument models, a store opens), and a client's first
    request waits for the ``initialize`` answer. ``serve_lines`` starts the
    making (``start``) right after it has written that answer, so that the
    answer does not share the interpreter with it, and the tools are made
    while the client reads it and sends its next request; ``tools`` waits
    only for what is left. What making them raised is raised by ``tools``.
    """

    def __init__(self, make: Callable[[], Sequence[Tool]]) -> None:
        self._made: Sequence[Tool] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(make,), name="mcp-tools", daemon=True)

    def start(self) -> None:
        """Start making the tools, if that has not started yet."""
        if self._thread.ident is None:
            self._thread.start()

    def finish(self) -> None:
        """Wait for the making, if it started (what it raised stays for ``tools``)."""
        if self._thread.ident is not None:
            self._thread.join()

    def _run(self, make: Callable[[], Sequence[Tool]]) -> None:
        try:
            self._made = make()
        except BaseException as exc:  # handed to the thread that asks for the tools
            self._error = exc

    def tools(self) -> Sequence[Tool]:
        """The tools, once made.

        Raises:
            Whatever making them raised.
        """
        self.start()
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._made is not None
        return self._made


@dataclass
class McpServer:
    """The protocol state of one server: what it is called, what it says, its tools."""

    name: str
    instructions: str
    tools: Sequence[Tool] | Preloading
    """The tools, or a ``Preloading`` making them: ``initialize`` and ``ping`` do not wait for it."""
    version: str = ""
    failures: list[BaseException] = field(default_factory=list)
    """What opening the tools' resource raised (``opening_server``): the tools answer with it, and
    ``serve_stdio`` raises it once the client is gone, so that the exit code says it."""

    def __post_init__(self) -> None:
        self._by_name: dict[str, Tool] | None = None

    def warm(self) -> None:
        """Start making preloading tools (``serve_lines`` calls it once ``initialize`` is answered)."""
        if isinstance(self.tools, Preloading):
            self.tools.start()

    def _tools(self) -> dict[str, Tool]:
        if self._by_name is None:
            tools = self.tools.tools() if isinstance(self.tools, Preloading) else self.tools
            self._by_name = {tool.name: tool for tool in tools}
        return self._by_name

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The answer to one decoded JSON-RPC message, or None (a notification, or a client's response)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message")
        method = message.get("method")
        if method is None and ("result" in message or "error" in message):
            return None  # a client's answer: this server sends no requests, so it expects none
        request_id = message.get("id")
        if not isinstance(method, str) or not isinstance(request_id, str | int | None) or isinstance(request_id, bool):
            return _error(
                request_id if isinstance(request_id, str | int) else None,
                INVALID_REQUEST,
                "a request needs a string method and a string or integer id",
            )
        if "id" not in message:
            return None  # notifications (initialized, cancelled, ...) need no answer
        params = message.get("params", {})
        try:
            if not isinstance(params, dict):
                raise _RequestError(INVALID_PARAMS, "params must be an object")
            if not _is_text(params):
                raise _RequestError(
                    INVALID_PARAMS,
                    "params hold a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not text",
                )
            return {"jsonrpc": "2.0", "id": request_id, "result": self._answer(method, params)}
        except _RequestError as exc:
            return _error(request_id, exc.code, str(exc))
        except Exception as exc:  # tools that could not be made, a tool's unforeseen failure: answered, and on
            return _error(request_id, INTERNAL_ERROR, _describe(exc))

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            asked = params.get("protocolVersion")
            return {
                "protocolVersion": asked if asked in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION,
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": self.name, "version": self.version},
                "instructions": self.instructions,
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [tool.listing() for tool in self._tools().values()]}
        if method == "tools/call":
            name, arguments = params.get("name"), params.get("arguments", {})
            if not isinstance(name, str) or not isinstance(arguments, dict | None):
                raise _RequestError(INVALID_PARAMS, "tools/call needs a tool name and an arguments object")
            tool = self._tools().get(name)
            if tool is None:
                raise _RequestError(INVALID_PARAMS, f"Unknown tool: {name}")
            text, is_error = tool.call(arguments or {})
            return {"content": [{"type": "text", "text": text}], "isError": is_error}
        raise _RequestError(METHOD_NOT_FOUND, f"Method not found: {method}")


class _Closable(Protocol):
    def close(self) -> None: ...


_Opened = TypeVar("_Opened", bound=_Closable)


@contextmanager
def opening_server(
    name: str,
    instructions: str,
    open_: Callable[[], _Opened],
    tools_for: Callable[[_Opened], Sequence[Tool]],
    *,
    version: str = "",
) -> Iterator[McpServer]:
    """A server whose tools answer from what ``open_`` opens, both made in the background (``Preloading``).

    Nothing is opened until the server has answered ``initialize``; what was
    opened is closed when the ``with`` block ends, after any making still
    under way has finished. When opening raises one of the project's errors,
    the tools are made on a stand-in that raises it again at every use: they
    are listed, each call is an error result naming it, and the server goes on
    (``McpServer.failures`` keeps it).
    """
    from ccr.root_errors import CompactorError

    opened: list[_Opened] = []
    failures: list[BaseException] = []

    def make() -> Sequence[Tool]:
        try:
            opened.append(open_())
        except CompactorError as exc:  # the tools are still listed; each call is an error result saying why
            failures.append(exc)
            return tools_for(cast(_Opened, _Unopened(exc)))
        return tools_for(opened[0])

    preloading = Preloading(make)
    try:
        yield McpServer(name, instructions, preloading, version=version, failures=failures)
    finally:
        preloading.finish()  # what is being opened may still be opening: let it, then close it
        for resource in opened:
            resource.close()


class _Unopened:
    """Stands for what could not be opened: every use raises what opening raised."""

    def __init__(self, error: BaseException) -> None:
        self._error = error

    def close(self) -> None:
        """Nothing was opened, so nothing is closed."""

    def __getattr__(self, name: str) -> Any:
        raise copy.copy(self._error)  # a fresh copy: the one kept gathers no tracebacks


def _describe(exc: Exception) -> str:
    from ccr.root_errors import CompactorError

    if isinstance(exc, CompactorError):
        return f"{exc.error_id}: {exc}"
    return f"Internal error: {type(exc).__name__}"


def _error(request_id: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _is_text(value: Any) -> bool:
    """Whether every string in a decoded JSON value (keys too) is text that UTF-8 can encode."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_is_text(key) and _is_text(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_is_text(item) for item in value)
    return True


def _encode_answer(answer: dict[str, Any]) -> bytes:
    """One answer as a line: UTF-8 JSON, or ASCII-escaped JSON when it holds a lone surrogate (an echoed id)."""
    try:
        return json.dumps(answer, ensure_ascii=False).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(answer).encode("ascii") + b"\n"


MAX_LINE_BYTES = 16 << 20
"""The longest request line read: far more than any call needs (a memory is at most 256 KiB of text)."""


class Oversized(bytes):
    """The start of a line longer than the limit, which was read to its end and dropped."""

    size: int = 0


def bounded_lines(stream: IO[bytes], limit: int = MAX_LINE_BYTES) -> Iterator[bytes]:
    """The lines of ``stream``, each read with a bound: a longer one is an ``Oversized`` (its first
    80 bytes), the rest of it read in chunks and dropped, so memory stays bounded and the next line is found."""
    while True:
        line = stream.readline(limit + 1)
        if not line:
            return
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        start, size = line[:80], len(line)
        while not line.endswith(b"\n"):
            line = stream.readline(1 << 20)
            if not line:
                break
            size += len(line)
        oversized = Oversized(start)
        oversized.size = size
        yield oversized


@dataclass
class StdioSession:
    """What a served stdin held: whether a client said hello, and the lines that were not JSON-RPC."""

    initialized: bool = False
    bad_lines: int = 0
    first_bad: bytes | None = None
    """The start of the first bad line, for tests and debugging: never printed (it may hold payload)."""
    first_bad_at: int = 0
    """The first bad line's number (1-based) on stdin."""
    first_bad_size: int = 0
    first_bad_reason: str = ""

    def bad(self, line: bytes, *, number: int = 0, reason: str = "not a JSON-RPC message", size: int = -1) -> None:
        self.bad_lines += 1
        if self.first_bad is None:
            self.first_bad, self.first_bad_at = line[:80], number
            self.first_bad_size, self.first_bad_reason = (len(line) if size < 0 else size), reason

    def describe_first_bad(self) -> str:
        """The first bad line in words, without any of its bytes (they may be a tool's payload)."""
        return f"line {self.first_bad_at}, {self.first_bad_size:,} bytes, {self.first_bad_reason}"


def serve_lines(server: McpServer, lines: Iterable[bytes], output: IO[bytes]) -> StdioSession:
    """Answer each line of ``lines`` (one JSON-RPC message each) on ``output`` until they end.

    Each answer is one line, written and flushed before the next line is
    read. A line that is not JSON, or not a JSON-RPC 2.0 object, is
    answered with an error and counted in the session.
    """
    session = StdioSession()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        hello = False
        if isinstance(line, Oversized):
            session.bad(line, number=number, reason=f"longer than {MAX_LINE_BYTES:,} bytes", size=line.size)
            output.write(_encode_answer(_error(None, PARSE_ERROR, "Parse error: the line is too long")))
            output.flush()
            continue
        try:
            message = json.loads(line)
        except UnicodeDecodeError:
            session.bad(line, number=number, reason="not UTF-8")
            answer: dict[str, Any] | None = _error(None, PARSE_ERROR, "Parse error")
        except (ValueError, RecursionError):
            session.bad(line, number=number, reason="not JSON")
            answer = _error(None, PARSE_ERROR, "Parse error")
        else:
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                session.bad(line, number=number, reason="JSON, but not a JSON-RPC 2.0 object")
            elif message.get("method") == "initialize":
                session.initialized = hello = True
            answer = server.handle(message)
        if answer is not None:
            output.write(_encode_answer(answer))
            output.flush()
            if hello:
                server.warm()
    return session
