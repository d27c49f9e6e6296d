"""Values the store takes and gives back: put requests, records, statistics.

Pure pydantic values: no connections or file handles inside. The original
bytes travel in ``PutRequest`` and come back from ``Store.get``; a ``Record``
carries only the metadata, read without loading the payload.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PutRequest", "Record", "RecordFilter", "StoreStats"]


class PutRequest(BaseModel):
    """One record to store: the original bytes and what is known about them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data: bytes
    content_type: str = "text/plain"
    producer: str = ""
    tokens_before: int | None = Field(default=None, ge=0)
    tokens_after: int | None = Field(default=None, ge=0)
    metadata: dict[str, Any] | None = None


class Record(BaseModel):
    """A stored record's metadata (the payload itself comes from ``Store.get``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    handle: str
    size: int
    content_type: str
    producer: str
    tokens_before: int | None = None
    tokens_after: int | None = None
    metadata: dict[str, Any] | None = None
    created_at: datetime


class RecordFilter(BaseModel):
    """Which records ``Store.records`` lists; every field given must match.

    ``session_id`` and ``kind`` are read from the metadata producers record
    (the hooks and the pipeline record ``session_id``; every stored span its
    ``kind``: ``head``, ``message``, ``tool_result``, ...). ``producer``
    matches the producer exactly or as a prefix up to a ``:``
    (``compactor.claude_code.hooks`` matches ``compactor.claude_code.hooks:head``). ``since`` keeps
    records created at or after it, ``before`` those created strictly before.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str | None = None
    kind: str | None = None
    producer: str | None = None
    since: datetime | None = None
    before: datetime | None = None

    def matches(self, record: Record) -> bool:
        """Whether ``record`` passes every condition given."""
        meta = record.metadata or {}
        if self.session_id is not None and meta.get("session_id") != self.session_id:
            return False
        if self.kind is not None and meta.get("kind") != self.kind:
            return False
        if self.producer is not None and not (
            record.producer == self.producer or record.producer.startswith(self.producer + ":")
        ):
            return False
        if self.since is not None and record.created_at < self.since:
            return False
        return self.before is None or record.created_at < self.before


class StoreStats(BaseModel):
    """How full the store is. Token figures are inferred from what producers declared."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["sqlite", "memory"]
    path: str | None = None
    entries: int
    objects: int
    payload_bytes: int
    max_bytes: int
    full: bool
    tokens_before: int
    tokens_after: int
    tokens_saved: int
    basis: Literal["inferred"] = "inferred"
