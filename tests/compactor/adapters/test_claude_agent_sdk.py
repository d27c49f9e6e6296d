"""The Claude Agent SDK integration: the real SDK drives the real client against a fake API on 127.0.0.1.

The client is the pinned one the end-to-end suite installs (``npm ci
--prefix tests/e2e``), given to the SDK as ``cli_path``; the fake Messages
API is the end-to-end suite's. One session (module fixture): a Read and an
answer, ``/compact`` with instructions, then a turn that loads the
``ccr`` tools with ToolSearch and calls them. Skipped when the SDK or the
client is not installed.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("claude_agent_sdk")

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, HookMatcher
from claude_agent_sdk.types import HookContext, SyncHookJSONOutput, SystemMessage

from ccr import open_store
from compactor.adapters.claude_agent_sdk import ClaudeAgentSDKCompaction, mcp_tool_name
from compactor.claude_code.hooks import CLIENT_RETRIEVE_TOOL, kept_uuids, load_session_record
from compactor.claude_code.transcript import read_transcript
from compactor.core.errors import CompactorError, UsageError
from compactor.engine.spans import messages_jsonl

E2E = Path(__file__).resolve().parents[2] / "e2e"
sys.path.insert(0, str(E2E))

from fake_api import Call, FakeAnthropic, LoggedRequest, Say, request_text  # noqa: E402
from harness import CLIENT_VERSION, client_binary  # noqa: E402

RETRIEVE = "mcp__ccr__ccr_retrieve"
STATS = "mcp__ccr__ccr_stats"
MARKER = re.compile(r"<<ccr:(ccr_[0-9a-f]{32})>>")
NOTES = "".join(f"{i:04d} the deploy key rotates on day {i % 28 + 1}\n" for i in range(400))
REMINDER = "This conversation was just compacted"

_BINARY = client_binary()
needs_client = pytest.mark.skipif(
    _BINARY is None or not _BINARY.exists(),
    reason=f"the Claude Code client is not installed: run `npm ci --prefix tests/e2e` (pins {CLIENT_VERSION})",
)


@dataclass
class SdkSession:
    """What one SDK session left behind: the fake API's log, the messages, the adapter and the folders."""

    root: Path
    api: FakeAnthropic
    compaction: ClaudeAgentSDKCompaction
    messages: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    saved: dict[str, Any] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    def transcript(self) -> Path:
        (path,) = sorted((self.home / ".claude" / "projects").glob("*/*.jsonl"))
        return path

    def stored(self, handle: str) -> bytes:
        with open_store(self.compaction.home / "ccr.db") as store:
            return store.get(handle)

    def main_requests(self) -> list[LoggedRequest]:
        return self.api.of_kind("main")


def _options(session: SdkSession) -> ClaudeAgentOptions:
    assert _BINARY is not None
    env = {
        "HOME": str(session.home),
        "ANTHROPIC_BASE_URL": session.api.url,
        "ANTHROPIC_API_KEY": "sk-ant-test-key",
        "DISABLE_TELEMETRY": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "MCP_CONNECTION_NONBLOCKING": "0",
    }
    options = ClaudeAgentOptions(
        cli_path=str(_BINARY),
        cwd=str(session.project),
        env=env,
        setting_sources=[],
        allowed_tools=["Read"],
        stderr=session.errors.append,
    )
    return session.compaction.apply(options)


async def _turn(client: ClaudeSDKClient, session: SdkSession, prompt: str) -> None:
    await client.query(prompt)
    async for message in client.receive_response():
        session.messages.append(message)


@pytest.fixture(scope="module")
def sdk_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SdkSession]:
    """Work, ``/compact keep the deploy key schedule``, then a turn that retrieves from what was stored."""
    if _BINARY is None or not _BINARY.exists():
        pytest.skip("the Claude Code client is not installed")
    root = tmp_path_factory.mktemp("sdk")
    (root / "home").mkdir()
    (root / "project").mkdir()
    notes = root / "project" / "notes.txt"
    notes.write_text(NOTES)

    def retrieve_what_the_reminder_names(body: dict[str, Any]) -> Call:
        reminder = next(p for p in request_text(body).split("\n") if REMINDER in p)
        found = MARKER.search(reminder)
        assert found is not None, reminder
        return Call(RETRIEVE, {"handle": found.group(1), "query": "deploy key rotates on day 17"})

    api = FakeAnthropic(
        script=[
            Call("Read", {"file_path": str(notes)}),
            Say("I read the notes."),
            Call("ToolSearch", {"query": f"select:{RETRIEVE},{STATS}"}),
            retrieve_what_the_reminder_names,
            Call(STATS, {}),
            Say("Checked."),
        ]
    )
    with api:
        session = SdkSession(root, api, ClaudeAgentSDKCompaction(home=root / "compactor-home"))

        async def run() -> None:
            async with ClaudeSDKClient(options=_options(session)) as client:
                await _turn(client, session, "read the notes")
                await _turn(client, session, "/compact keep the deploy key schedule")
                session.saved["record"] = load_session_record(session.transcript().stem, session.compaction.home)
                await _turn(client, session, "check the stored notes")
                await _turn(client, session, "/compact")

        anyio.run(run)
        assert not api.script_errors, api.script_errors
        yield session


@needs_client
def test_a_manual_compact_runs_the_pre_compact_callback_which_stores_what_is_summarized_byte_exact(
    sdk_session: SdkSession,
) -> None:
    boundaries = [m for m in sdk_session.messages if isinstance(m, SystemMessage) and m.subtype == "compact_boundary"]
    assert len(boundaries) == 2
    assert not any("Error in hook callback" in line for line in sdk_session.errors)
    failed = [
        m for m in sdk_session.messages if isinstance(m, SystemMessage) and m.data.get("tag") == "hook_callback_failed"
    ]
    assert not failed, failed
    record = sdk_session.compaction.records[0]
    after = sdk_session.saved["record"]
    assert after.compact_summary is not None, "the PostCompact callback notes the summary"
    assert record == after.model_copy(update={"compact_summary": None})
    assert record.trigger == "manual"
    transcript = read_transcript(sdk_session.transcript())
    summarized = transcript.messages[: transcript.compactions[0].message_index]
    assert record.head_handle is not None and record.messages == len(summarized)
    assert sdk_session.stored(record.head_handle) == messages_jsonl(summarized)
    (notes,) = [r for r in record.results if r.what.endswith("notes.txt")]
    assert "0016 the deploy key rotates on day 17" in sdk_session.stored(notes.handle).decode()


@needs_client
def test_the_next_compaction_settles_the_first_to_exactly_what_it_dropped(sdk_session: SdkSession) -> None:
    first, second = sdk_session.compaction.records
    transcript = read_transcript(sdk_session.transcript())
    boundary = transcript.compactions[0]
    summarized = transcript.messages[: boundary.message_index]
    kept = kept_uuids(transcript, 0)
    dropped = list(summarized)
    while dropped and dropped[-1].uuid in kept:
        dropped.pop()
    assert 0 < len(dropped) < len(summarized), "the client keeps its last messages verbatim; else this means less"
    assert second.earlier_heads == [first.head_handle], "the earlier head is the one the summarizer saw"
    (settled,) = second.earlier_dropped
    assert settled != first.head_handle
    assert sdk_session.stored(settled) == messages_jsonl(dropped)
    assert second.trigger == "manual" and second.head_handle not in (first.head_handle, settled)


@needs_client
def test_the_post_compact_callback_records_claude_codes_summary(sdk_session: SdkSession) -> None:
    record = load_session_record(sdk_session.transcript().stem, sdk_session.compaction.home)
    assert record is not None and record.head_handle == sdk_session.compaction.records[-1].head_handle
    assert record.compact_summary is not None and sdk_session.api.summary_text in record.compact_summary
    assert "PostCompact" in sdk_session.compaction.hooks


@needs_client
def test_the_summarizer_gets_the_callbacks_instructions_after_the_users_naming_the_sdk_tool(
    sdk_session: SdkSession,
) -> None:
    text = request_text(sdk_session.api.of_kind("compaction")[0].body)
    record = sdk_session.saved["record"]
    assert text.index("keep the deploy key schedule") < text.index("For whoever writes the summary")
    assert f"<<ccr:{record.head_handle}>>" in text
    assert all(f"<<ccr:{r.handle}>>" in text for r in record.results)
    assert f"select:{RETRIEVE}" in text and CLIENT_RETRIEVE_TOOL not in text


@needs_client
def test_the_session_start_reminder_reaches_the_next_request(sdk_session: SdkSession) -> None:
    after = sdk_session.main_requests()[2]
    reminders = [p for p in request_text(after.body).split("\n") if REMINDER in p]
    assert len(reminders) == 1
    record = sdk_session.saved["record"]
    assert f"<<ccr:{record.head_handle}>>" in reminders[0]
    assert f'ToolSearch with the query "select:{RETRIEVE}"' in reminders[0]
    before = sdk_session.main_requests()[:2]
    assert not any(REMINDER in request_text(r.body) for r in before)


@needs_client
def test_the_ccr_and_memory_tools_are_listed_from_the_first_request_and_answer(sdk_session: SdkSession) -> None:
    first = request_text(sdk_session.main_requests()[0].body)
    for tool in (
        RETRIEVE,
        STATS,
        mcp_tool_name("memory", "cavemem_recall"),
        mcp_tool_name("memory", "cavemem_remember"),
    ):
        assert tool in first, f"{tool} not offered: the first request went out before the servers were ready"
    last = sdk_session.main_requests()[-1].body
    assert RETRIEVE in [tool["name"] for tool in last["tools"]]
    ((_, found, error),) = sdk_session.api.tool_results(RETRIEVE)
    assert not error, found
    head = sdk_session.stored(sdk_session.saved["record"].head_handle).decode()
    assert "day 17" in found and "omitted" in found and len(found) < len(head)
    ((_, stats, error),) = sdk_session.api.tool_results(STATS)
    assert not error and json.loads(stats)["entries"] >= 2


# -- without a client: the callbacks and the options ------------------------------------------


_CONTEXT: HookContext = {"signal": None}


def test_a_pre_compact_that_cannot_store_answers_nothing_and_says_why(tmp_path: Path) -> None:
    said: list[tuple[CompactorError, str]] = []
    compaction = ClaudeAgentSDKCompaction(home=tmp_path, on_error=lambda exc, what: said.append((exc, what)))
    hook = {
        "session_id": "s-1",
        "transcript_path": str(tmp_path / "missing.jsonl"),
        "cwd": str(tmp_path),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": None,
    }
    answer: SyncHookJSONOutput = anyio.run(compaction.pre_compact, hook, None, _CONTEXT)
    assert answer == {}
    ((exc, what),) = said
    assert exc.error_id == "input_not_found" and "without a stored copy" in what
    assert compaction.records == []


def test_session_start_answers_nothing_unless_the_session_was_just_compacted(tmp_path: Path) -> None:
    compaction = ClaudeAgentSDKCompaction(home=tmp_path)
    for source in ("startup", "resume", "clear", "compact"):
        hook = {
            "session_id": "s-1",
            "transcript_path": str(tmp_path / "t.jsonl"),
            "cwd": str(tmp_path),
            "hook_event_name": "SessionStart",
            "source": source,
        }
        assert anyio.run(compaction.session_start, hook, None, _CONTEXT) == {}


def test_apply_adds_the_hooks_servers_and_tool_rules_and_keeps_the_callers_own(tmp_path: Path) -> None:
    async def mine(input: Any, tool_use_id: str | None, context: HookContext) -> SyncHookJSONOutput:
        return {}

    compaction = ClaudeAgentSDKCompaction(home=tmp_path, python="/opt/py/bin/python")
    theirs = HookMatcher(hooks=[mine])
    options = ClaudeAgentOptions(
        hooks={"PreCompact": [theirs]},
        allowed_tools=["Read", "ToolSearch"],
        mcp_servers={"docs": {"type": "stdio", "command": "docs-server"}},
    )
    applied = compaction.apply(options)
    assert applied.hooks is not None
    assert applied.hooks["PreCompact"][0] is theirs and len(applied.hooks["PreCompact"]) == 2
    assert [m.matcher for m in applied.hooks["SessionStart"]] == ["compact"]  # type: ignore[index]
    assert applied.mcp_servers == {
        "docs": {"type": "stdio", "command": "docs-server"},
        "ccr": {
            "type": "stdio",
            "command": "/opt/py/bin/python",
            "args": ["-P", "-m", "ccr", "mcp"],
            "env": {"COMPACTOR_HOME": str(tmp_path)},
        },
        "memory": {
            "type": "stdio",
            "command": "/opt/py/bin/python",
            "args": ["-P", "-m", "compactor", "memory", "mcp"],
            "env": {"COMPACTOR_HOME": str(tmp_path)},
        },
    }
    assert applied.allowed_tools == ["Read", "ToolSearch", "mcp__ccr", "mcp__memory"]
    assert options.hooks == {"PreCompact": [theirs]} and "ccr" not in options.mcp_servers  # type: ignore[operator]
    assert compaction.retrieve_tool == "mcp__ccr__ccr_retrieve"


def test_apply_refuses_servers_it_cannot_merge(tmp_path: Path) -> None:
    compaction = ClaudeAgentSDKCompaction(home=tmp_path, memory_server=None)
    with pytest.raises(UsageError, match="config file"):
        compaction.apply(ClaudeAgentOptions(mcp_servers=str(tmp_path / "mcp.json")))
    with pytest.raises(UsageError, match="already has ccr"):
        compaction.apply(ClaudeAgentOptions(mcp_servers={"ccr": {"command": "other"}}))
    assert list(compaction.apply().mcp_servers) == ["ccr"]  # type: ignore[arg-type]
