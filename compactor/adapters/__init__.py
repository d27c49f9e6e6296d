"""Adapters: the message histories of agent frameworks in and out of the ``Message`` shape.

One module per format, each with an adapter class (``to_messages`` /
``from_messages``, lossless both ways) and, where a framework has a place
for it, the integration that compacts its history:

- ``compactor.adapters.openai_chat``: OpenAI Chat Completions messages;
- ``compactor.adapters.openai_responses``: OpenAI Responses input items;
- ``compactor.adapters.openai_agents``: a compacting ``Session`` for the OpenAI Agents SDK (extra ``openai-agents``);
- ``compactor.adapters.langchain``: LangChain ``BaseMessage``s (extra ``langchain``);
- ``compactor.adapters.langchain_agent``: an ``AgentMiddleware`` for LangChain 1.x ``create_agent`` (extra ``langchain``);
- ``compactor.adapters.langgraph``: a ``pre_model_hook`` for LangGraph prebuilt agents (extra ``langgraph``);
- ``compactor.adapters.pydantic_ai``: pydantic-ai ``ModelMessage``s and a history processor (extra ``pydantic-ai``).
- ``compactor.adapters.claude_agent_sdk``: the Claude Code plugin's hooks and MCP servers for the Claude Agent SDK
  (extra ``claude-agent-sdk``; Claude Code compacts there, so no message format is converted).

Modules that need a framework import it; this package imports none, so
import the module of the framework you use.
"""

from __future__ import annotations

from compactor.adapters._convert import PASSTHROUGH
from compactor.adapters.history import CompactingHistory, HistoryAdapter
from compactor.adapters.openai_chat import OpenAIChatAdapter
from compactor.adapters.openai_responses import OpenAIResponsesAdapter

__all__ = ["CompactingHistory", "HistoryAdapter", "OpenAIChatAdapter", "OpenAIResponsesAdapter", "PASSTHROUGH"]
