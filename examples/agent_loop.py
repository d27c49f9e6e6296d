"""A scripted agent loop run offline through the Orchestrator.

Run it with ``python examples/agent_loop.py``. A fake "model" reads files
and runs builds; the context window is set small so that compaction fires
after a few turns. Each compaction's report is printed, then the "model"
calls the recovery tool to get a dropped build log back by query.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ccr import open_store
from ccr.recovery import RECOVERY_TOOL
from compactor.core.config import load_settings
from compactor.core.messages import Message, TextBlock, ToolUseBlock
from compactor.engine.orchestrator import Orchestrator


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="compactor-example-") as tmp:
        run(Path(tmp))


def run(workdir: Path) -> None:
    source = workdir / "app.py"
    source.write_text("".join(f"def handler_{i}(request):\n    return {i}\n\n" for i in range(200)))

    settings = load_settings(overrides={"policy.context_window": 60_000, "pipeline.tail_tokens": 3_000})
    orch = Orchestrator(settings=settings, store=open_store(workdir / "ccr.db"))

    orch.add_message(Message(role="user", content=f"Make every handler in {source} return a dict."))
    for turn in range(40):
        read_id, build_id = f"read{turn}", f"build{turn}"
        orch.add_message(
            Message(
                role="assistant",
                content=[
                    ToolUseBlock(id=read_id, name="Read", input={"file_path": str(source)}),
                ],
            )
        )
        orch.add_tool_result(read_id, source.read_text())
        orch.add_message(
            Message(
                role="assistant",
                content=[
                    ToolUseBlock(id=build_id, name="Bash", input={"command": f"make test TURN={turn}"}),
                ],
            )
        )
        orch.add_tool_result(build_id, f"turn {turn}: " + "ok\n" * 1500 + f"{turn} tests passed\n")
        orch.add_message(Message(role="assistant", content=[TextBlock(text=f"Turn {turn}: {turn} tests pass.")]))

        result = orch.maybe_compact()
        if result is not None:
            report = result.report
            print(
                f"turn {turn}: compacted {report.pre_tokens:,} -> {report.post_tokens:,} tokens "
                f"({len(report.dropped)} spans stored, {len(report.attachments)} attachments)"
            )
            head = report.dropped[0].handle
            # The model would call the recovery tool (RECOVERY_TOOL in its request's tools):
            needle = f"TURN={turn - 4}"
            call = {"handle": f"<<ccr:{head}>>", "query": needle}
            orch.add_message(
                Message(
                    role="assistant",
                    content=[
                        ToolUseBlock(id=f"recover{turn}", name=RECOVERY_TOOL["name"], input=call),
                    ],
                )
            )
            answer = orch.answer_recovery_call(f"recover{turn}", call)
            line = next(ln for ln in answer.tool_results()[0].text().splitlines() if needle in ln)
            at = line.index(needle)
            print(f"  asked {head} for {needle!r}: ...{line[max(at - 40, 0) : at + 50]}...")

    print(f"final context: {orch.context_tokens():,} tokens, dedup hits: {sum(orch.state.dedup.hits.values())}")


if __name__ == "__main__":
    main()
