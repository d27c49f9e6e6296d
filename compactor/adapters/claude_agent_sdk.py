"""Claude Agent SDK: the plugin's hooks as Python callbacks, and the ``ccr`` and ``memory`` MCP servers.

::

    compaction = ClaudeAgentSDKCompaction()
    options = compaction.apply(ClaudeAgentOptions(cwd="."))
    async for message in query(prompt="Fix the failing test", options=options): ...

The SDK runs Claude Code, which compacts on its own (``/compact``, or when
its context fills). What this adds is what the Claude Code plugin adds,
registered in Python instead of as hook commands:

- **PreCompact** (a ``HookMatcher`` callback): before Claude Code
  summarizes, the conversation since the last compaction is read from the
  session's transcript and stored in CCR byte for byte
  (``compactor.claude_code.hooks.pre_compact``). The callback answers
  ``{"systemMessage": <instructions>}``: for a PreCompact callback Claude
  Code takes ``systemMessage`` as extra summary instructions, appended after
  the user's ``/compact`` text, so the summarizer is asked to keep the
  stored conversation's marker and the markers of the largest tool results.
  After a manual ``/compact`` the same text is also shown in the
  conversation, as the plugin's stdout is. (A ``hookSpecificOutput`` is
  refused for PreCompact by the client, which then drops the whole answer.)
- **SessionStart** with source ``compact``: ``{"hookSpecificOutput":
  {"hookEventName": "SessionStart", "additionalContext": <reminder>}}``,
  which Claude Code adds to the context of the next request: where the
  conversation before the compaction is stored, and that
  ``mcp__ccr__ccr_retrieve`` (deferred: loaded with ToolSearch) brings any
  part of it back; with a memory store configured, the memories recalled
  for the last request too. ``SessionStart`` is not in the SDK's Python
  ``HookEvent`` type, but the client runs callbacks registered for it
  (tested with SDK 0.2.189 and its Claude Code 2.1.332). After an auto
  compaction only this reminder reaches the conversation, not the
  summary instructions.
- **PostCompact**: Claude Code's own summary (``compact_summary``) and the
  trigger are noted in the session's record (``compactor.claude_code.hooks.record_compact_summary``);
  the callback answers ``{}``. Like ``SessionStart``, the event is not in
  the SDK's ``HookEvent`` type, and the client runs it after SessionStart.
- **MCP servers** ``ccr`` and ``memory``: stdio servers started with the
  ``ccr mcp`` and ``compactor memory mcp`` commands of this Python, on the same
  ``COMPACTOR_HOME`` as the hooks. Claude Code names their tools
  ``mcp__ccr__ccr_retrieve``, ``mcp__ccr__ccr_stats``,
  ``mcp__memory__cavemem_recall`` and so on (``mcp__memory__memory_recall`` too, its old name, for one release).

As with the plugin, a hook never blocks a compaction: when storing fails
(a full store, an unreadable transcript) the callback says why on
``on_error`` (stderr by default) and answers ``{}``, and Claude Code
compacts without a stored copy.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

import anyio.to_thread
from claude_agent_sdk import ClaudeAgentOptions, HookContext, HookMatcher
from claude_agent_sdk.types import McpStdioServerConfig, SyncHookJSONOutput

from ccr.recovery import RECOVERY_TOOL_NAME
from compactor.claude_code.hooks import (
    DEFAULT_LISTED_RESULTS,
    HookInput,
    SessionRecord,
    forget_latest_head,
    load_session_record,
    parse_hook_input,
    record_compact_summary,
)
from compactor.claude_code.hooks import pre_compact as store_before_compaction
from compactor.claude_code.hooks import session_start as reminder_after_compaction
from compactor.core.errors import CompactorError, UsageError

__all__ = ["ClaudeAgentSDKCompaction", "mcp_tool_name"]

PRE_COMPACT_TIMEOUT_S = 120.0
"""As the plugin's hook: storing a long session (and loading the tokenizer) can take a while."""
SESSION_START_TIMEOUT_S = 30.0
POST_COMPACT_TIMEOUT_S = 30.0


def mcp_tool_name(server: str, tool: str) -> str:
    """The name Claude Code gives tool ``tool`` of an MCP server configured as ``server``."""
    return f"mcp__{server}__{tool}"


def _print_error(exc: CompactorError, what: str) -> None:
    print(f"compactor: {exc.error_id}: {exc} ({what})", file=sys.stderr)


class ClaudeAgentSDKCompaction:
    """The compactor hooks and MCP servers for ``ClaudeAgentOptions`` (see the module docstring).

    ``home`` is the ``COMPACTOR_HOME`` that the hooks and both servers use
    (default: ``$COMPACTOR_HOME`` as it is now, else ``~/.compactor``):
    the CCR store ``ccr.db``, the session records, and ``memory.db``.
    ``config`` is a settings file (else ``COMPACTOR_CONFIG``); settings are
    read in this process, when a hook runs. ``python`` runs the servers
    (default: this interpreter, which has compactor installed).
    """

    def __init__(
        self,
        *,
        home: Path | str | None = None,
        config: Path | None = None,
        python: str | None = None,
        ccr_server: str = "ccr",
        memory_server: str | None = "memory",
        limit: int = DEFAULT_LISTED_RESULTS,
        on_error: Callable[[CompactorError, str], None] = _print_error,
    ) -> None:
        from ccr import default_store_path

        self.home = Path(home).expanduser() if home is not None else default_store_path().parent
        self.config = config
        self.python = python or sys.executable
        self.ccr_server = ccr_server
        self.memory_server = memory_server
        self.limit = limit
        self.on_error = on_error
        self.records: list[SessionRecord] = []
        """What each PreCompact callback stored, in order (what the session-start reminder names)."""

    @property
    def retrieve_tool(self) -> str:
        """The recovery tool as the model sees it: ``mcp__ccr__ccr_retrieve``."""
        return mcp_tool_name(self.ccr_server, RECOVERY_TOOL_NAME)

    # -- the hook callbacks ---------------------------------------------------------

    async def pre_compact(
        self, input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
    ) -> SyncHookJSONOutput:
        """The PreCompact callback: store the conversation, answer the summary instructions as ``systemMessage``."""
        return await anyio.to_thread.run_sync(self._pre_compact, dict(input))

    def _pre_compact(self, data: dict[str, Any]) -> SyncHookJSONOutput:
        from ccr import open_store
        from compactor.core.config import load_settings
        from compactor.core.tokens import make_counter

        hook: HookInput | None = None
        try:
            hook = _hook_input(data)
            settings = load_settings(self.config)
            with open_store(self.home / "ccr.db") as store:
                text = store_before_compaction(
                    hook,
                    store,
                    counter=make_counter(settings.counter),
                    home=self.home,
                    recovery_tools=settings.dedup.recovery_tools,
                    limit=self.limit,
                    tool=self.retrieve_tool,
                )
            record = load_session_record(hook.session_id, self.home)
        except CompactorError as exc:
            self.on_error(exc, "the compaction goes on without a stored copy")
            if hook is not None:
                self._forget(hook)
            return {}
        if record is not None:
            self.records.append(record)
        return {"systemMessage": text}

    def _forget(self, hook: HookInput) -> None:
        try:
            forget_latest_head(hook.session_id, self.home)
        except CompactorError as exc:
            self.on_error(exc, "the session record may name an older conversation")

    async def session_start(
        self, input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
    ) -> SyncHookJSONOutput:
        """The SessionStart callback: after a compaction, the reminder as ``additionalContext``; else ``{}``."""
        return await anyio.to_thread.run_sync(self._session_start, dict(input))

    def _session_start(self, data: dict[str, Any]) -> SyncHookJSONOutput:
        from compactor.core.config import load_settings

        try:
            hook = _hook_input(data)
            if hook.source != "compact":
                return {}
            settings = load_settings(self.config)
            output = reminder_after_compaction(
                hook,
                home=self.home,
                memory_db=settings.pipeline.memory_db,
                memory_tokens=settings.attachments.memory_tokens,
                counter_name=settings.counter,
                tool=self.retrieve_tool,
            )
        except CompactorError as exc:
            self.on_error(exc, "no reminder added")
            return {}
        return cast(SyncHookJSONOutput, json.loads(output)) if output is not None else {}

    async def post_compact(
        self, input: Mapping[str, Any], tool_use_id: str | None, context: HookContext
    ) -> SyncHookJSONOutput:
        """The PostCompact callback: note Claude Code's summary in the session's record; answers ``{}``."""
        return await anyio.to_thread.run_sync(self._post_compact, dict(input))

    def _post_compact(self, data: dict[str, Any]) -> SyncHookJSONOutput:
        try:
            record_compact_summary(_hook_input(data), self.home)
        except CompactorError as exc:
            self.on_error(exc, "the summary is not recorded; nothing else changes")
        return {}

    # -- what goes into ClaudeAgentOptions ----------------------------------------------

    @property
    def hooks(self) -> dict[str, list[HookMatcher]]:
        """``ClaudeAgentOptions.hooks`` entries: PreCompact (manual and auto), SessionStart (after a
        compaction) and PostCompact."""
        return {
            "PreCompact": [HookMatcher(hooks=[self.pre_compact], timeout=PRE_COMPACT_TIMEOUT_S)],
            "SessionStart": [
                HookMatcher(matcher="compact", hooks=[self.session_start], timeout=SESSION_START_TIMEOUT_S)
            ],
            "PostCompact": [HookMatcher(hooks=[self.post_compact], timeout=POST_COMPACT_TIMEOUT_S)],
        }

    @property
    def mcp_servers(self) -> dict[str, McpStdioServerConfig]:
        """``ClaudeAgentOptions.mcp_servers`` entries: ``ccr mcp`` and (unless turned off) ``compactor memory mcp``.

        Python runs with ``-P``, so a folder named ``ccr`` or ``compactor`` in
        the agent's working folder is never imported by mistake.
        """
        env = {"COMPACTOR_HOME": str(self.home)}
        servers: dict[str, McpStdioServerConfig] = {
            self.ccr_server: {"type": "stdio", "command": self.python, "args": ["-P", "-m", "ccr", "mcp"], "env": env},
        }
        if self.memory_server is not None:
            servers[self.memory_server] = {
                "type": "stdio",
                "command": self.python,
                "args": ["-P", "-m", "compactor", "memory", "mcp"],
                "env": env,
            }
        return servers

    @property
    def allowed_tools(self) -> list[str]:
        """Permission rules for the servers' tools and ToolSearch, which loads them (``ClaudeAgentOptions.allowed_tools``)."""
        servers = [self.ccr_server] + ([self.memory_server] if self.memory_server is not None else [])
        return ["ToolSearch", *(f"mcp__{server}" for server in servers)]

    def apply(self, options: ClaudeAgentOptions | None = None, *, allow_tools: bool = True) -> ClaudeAgentOptions:
        """A copy of ``options`` with the hooks and servers added (the caller's own are kept, theirs first).

        With ``allow_tools``, the servers' tools and ToolSearch are added to
        ``allowed_tools`` so the model can use them without a permission prompt.

        Raises:
            UsageError: ``options.mcp_servers`` is a config file path, which cannot be merged,
                or already names a server called as one of ours.
        """
        options = options or ClaudeAgentOptions()
        if not isinstance(options.mcp_servers, dict):
            raise UsageError(
                "options.mcp_servers names a config file; pass the servers as a dict to add compactor's to them"
            )
        taken = sorted(set(options.mcp_servers) & set(self.mcp_servers))
        if taken:
            raise UsageError(f"options.mcp_servers already has {', '.join(taken)}; name compactor's servers otherwise")
        hooks: dict[str, list[HookMatcher]] = {event: list(m) for event, m in (options.hooks or {}).items()}
        for event, matchers in self.hooks.items():
            hooks.setdefault(event, []).extend(matchers)
        allowed = list(options.allowed_tools)
        if allow_tools:
            allowed += [rule for rule in self.allowed_tools if rule not in allowed]
        return dataclasses.replace(
            options,
            hooks=cast(Any, hooks),
            mcp_servers={**options.mcp_servers, **self.mcp_servers},
            allowed_tools=allowed,
        )


def _hook_input(data: dict[str, Any]) -> HookInput:
    """The callback's input as the hooks take it.

    Raises:
        InputInvalid: the input is not a usable hook input (no usable ``session_id``).
    """
    return parse_hook_input(json.dumps(data, ensure_ascii=False).encode("utf-8"))
