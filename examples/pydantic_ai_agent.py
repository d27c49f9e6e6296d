"""A pydantic-ai agent whose history is compacted, run offline with a scripted model.

Run it with ``python examples/pydantic_ai_agent.py`` (needs the ``pydantic-ai``
extra). The scripted model runs a build 14 times (each log about 3,000
tokens); after the first compaction it asks ``ccr_retrieve`` for a dropped
log by a word only that log holds, and answers with the line it got back. The context window is set small so that compaction
fires; each compaction's report is printed.
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from ccr import open_store
from compactor.adapters.pydantic_ai import PydanticAICompaction
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

BUILDS = 14


def build_log(turn: int) -> str:
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500 + f"{turn} tests passed\n"


class ScriptedModel:
    """Runs the build BUILDS times; after the first compaction it asks for build 3's log back."""

    def __init__(self) -> None:
        self.builds = 0
        self.recovered: str | None = None

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart) and last.tool_name == "ccr_retrieve":
            found = re.search(r"make test TURN=3 [^\\\n]*", str(last.content))
            self.recovered = found.group(0) if found else "(not found)"
        text = " ".join(str(getattr(p, "content", "")) for m in messages for p in m.parts)
        handle = re.search(r"ccr_[0-9a-f]{32}", text)
        if handle is not None and self.recovered is None:
            call = {"handle": handle.group(0), "query": "b0003x"}
            return ModelResponse(parts=[ToolCallPart(tool_name="ccr_retrieve", args=call)])
        if self.builds < BUILDS:
            self.builds += 1
            return ModelResponse(parts=[ToolCallPart(tool_name="run_build", args={"turn": self.builds})])
        return ModelResponse(parts=[TextPart(content=f"all {BUILDS} builds pass; recovered: {self.recovered}")])


def report_line(report: CompactionReport) -> None:
    print(
        f"compacted {report.pre_tokens:,} -> {report.post_tokens:,} tokens "
        f"({len(report.dropped)} spans stored, summary {report.summary_tokens:,} tokens)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="compactor-example-") as tmp:
        settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
        session = Orchestrator(settings=settings, store=open_store(Path(tmp) / "ccr.db"))
        compaction = PydanticAICompaction(session, on_compaction=report_line)
        agent = Agent(
            FunctionModel(ScriptedModel()), capabilities=[compaction.capability], tools=[compaction.recovery_tool]
        )

        @agent.tool_plain
        def run_build(turn: int) -> str:
            """Run the test suite and return its log."""
            return build_log(turn)

        result = asyncio.run(agent.run("Make the test suite pass."))
        print(f"answer: {result.output}")
        print(f"compactions: {len(compaction.reports)}, messages kept: {len(result.all_messages())}")
        print("last compaction report:", compaction.reports[-1].model_dump_json(exclude={"summary", "context"}))


if __name__ == "__main__":
    main()
