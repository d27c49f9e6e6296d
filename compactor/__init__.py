"""compactor: reversible, measurable context compaction for coding agents.

The five-line version::

    from compactor import Orchestrator, Message
    orch = Orchestrator()                       # settings from env, store in $COMPACTOR_HOME
    orch.add_message(Message(role="user", content="Fix the failing test"))
    if orch.should_compact().compact:
        result = orch.compact("auto")           # result.report is the JSON report

Recorded sessions replay with ``compactor.replay.replay(...)``; the pieces (``compact``,
``should_compact``, ``Deduper``, the counters and summarizers) are usable on
their own. The recovery store is the ``ccr`` package; attachments and skills
are ``attachments`` and ``skills``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from compactor._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from compactor.config import Settings, load_settings
    from compactor.dedup import Deduper
    from compactor.errors import CompactionFailed, CompactorError, ConfigError, TranscriptError, UsageError
    from compactor.messages import Message, Usage
    from compactor.orchestrator import Orchestrator
    from compactor.pipeline import CompactBoundary, CompactionResult, CompactOptions, compact
    from compactor.policy import CompactionTracker, Decision, should_compact
    from compactor.recovery import RECOVERY_TOOL
    from compactor.replay import ReplayReport
    from compactor.report import CompactionReport
    from compactor.ledger import SessionLedger
    from compactor.session import SessionState
    from compactor.summarizers import ExtractiveSummarizer, Summarizer, Summary, make_summarizer
    from compactor.tokens import CachedCounter, RoughCounter, TiktokenCounter, TokenCounter, make_counter
    from compactor.transcript import StateBuilder, Transcript, read_transcript, write_transcript

__all__ = [
    "CachedCounter",
    "CompactBoundary",
    "CompactOptions",
    "CompactionFailed",
    "CompactionReport",
    "CompactionResult",
    "CompactionTracker",
    "CompactorError",
    "ConfigError",
    "Decision",
    "Deduper",
    "ExtractiveSummarizer",
    "Message",
    "Orchestrator",
    "RECOVERY_TOOL",
    "ReplayReport",
    "RoughCounter",
    "SessionLedger",
    "SessionState",
    "Settings",
    "StateBuilder",
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
    "CachedCounter": "compactor.tokens",
    "CompactBoundary": "compactor.pipeline",
    "CompactOptions": "compactor.pipeline",
    "CompactionFailed": "compactor.errors",
    "CompactionReport": "compactor.report",
    "CompactionResult": "compactor.pipeline",
    "CompactionTracker": "compactor.policy",
    "CompactorError": "compactor.errors",
    "ConfigError": "compactor.errors",
    "Decision": "compactor.policy",
    "Deduper": "compactor.dedup",
    "ExtractiveSummarizer": "compactor.summarizers",
    "Message": "compactor.messages",
    "Orchestrator": "compactor.orchestrator",
    "RECOVERY_TOOL": "compactor.recovery",
    "ReplayReport": "compactor.replay",
    "RoughCounter": "compactor.tokens",
    "SessionLedger": "compactor.ledger",
    "SessionState": "compactor.session",
    "Settings": "compactor.config",
    "StateBuilder": "compactor.transcript",
    "Summarizer": "compactor.summarizers",
    "Summary": "compactor.summarizers",
    "TiktokenCounter": "compactor.tokens",
    "TokenCounter": "compactor.tokens",
    "Transcript": "compactor.transcript",
    "TranscriptError": "compactor.errors",
    "Usage": "compactor.messages",
    "UsageError": "compactor.errors",
    "compact": "compactor.pipeline",
    "load_settings": "compactor.config",
    "make_counter": "compactor.tokens",
    "make_summarizer": "compactor.summarizers",
    "read_transcript": "compactor.transcript",
    "should_compact": "compactor.policy",
    "write_transcript": "compactor.transcript",
}
"""Public name -> module defining it. Imported on first use, so that the other
packages (``ccr``, ``attachments``, ``skills``), which build on
``compactor.errors`` and ``compactor.messages``, can import those modules
without pulling in the whole pipeline first."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)


