"""A LangChain 1.x agent (``create_agent`` with middleware) whose history is compacted, run offline.

Run it with ``python examples/langchain_agent.py`` (needs the ``langchain``
extra). The scripted chat model runs a build 14 times (each log about 3,000
tokens); after the first compaction it asks ``ccr_retrieve`` (which the
middleware registers itself) for a dropped log by a word only that log
holds, and answers with the line it got back. The context window is set
small so that compaction fires; each compaction's report is printed.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

from ccr import open_store
from compactor.adapters.langchain_agent import CompactionMiddleware
from compactor.core.config import load_settings
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.report import CompactionReport

BUILDS = 14


class ScriptedChatModel(BaseChatModel):
    """Runs the build BUILDS times; after the first compaction it asks for build 3's log back."""

    builds: int = 0
    recovered: str | None = None

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._answer(messages))])

    def _answer(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage) and last.name == "ccr_retrieve":
            found = re.search(r"make test TURN=3 .*", str(last.content))  # the log comes back raw, line by line
            self.recovered = found.group(0) if found else "(not found)"
        handle = re.search(r"ccr_[0-9a-f]{32}", " ".join(str(m.content) for m in messages))
        if handle is not None and self.recovered is None:
            call = {"name": "ccr_retrieve", "args": {"handle": handle.group(0), "query": "b0003x"}, "id": "recover"}
            return AIMessage(content="", tool_calls=[call])
        if self.builds < BUILDS:
            self.builds += 1
            call = {"name": "run_build", "args": {"turn": self.builds}, "id": f"build{self.builds}"}
            return AIMessage(content="", tool_calls=[call])
        return AIMessage(content=f"all {BUILDS} builds pass; recovered: {self.recovered}")


@tool
def run_build(turn: int) -> str:
    """Run the test suite and return its log."""
    return f"make test TURN={turn} build-id b{turn:04d}x\n" + "ok line\n" * 1500 + f"{turn} tests passed\n"


def report_line(report: CompactionReport) -> None:
    print(
        f"compacted {report.pre_tokens:,} -> {report.post_tokens:,} tokens "
        f"({len(report.dropped)} spans stored, summary {report.summary_tokens:,} tokens)"
    )


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="compactor-example-") as tmp:
        settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 8_000})
        session = Orchestrator(settings=settings, store=open_store(Path(tmp) / "ccr.db"))
        compaction = CompactionMiddleware(session, on_compaction=report_line)
        agent = create_agent(ScriptedChatModel(), tools=[run_build], middleware=[compaction])
        state = agent.invoke({"messages": [("user", "Make the test suite pass.")]}, {"recursion_limit": 100})
        print(f"answer: {state['messages'][-1].content}")
        print(f"compactions: {len(compaction.reports)}, messages kept: {len(state['messages'])}")
        print("last compaction report:", compaction.reports[-1].model_dump_json(exclude={"summary", "context"}))


if __name__ == "__main__":
    main()
