"""An OpenAI Agents SDK agent with a compacting session, run offline with a scripted model.

Run it with ``python examples/openai_agents_session.py`` (needs the
``openai-agents`` extra). The scripted model runs a build 14 times (each log
about 3,000 tokens); after the first compaction it asks ``ccr_retrieve`` for
a dropped log by a word only that log holds. A second run continues from the
session. The context window is set small so that compaction fires; each
compaction's report is printed. Tracing is off: nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from ccr import open_store
from compactor.adapters.openai_agents import CompactingSession
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

BUILDS = 14


class ScriptedModel(Model):
    """Runs the build BUILDS times; after the first compaction it asks for build 3's log back."""

    def __init__(self) -> None:
        self.builds = 0
        self.recovered: str | None = None

    async def get_response(
        self, system_instructions: str | None, input: str | list[TResponseInputItem], *args: Any, **kwargs: Any
    ) -> ModelResponse:
        items: list[Any] = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        last = items[-1]
        if last.get("type") == "function_call_output" and last.get("call_id", "").startswith("recover"):
            found = re.search(r"make test TURN=3 [^\\\n]*", str(last.get("output")))
            self.recovered = found.group(0) if found else "(not found)"
        handle = re.search(r"<<ccr:(ccr_[0-9a-f]{32})>>", json.dumps(items))
        if handle is not None and self.recovered is None:
            call = {"handle": handle.group(1), "query": "b0003x"}
            return self._call("ccr_retrieve", call, "recover")
        if self.builds < BUILDS:
            self.builds += 1
            return self._call("run_build", {"turn": self.builds}, f"build{self.builds}")
        text = f"all {BUILDS} builds pass; recovered: {self.recovered}"
        message = ResponseOutputMessage(
            id="msg",
            role="assistant",
            status="completed",
            type="message",
            content=[ResponseOutputText(text=text, type="output_text", annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def _call(self, name: str, arguments: dict[str, Any], call_id: str) -> ModelResponse:
        call = ResponseFunctionToolCall(
            type="function_call",
            name=name,
            arguments=json.dumps(arguments),
            call_id=call_id,
            id=f"fc_{call_id}",
            status="completed",
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("this example does not stream")


@function_tool
def run_build(turn: int) -> str:
    """Run the test suite and return its log."""
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500 + f"{turn} tests passed\n"


def report_line(report: CompactionReport) -> None:
    print(
        f"compacted {report.pre_tokens:,} -> {report.post_tokens:,} tokens "
        f"({len(report.dropped)} spans stored, summary {report.summary_tokens:,} tokens)"
    )


async def main() -> None:
    set_tracing_disabled(True)
    with tempfile.TemporaryDirectory(prefix="compactor-example-") as tmp:
        settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
        orchestrator = Orchestrator(settings=settings, store=open_store(Path(tmp) / "ccr.db"))
        session = CompactingSession("build-fixer", orchestrator, on_compaction=report_line)
        agent = Agent(name="fixer", model=ScriptedModel(), tools=[run_build, session.recovery_tool])
        config = RunConfig(call_model_input_filter=session.input_filter, tracing_disabled=True)
        result = await Runner.run(agent, "Make the test suite pass.", session=session, run_config=config, max_turns=50)
        print(f"answer: {result.final_output}")
        again = await Runner.run(agent, "Anything left?", session=session, run_config=config, max_turns=50)
        print(f"second run: {again.final_output}")
        print(f"compactions: {len(session.reports)}, items stored: {len(await session.get_items())}")
        print("last compaction report:", session.reports[-1].model_dump_json(exclude={"summary", "context"}))


if __name__ == "__main__":
    asyncio.run(main())
