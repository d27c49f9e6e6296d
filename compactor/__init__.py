"""compactor: reversible, measurable context compaction for coding agents.

The five-line version::

    from compactor import Orchestrator, Message
    orch = Orchestrator()                       # settings from env, store in $COMPACTOR_HOME
    orch.add_message(Message(role="user", content="Fix the failing test"))
    if orch.should_compact().compact:
        result = orch.compact("auto")           # result.report is the JSON report

Recorded sessions replay with ``compactor.claude_code.replay.replay(...)``; the pieces (``compact``,
``should_compact``, ``Deduper``, the counters and summarizers) are usable on
their own. The recovery store is the ``ccr`` package; attachments and skills
are ``attachments`` and ``skills``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports
from compactor import _moved

_moved.install()

if TYPE_CHECKING:
    from ccr.recovery import RECOVERY_TOOL
    from compactor.claude_code.replay import ReplayReport
    from compactor.claude_code.transcript import StateBuilder, Transcript, read_transcript, write_transcript
    from compactor.core.config import Settings, load_settings
    from compactor.core.errors import (
        CompactionFailed,
        CompactorError,
        CompactorRuntimeError,
        ConfigError,
        InputNotFound,
        StoreError,
        TranscriptError,
        UsageError,
    )
    from compactor.core.ledger import SessionLedger
    from compactor.core.messages import Message, Usage
    from compactor.core.session import SessionState
    from compactor.core.tokens import CachedCounter, RoughCounter, TiktokenCounter, TokenCounter, make_counter
    from compactor.engine.dedup import Deduper
    from compactor.engine.orchestrator import Orchestrator
    from compactor.engine.pipeline import CompactBoundary, CompactionResult, CompactOptions, compact
    from compactor.engine.policy import CompactionTracker, Decision, should_compact
    from compactor.engine.report import CompactionReport
    from compactor.summarizers import ExtractiveSummarizer, Summarizer, Summary, make_summarizer

__all__ = [
    "CachedCounter",
    "CompactBoundary",
    "CompactOptions",
    "CompactionFailed",
    "CompactionReport",
    "CompactionResult",
    "CompactionTracker",
    "CompactorError",
    "CompactorRuntimeError",
    "ConfigError",
    "Decision",
    "Deduper",
    "ExtractiveSummarizer",
    "InputNotFound",
    "Message",
    "Orchestrator",
    "RECOVERY_TOOL",
    "ReplayReport",
    "RoughCounter",
    "SessionLedger",
    "SessionState",
    "Settings",
    "StateBuilder",
    "StoreError",
    "Summarizer",
    "Summary",
    "TiktokenCounter",
    "TokenCounter",
    "Transcript",
    "TranscriptError",
    "Usage",
    "UsageError",
    "compact",
    "load_settings",
    "make_counter",
    "make_summarizer",
    "read_transcript",
    "should_compact",
    "write_transcript",
]

_EXPORTS: dict[str, str] = {
    "CachedCounter": "compactor.core.tokens",
    "CompactBoundary": "compactor.engine.pipeline",
    "CompactOptions": "compactor.engine.pipeline",
    "CompactionFailed": "compactor.core.errors",
    "CompactionReport": "compactor.engine.report",
    "CompactionResult": "compactor.engine.pipeline",
    "CompactionTracker": "compactor.engine.policy",
    "CompactorError": "compactor.core.errors",
    "CompactorRuntimeError": "compactor.core.errors",
    "ConfigError": "compactor.core.errors",
    "Decision": "compactor.engine.policy",
    "Deduper": "compactor.engine.dedup",
    "ExtractiveSummarizer": "compactor.summarizers",
    "InputNotFound": "compactor.core.errors",
    "Message": "compactor.core.messages",
    "Orchestrator": "compactor.engine.orchestrator",
    "RECOVERY_TOOL": "ccr.recovery",
    "ReplayReport": "compactor.claude_code.replay",
    "RoughCounter": "compactor.core.tokens",
    "SessionLedger": "compactor.core.ledger",
    "SessionState": "compactor.core.session",
    "Settings": "compactor.core.config",
    "StateBuilder": "compactor.claude_code.transcript",
    "StoreError": "compactor.core.errors",
    "Summarizer": "compactor.summarizers",
    "Summary": "compactor.summarizers",
    "TiktokenCounter": "compactor.core.tokens",
    "TokenCounter": "compactor.core.tokens",
    "Transcript": "compactor.claude_code.transcript",
    "TranscriptError": "compactor.core.errors",
    "Usage": "compactor.core.messages",
    "UsageError": "compactor.core.errors",
    "compact": "compactor.engine.pipeline",
    "load_settings": "compactor.core.config",
    "make_counter": "compactor.core.tokens",
    "make_summarizer": "compactor.summarizers",
    "read_transcript": "compactor.claude_code.transcript",
    "should_compact": "compactor.engine.policy",
    "write_transcript": "compactor.claude_code.transcript",
}
"""Public name -> module defining it. Imported on first use, so that importing
``compactor`` (or one light module of it) does not pull in the whole pipeline."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
