"""compactor: reversible, measurable context compaction for coding agents."""

from __future__ import annotations

from compactor.errors import CompactorError
from compactor.messages import Message
from compactor.session import SessionState
from compactor.tokens import RoughCounter, TiktokenCounter, TokenCounter

__all__ = [
    "CompactorError",
    "Message",
    "RoughCounter",
    "SessionState",
    "TiktokenCounter",
    "TokenCounter",
]
