"""The background LLM summary: compaction that is instant and written by a model.

An agent loop against a fake OpenAI-compatible model on 127.0.0.1 that
answers each summary request after 2 s, the agent's own model "thinking"
0.5 s a turn. The Orchestrator summarizes the aged-out head in the
background while the loop runs; each compaction is timed as the loop sees
it (``maybe_compact``), and its report read:

- p50 and max compaction time, as ratios against 300 ms and 1,000 ms;
- the share of compactions whose summary carries the model's text
  (``summary_sources`` has an ``llm`` part), against 80%;
- the share of compactions that were ok with every dropped span retrievable
  byte for byte from CCR, against 100%.

With the model down (nothing listens on its port), compaction against the
same conversation with the extractive summarizer, interleaved: the ratio of
their times (as fast as extractive: at most 1.25x), and the share of those
compactions whose report says the model could not be reached.

Run ``python benchmarks/bench_background_summary.py`` (or ``run.py --only background_summary``).
"""

from __future__ import annotations

import json
import socket
import statistics
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from _common import Figure, interleaved, main

MODEL_SECONDS = 2.0
"""How long the fake summary model takes to answer."""
THINK_SECONDS = 0.5
"""How long the agent's own model takes per turn."""

ANSWER = (
    "<summary>\n1. Primary Request and Intent:\n   Make the build pass (written by the model).\n\n"
    "8. Current Work:\n   Running the build again.\n</summary>"
)


class _FakeModel:
    """An OpenAI-compatible chat completions endpoint on 127.0.0.1 that answers after a latency."""

    def __init__(self, latency: float) -> None:
        latency_seconds = latency
        stopping = threading.Event()
        self.stopping = stopping

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                stopping.wait(latency_seconds)
                payload = json.dumps(
                    {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "fake",
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": ANSWER}}
                        ],
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                return

        self.server = Server(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _orchestrator(folder: Path, name: str, base_url: str | None) -> Any:
    from ccr import open_store
    from compactor.core.config import load_settings
    from compactor.core.tokens import RoughCounter
    from compactor.engine.orchestrator import Orchestrator
    from compactor.summarizers.openai import OpenAISummarizer

    settings = load_settings(env={}, overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 2_000})
    summarizer = (
        None
        if base_url is None
        else OpenAISummarizer(base_url=base_url, model="fake", api_key="bench", timeout_seconds=30)
    )
    return Orchestrator(
        settings=settings, store=open_store(folder / f"{name}.db"), counter=RoughCounter(), summarizer=summarizer
    )


def _turn(orch: Any, i: int) -> None:
    from compactor.core.messages import Message, TextBlock, ToolUseBlock

    orch.add_message(Message(role="user", content=f"step {i}: run the build and fix what fails"))
    orch.add_message(
        Message(
            role="assistant",
            content=[
                TextBlock(text=f"Running build {i}."),
                ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"make test TURN={i}"}),
            ],
        )
    )
    orch.add_tool_result(f"t{i}", f"build {i}: 3 tests failed in src/mod_{i % 7}.py\n" + f"line {i}\n" * 1_000)
    orch.add_message(Message(role="assistant", content=f"Build {i} looked at; fixing src/mod_{i % 7}.py next."))


def _recoverable(orch: Any, result: Any) -> bool:
    if not result.ok:
        return False
    return all(len(orch.retrieve(span.handle).data) == span.bytes for span in result.report.dropped)


def _agent_loop(folder: Path, compactions: int) -> tuple[list[float], list[Any], list[bool]]:
    """Seconds of each compaction, its report, and whether it was ok with everything recoverable."""
    model = _FakeModel(MODEL_SECONDS)
    seconds: list[float] = []
    reports: list[Any] = []
    whole: list[bool] = []
    try:
        with _orchestrator(folder, "loop", model.base_url) as orch:
            turn = 0
            while len(seconds) < compactions:
                time.sleep(THINK_SECONDS)  # the agent's model answering
                _turn(orch, turn)
                turn += 1
                start = time.perf_counter()
                result = orch.maybe_compact()
                took = time.perf_counter() - start
                if result is not None:
                    seconds.append(took)
                    reports.append(result.report)
                    whole.append(_recoverable(orch, result))
    finally:
        model.close()
    return seconds, reports, whole


def _down_ratios(folder: Path, runs: int) -> tuple[list[float], list[bool]]:
    """Compaction with the model down against extractive, interleaved; and whether each report says so."""
    said: list[bool] = []
    port = _closed_port()
    counter = iter(range(10_000))

    def fresh(base_url: str | None) -> Any:
        orch = _orchestrator(folder, f"down-{next(counter)}", base_url)
        for i in range(30):
            _turn(orch, i)
        return orch

    pairs: list[tuple[Any, Any]] = [(fresh(f"http://127.0.0.1:{port}/v1"), fresh(None)) for _ in range(runs + 1)]
    subjects = iter(p[0] for p in pairs)
    baselines = iter(p[1] for p in pairs)

    def down() -> None:
        orch = next(subjects)
        result = orch.compact("auto")
        sources = result.report.summary_sources
        said.append(result.ok and bool(sources) and "could not reach" in sources[0].reason)

    def extractive() -> None:
        next(baselines).compact("auto")

    ratios = interleaved(down, extractive, runs=runs, warmup=1)
    for subject, baseline in pairs:
        subject.close()
        baseline.close()
    return ratios, said[1:]


def _coverage(report: Any) -> str:
    """``model 0-41 + extractive 42-57`` for one report's sources."""
    return " + ".join(
        f"{'model' if s.source == 'llm' else s.source} {s.first}-{s.last}" for s in report.summary_sources
    )


def figures(quick: bool = False) -> list[Figure]:
    compactions = 3 if quick else 6
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        seconds, reports, whole = _agent_loop(folder, compactions)
        down, said = _down_ratios(folder, 3 if quick else 7)
    llm = [any(s.source == "llm" for s in r.summary_sources) for r in reports]
    ms = [round(s * 1000) for s in seconds]
    detail = (
        f"{len(ms)} compactions, ms: {ms}; model answers after {MODEL_SECONDS:g} s, thinks {THINK_SECONDS:g} s/turn"
    )
    return [
        Figure("p50 compaction / 300 ms (model 2 s)", [s / 0.3 for s in seconds], 1.0, "<=", detail),
        Figure("max compaction / 1,000 ms (model 2 s)", [max(seconds) / 1.0], 1.0, "<="),
        Figure(
            "share of summaries with the model's text",
            [sum(llm) / len(llm)],
            0.8,
            ">=",
            f"{sum(llm)} of {len(llm)}; messages of each head: " + ", ".join(_coverage(r) for r in reports),
        ),
        Figure("share of compactions ok, every dropped byte recoverable", [sum(whole) / len(whole)], 1.0, ">="),
        Figure(
            "model down: compaction / extractive compaction", down, 1.25, "<=", f"median {statistics.median(down):.2f}x"
        ),
        Figure("model down: share of reports that say so", [sum(said) / max(len(said), 1)], 1.0, ">="),
    ]


if __name__ == "__main__":
    raise SystemExit(main(figures))
