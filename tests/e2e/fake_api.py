"""A fake Anthropic Messages API on 127.0.0.1 for driving the real Claude Code client in tests.

It answers ``POST /v1/messages`` (streamed as server-sent events or as plain
JSON, whichever the request asks for) and ``POST /v1/messages/count_tokens``,
and logs every request it gets, whatever the path. Three kinds of
``/v1/messages`` requests are told apart:

- a **compaction** request (the client asks for a summary of the
  conversation): answered with ``<analysis>`` and ``<summary>``; the summary
  copies every ``<<ccr:...>>`` marker the request carries, as a model that
  follows the plugin's instructions would;
- a **main** request (the conversation with its tools): answered by the next
  step of the test's script (say something, or call a tool);
- any other request (titles, topic checks): a short text.

Each answer reports ``input_tokens`` as set in ``usage_input_tokens``, so a
test can make the client believe its context is nearly full and compact on
its own.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "Call",
    "FakeAnthropic",
    "LoggedRequest",
    "Say",
    "Step",
    "is_compaction_request",
    "last_tool_result",
    "request_text",
]

MARKER = re.compile(r"<<ccr:ccr_[0-9a-f]{32}>>")
_COMPACTION_HINTS = ("<summary>", "detailed summary of the conversation")


@dataclass(frozen=True)
class Say:
    """Answer with text and end the turn (reporting ``usage`` input tokens, when given)."""

    text: str
    usage: int | None = None


@dataclass(frozen=True)
class Call:
    """Answer with one tool call (the client runs it and asks again with the result)."""

    name: str
    input: dict[str, Any]
    text: str = ""
    usage: int | None = None


Step = Say | Call | Callable[[dict[str, Any]], "Say | Call"]
"""A scripted answer, or a function of the request body that returns one."""


@dataclass
class LoggedRequest:
    """One request the fake API received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    kind: str
    """``compaction``, ``main``, ``other`` (a /v1/messages request) or ``count_tokens``/``unknown``."""


def request_text(body: Any) -> str:
    """Every piece of text in a request body (system, messages, tool results), joined by newlines."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key in ("text", "content", "system"):
                    walk(item)

    if isinstance(body, dict):
        walk(body.get("system"))
        walk(body.get("messages"))
    return "\n".join(parts)


def last_tool_result(body: dict[str, Any]) -> str:
    """The text of the last tool result in a request (what the previous scripted call returned)."""
    for message in reversed(body.get("messages") or []):
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return request_text({"messages": [{"content": block.get("content")}]})
    raise AssertionError("the request carries no tool result")


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    if not messages:
        return ""
    return request_text({"messages": messages[-1:]})


def is_compaction_request(body: Any) -> bool:
    """The client's request for a summary of the conversation (manual or auto compaction)."""
    if not isinstance(body, dict):
        return False
    last = _last_user_text(body)
    return _COMPACTION_HINTS[0] in last and _COMPACTION_HINTS[1] in last.lower()


@dataclass
class FakeAnthropic:
    """The fake API server; use as a context manager, then point ``ANTHROPIC_BASE_URL`` at ``url``."""

    script: list[Step] = field(default_factory=list)
    usage_input_tokens: int = 1_000
    summary_text: str = "The user asked for a few file operations; they were done."
    requests: list[LoggedRequest] = field(default_factory=list)
    script_errors: list[str] = field(default_factory=list)
    """Exceptions raised by scripted steps (the client got a plain answer instead)."""
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def url(self) -> str:
        assert self._server is not None, "the server is not running"
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def __enter__(self) -> FakeAnthropic:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-anthropic", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    # -- what the tests read ------------------------------------------------------

    def of_kind(self, kind: str) -> list[LoggedRequest]:
        """The logged requests of one kind, in order."""
        return [r for r in self.requests if r.kind == kind]

    def tool_results(self, name: str) -> list[tuple[dict[str, Any], str, bool]]:
        """Every call of tool ``name`` the client answered: (input, result text, is_error), in order.

        Read from the last main request, which carries the whole conversation since the last compaction.
        """
        main = self.of_kind("main")
        if not main:
            return []
        calls: dict[str, dict[str, Any]] = {}
        found: list[tuple[dict[str, Any], str, bool]] = []
        for message in main[-1].body.get("messages", []):
            content = message.get("content")
            if not isinstance(content, list):
                continue
            for block in content:
                if block.get("type") == "tool_use" and block.get("name") == name:
                    calls[block["id"]] = block.get("input", {})
                elif block.get("type") == "tool_result" and block.get("tool_use_id") in calls:
                    text = request_text({"messages": [{"content": block.get("content")}]})
                    found.append((calls[block["tool_use_id"]], text, bool(block.get("is_error"))))
        return found

    # -- answers ------------------------------------------------------------------

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_{next(self._ids):024d}"

    def answer(self, body: dict[str, Any], kind: str) -> tuple[list[dict[str, Any]], str, int]:
        """The content blocks, stop reason and reported input tokens for a /v1/messages request."""
        if kind == "compaction":
            markers = list(dict.fromkeys(MARKER.findall(request_text(body))))
            kept = ("\n\nStored: " + " ".join(markers)) if markers else ""
            text = (
                "<analysis>The conversation is a short scripted session.</analysis>\n"
                f"<summary>\n1. Primary Request and Intent: {self.summary_text}{kept}\n</summary>"
            )
            return [{"type": "text", "text": text}], "end_turn", self.usage_input_tokens
        if kind != "main":
            return [{"type": "text", "text": "Scripted session"}], "end_turn", self.usage_input_tokens
        with self._lock:
            step = self.script.pop(0) if self.script else Say("Done.")
        if callable(step):
            try:
                step = step(body)
            except Exception as exc:
                self.script_errors.append(f"{type(exc).__name__}: {exc}")
                step = Say(f"The scripted step failed: {exc}")
        usage = self.usage_input_tokens if step.usage is None else step.usage
        if isinstance(step, Say):
            return [{"type": "text", "text": step.text}], "end_turn", usage
        blocks: list[dict[str, Any]] = []
        if step.text:
            blocks.append({"type": "text", "text": step.text})
        blocks.append({"type": "tool_use", "id": self.next_id("toolu"), "name": step.name, "input": step.input})
        return blocks, "tool_use", usage

    def classify(self, body: Any) -> str:
        if is_compaction_request(body):
            return "compaction"
        if isinstance(body, dict) and body.get("tools"):
            return "main"
        return "other"


def _handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _body(self) -> Any:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _json(self, status: int, value: Any) -> None:
            data = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", api.next_id("req"))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            api.requests.append(LoggedRequest("GET", self.path, dict(self.headers), None, "unknown"))
            self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})

        def do_HEAD(self) -> None:
            api.requests.append(LoggedRequest("HEAD", self.path, dict(self.headers), None, "unknown"))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            body = self._body()
            path = self.path.split("?", 1)[0]
            if path.endswith("/v1/messages/count_tokens"):
                api.requests.append(LoggedRequest("POST", self.path, dict(self.headers), body, "count_tokens"))
                self._json(200, {"input_tokens": max(1, len(json.dumps(body)) // 4)})
                return
            if not path.endswith("/v1/messages") or not isinstance(body, dict):
                api.requests.append(LoggedRequest("POST", self.path, dict(self.headers), body, "unknown"))
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                return
            kind = api.classify(body)
            api.requests.append(LoggedRequest("POST", self.path, dict(self.headers), body, kind))
            blocks, stop, input_tokens = api.answer(body, kind)
            usage = {
                "input_tokens": input_tokens,
                "output_tokens": 50,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
            message = {
                "id": api.next_id("msg"),
                "type": "message",
                "role": "assistant",
                "model": body.get("model", "claude-sonnet-4-5"),
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
            if body.get("stream"):
                self._stream(message)
            else:
                self._json(200, message)

        def _stream(self, message: dict[str, Any]) -> None:
            events: list[tuple[str, dict[str, Any]]] = [
                ("message_start", {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}})
            ]
            for index, block in enumerate(message["content"]):
                if block["type"] == "text":
                    events.append(
                        (
                            "content_block_start",
                            {
                                "type": "content_block_start",
                                "index": index,
                                "content_block": {"type": "text", "text": ""},
                            },
                        )
                    )
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "text_delta", "text": block["text"]},
                            },
                        )
                    )
                else:
                    start = {**block, "input": {}}
                    events.append(
                        ("content_block_start", {"type": "content_block_start", "index": index, "content_block": start})
                    )
                    events.append(
                        (
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                            },
                        )
                    )
                events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            events.append(
                (
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                        "usage": {"output_tokens": message["usage"]["output_tokens"]},
                    },
                )
            )
            events.append(("message_stop", {"type": "message_stop"}))
            data = b"".join(f"event: {name}\ndata: {json.dumps(value)}\n\n".encode() for name, value in events)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("content-length", str(len(data)))
            self.send_header("request-id", api.next_id("req"))
            self.end_headers()
            self.wfile.write(data)

    return Handler
