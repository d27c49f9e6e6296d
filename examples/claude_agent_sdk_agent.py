"""A Claude Agent SDK agent whose compactions are stored in CCR, run offline against a scripted API.

Run it from a checkout with ``python examples/claude_agent_sdk_agent.py``
(needs the ``claude-agent-sdk`` extra and a Claude Code client: the one
``npm ci --prefix tests/e2e`` installs, the SDK's bundled one, or the binary
named by ``COMPACTOR_E2E_CLAUDE``). The model is the fake Messages API of
the end-to-end tests, on 127.0.0.1: it reads a notes file, then reports a
nearly full context, so Claude Code compacts on its own. The PreCompact
callback stores the conversation; the SessionStart reminder names it; the
model loads ``mcp__ccr__ccr_retrieve`` with ToolSearch and fetches a line
the summary left out. Nothing leaves the machine.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from ccr import marker

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))
from fake_api import Call, FakeAnthropic, Say, last_tool_result, request_text
from harness import client_binary

EXTRA = "claude-agent-sdk"
"""The extra that installs the SDK (and anyio, which it runs on)."""

NOTES = "".join(f"{i:04d} the deploy key rotates on day {i % 28 + 1}\n" for i in range(400))
RETRIEVE = "mcp__ccr__ccr_retrieve"


def script(notes: Path) -> list[Any]:
    """The scripted model: read, report a nearly full context, then recover a line after the compaction."""

    def retrieve_from_the_reminder(body: dict[str, Any]) -> Call:
        reminder = next(p for p in request_text(body).split("\n") if "just compacted" in p)
        handle = reminder[reminder.index("<<ccr:") :].split(">>")[0] + ">>"
        return Call(RETRIEVE, {"handle": handle, "query": "rotates on day 17"})

    def answer(body: dict[str, Any]) -> Say:
        found = re.search(r"\d{4} the deploy key rotates on day 17\b", last_tool_result(body))
        return Say(f"recovered: {found.group(0) if found else '(not found)'}")

    return [
        Call("Read", {"file_path": str(notes)}),
        Call("Bash", {"command": "ls", "description": "List"}, usage=190_000),  # the context is nearly full
        Call("ToolSearch", {"query": f"select:{RETRIEVE}"}),
        retrieve_from_the_reminder,
        answer,
    ]


async def main() -> None:
    with tempfile.TemporaryDirectory(prefix="compactor-sdk-") as folder:
        await run(Path(folder))


async def run(root: Path) -> None:
    """One session in ``root``: its own HOME (the client's sessions), COMPACTOR_HOME and project."""
    from claude_agent_sdk import AssistantMessage, ClaudeAgentOptions, SystemMessage, TextBlock, query

    from compactor.adapters.claude_agent_sdk import ClaudeAgentSDKCompaction

    (root / "home").mkdir()
    project = root / "project"
    project.mkdir()
    notes = project / "notes.txt"
    notes.write_text(NOTES)
    compaction = ClaudeAgentSDKCompaction(home=root / "compactor-home")
    binary = client_binary()
    with FakeAnthropic(script=script(notes)) as api:
        options = compaction.apply(
            ClaudeAgentOptions(
                cli_path=str(binary) if binary else None,
                cwd=str(project),
                setting_sources=[],
                allowed_tools=["Read", "Bash"],
                env={
                    "HOME": str(root / "home"),
                    "ANTHROPIC_BASE_URL": api.url,
                    "ANTHROPIC_API_KEY": "sk-ant-offline",
                    "CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200000",
                    "MCP_CONNECTION_NONBLOCKING": "0",
                    "DISABLE_TELEMETRY": "1",
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                },
            )
        )
        prompt = "read the notes, list the folder, then tell me when the key rotates on day 17"
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, SystemMessage) and message.subtype == "compact_boundary":
                meta = message.data.get("compact_metadata", {})
                print(f"compacted ({meta.get('trigger')}, {meta.get('pre_tokens'):,} tokens before)")
            elif isinstance(message, AssistantMessage):
                for block in message.content:
                    if isinstance(block, TextBlock) and block.text.startswith("recovered:"):
                        print(block.text)
    for record in compaction.records:
        print(f"stored {record.messages} messages ({record.bytes:,} bytes) under {marker(record.head_handle or '')}")
    if compaction.records:
        print(
            "last compaction record:", compaction.records[-1].model_dump_json(include={"trigger", "messages", "bytes"})
        )


def _sdk_missing() -> str | None:
    """The package of the extra that is not installed, if one is not."""
    try:
        import anyio  # noqa: F401
        import claude_agent_sdk  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name in ("anyio", "claude_agent_sdk"):
            return exc.name
        raise
    return None


if __name__ == "__main__":
    missing = _sdk_missing()
    if missing is not None:  # say so in one line, not with a traceback
        print(
            f"{Path(__file__).name}: usage_error: this example needs the Claude Agent SDK ({missing} is not "
            f"installed): pip install 'context-compactor[{EXTRA}]'",
            file=sys.stderr,
        )
        sys.exit(2)
    import anyio

    anyio.run(main)
