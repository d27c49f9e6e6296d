"""Loopback HTTP servers that speak the Anthropic Messages and OpenAI chat protocols.

Each server listens on 127.0.0.1 on a free port, in a thread, and answers
from a script the test writes: a JSON reply, a protocol error, or a hang
that lasts until the test ends (released in teardown), so clients are
exercised over real HTTP without any network beyond the loopback. A reply
may carry headers (``retry-after``), come after a latency, or wait for a
gate the test opens; ``received`` is set at each request and ``answered``
counts the replies sent, so that a test can say "before the server answered"
without measuring time.

A ``Client`` pairs a server with the summarizer that speaks its protocol and
knows where a request carries its key, system prompt and prompt. The
``client`` fixture runs a test once per protocol, for the behaviour both
summarizers share; ``anthropic_client`` and ``openai_client`` serve the
tests of one protocol.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.summarizers.anthropic import AnthropicSummarizer
from compactor.summarizers.openai import OpenAISummarizer

_CLEARED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "COMPACTOR_LLM_API_KEY",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)

_HANG_LIMIT_SECONDS = 30.0
"""A hung handler gives up on its own after this long, should teardown never come."""


@pytest.fixture(autouse=True)
def clean_llm_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No key, base URL or proxy from the machine leaks into a test."""
    for name in _CLEARED_ENV:
        monkeypatch.delenv(name, raising=False)


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: Any = None
    hang: bool = False
    headers: tuple[tuple[str, str], ...] = ()
    latency: float = 0.0
    """Seconds the server takes before answering (the fake model's thinking)."""
    gate: threading.Event | None = None
    """When given, the answer is sent only once the test sets it (or teardown releases the server)."""


@dataclass
class Received:
    """One request the server got: its path, headers and decoded JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class LoopbackServer:
    """A scripted HTTP server on 127.0.0.1. Replies are used in order; ``always`` repeats one."""

    endpoint: str
    prefix: str = ""
    requests: list[Received] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    received: threading.Event = field(default_factory=threading.Event)
    answered: int = 0
    _replies: deque[Reply] = field(default_factory=deque)
    _always: Reply | None = None
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{self.prefix}"

    def reply(
        self,
        status: int,
        body: Any,
        *,
        headers: dict[str, str] | None = None,
        latency: float = 0.0,
        gate: threading.Event | None = None,
    ) -> None:
        self._replies.append(
            Reply(status=status, body=body, headers=tuple((headers or {}).items()), latency=latency, gate=gate)
        )

    def always(self, status: int, body: Any, *, latency: float = 0.0) -> None:
        self._always = Reply(status=status, body=body, latency=latency)

    def hang(self) -> None:
        """The next request gets no answer until the test ends."""
        self._replies.append(Reply(hang=True))

    def _next(self) -> Reply:
        if self._replies:
            return self._replies.popleft()
        if self._always is not None:
            return self._always
        return Reply(status=500, body={"error": {"type": "api_error", "message": "no scripted reply left"}})

    def start(self) -> None:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else {}
                owner.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                reply = owner._next() if self.path == owner.endpoint else Reply(404, {"error": "no such path"})
                owner.received.set()
                if reply.hang:
                    owner.release.wait(_HANG_LIMIT_SECONDS)
                    self.close_connection = True
                    return
                if reply.gate is not None:
                    reply.gate.wait(_HANG_LIMIT_SECONDS)
                if reply.latency:
                    owner.release.wait(reply.latency)
                payload = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                owner.answered += 1

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that timed out has closed its socket; nothing to report.
                return

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="loopback-llm", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join()


class AnthropicServer(LoopbackServer):
    """Speaks ``POST /v1/messages``; the SDK's base URL is the bare origin."""

    def answer(self, text: str, *, stop_reason: str = "end_turn") -> None:
        self.reply(
            200,
            {
                "id": f"msg_{len(self.requests):04d}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-6",
                "content": [{"type": "text", "text": text}],
                "stop_reason": stop_reason,
                "stop_sequence": None,
                "usage": {"input_tokens": 1000, "output_tokens": 200},
            },
        )

    @staticmethod
    def too_long_body(actual: int = 215_000, limit: int = 200_000) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": f"prompt is too long: {actual} tokens > {limit} maximum",
            },
        }

    def too_long(self, actual: int = 215_000, limit: int = 200_000) -> None:
        self.reply(400, self.too_long_body(actual, limit))

    def error(self, status: int, kind: str, message: str) -> None:
        self.reply(status, {"type": "error", "error": {"type": kind, "message": message}})


class OpenAIServer(LoopbackServer):
    """Speaks ``POST /v1/chat/completions``; the SDK's base URL ends in ``/v1``."""

    def answer(
        self,
        text: str | None,
        *,
        finish_reason: str = "stop",
        latency: float = 0.0,
        gate: threading.Event | None = None,
    ) -> None:
        self.reply(200, self.answer_body(text, finish_reason=finish_reason), latency=latency, gate=gate)

    def answer_body(self, text: str | None, *, finish_reason: str = "stop") -> dict[str, Any]:
        """A chat completion whose one choice says ``text``."""
        return {
            "id": f"chatcmpl-{len(self.requests):04d}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "local-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200},
        }

    @staticmethod
    def too_long_body(actual: int = 150_000, limit: int = 128_000) -> dict[str, Any]:
        return {
            "error": {
                "message": (
                    f"This model's maximum context length is {limit} tokens. "
                    f"However, your messages resulted in {actual} tokens. Please reduce the length of the messages."
                ),
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }

    def too_long(self, actual: int = 150_000, limit: int = 128_000) -> None:
        self.reply(400, self.too_long_body(actual, limit))

    def error(self, status: int, kind: str, message: str) -> None:
        self.reply(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})


@pytest.fixture
def anthropic_server() -> Iterator[AnthropicServer]:
    server = AnthropicServer(endpoint="/v1/messages")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    server = OpenAIServer(endpoint="/v1/chat/completions", prefix="/v1")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class Client:
    """A summarizer class and the loopback server it talks to, plus how its requests look."""

    name: str
    server: AnthropicServer | OpenAIServer
    summarizer: type[AnthropicSummarizer] | type[OpenAISummarizer]
    model: str
    provider_key_env: str

    def make(self, **options: Any) -> AnthropicSummarizer | OpenAISummarizer:
        """A summarizer pointed at the server, with a test key; ``options`` override any setting."""
        settings: dict[str, Any] = {"base_url": self.server.base_url, "model": self.model, "api_key": "test-key"}
        settings.update(options)
        return self.summarizer(**settings)

    def key_of(self, request: Received) -> str:
        """The key a request carried as a bearer token."""
        return request.headers["authorization"].removeprefix("Bearer ")

    def system_of(self, request: Received) -> str:
        raise NotImplementedError

    def prompt_of(self, request: Received) -> str:
        raise NotImplementedError


class AnthropicClient(Client):
    def key_of(self, request: Received) -> str:
        """The key a request carried: SDK versions send it as x-api-key or as a bearer token."""
        if "x-api-key" in request.headers:
            return request.headers["x-api-key"]
        return super().key_of(request)

    def system_of(self, request: Received) -> str:
        system = request.body["system"]
        assert isinstance(system, str)
        return system

    def prompt_of(self, request: Received) -> str:
        """The one user message's text; the system prompt travels beside the messages."""
        messages = request.body["messages"]
        assert [m["role"] for m in messages] == ["user"]
        content = messages[0]["content"]
        assert isinstance(content, str)
        return content


class OpenAIClient(Client):
    def system_of(self, request: Received) -> str:
        system = request.body["messages"][0]["content"]
        assert isinstance(system, str)
        return system

    def prompt_of(self, request: Received) -> str:
        """The user message's text; a system message comes first."""
        system, user = request.body["messages"]
        assert system["role"] == "system" and user["role"] == "user"
        content = user["content"]
        assert isinstance(content, str)
        return content


@pytest.fixture
def anthropic_client(anthropic_server: AnthropicServer) -> AnthropicClient:
    return AnthropicClient(
        name="anthropic",
        server=anthropic_server,
        summarizer=AnthropicSummarizer,
        model="claude-sonnet-4-6",
        provider_key_env="ANTHROPIC_API_KEY",
    )


@pytest.fixture
def openai_client(openai_server: OpenAIServer) -> OpenAIClient:
    return OpenAIClient(
        name="openai",
        server=openai_server,
        summarizer=OpenAISummarizer,
        model="qwen2.5-coder:7b",
        provider_key_env="OPENAI_API_KEY",
    )


@pytest.fixture(params=["anthropic", "openai"])
def client(request: pytest.FixtureRequest) -> Client:
    """Each protocol in turn, for the behaviour both summarizers share."""
    chosen: Client = request.getfixturevalue(f"{request.param}_client")
    return chosen


@pytest.fixture
def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _conversation(rounds: int) -> list[Message]:
    messages: list[Message] = []
    for n in range(rounds):
        messages.append(Message(role="user", content=f"Request {n}: please edit src/module_{n}.py"))
        messages.append(
            Message(
                role="assistant",
                content=[
                    TextBlock(text=f"Reading module {n}."),
                    ToolUseBlock(id=f"toolu_{n:03d}", name="Read", input={"file_path": f"src/module_{n}.py"}),
                ],
            )
        )
        messages.append(
            Message(
                role="user",
                content=[ToolResultBlock(tool_use_id=f"toolu_{n:03d}", content=f"def f{n}():\n    return {n}\n")],
            )
        )
        messages.append(Message(role="assistant", content=f"Module {n} edited."))
    return messages


@pytest.fixture
def conversation() -> list[Message]:
    """Six prompts, each with a Read call, its result and an answer: twelve API rounds."""
    return _conversation(6)


@pytest.fixture
def good_answer() -> str:
    """A well-formed answer: an analysis scratchpad, then the nine sections in a summary."""
    return (
        "<analysis>\nThe user asked for six edits; this scratch work is not kept.\n</analysis>\n\n"
        "<summary>\n"
        "1. Primary Request and Intent:\n   The user asked to edit src/module_0.py to src/module_5.py.\n\n"
        "2. Key Technical Concepts:\n   - Python modules\n\n"
        "3. Files and Code Sections:\n   - src/module_5.py\n     - def f5(): return 5\n\n"
        "4. Errors and fixes:\n   None.\n\n"
        "5. Problem Solving:\n   All six edits went through.\n\n"
        "6. All user messages:\n   - Request 0: please edit src/module_0.py\n\n"
        "7. Pending Tasks:\n   None.\n\n"
        "8. Current Work:\n   Module 5 was edited last.\n\n"
        "9. Optional Next Step:\n   None.\n"
        "</summary>"
    )
