"""Values the store takes and gives back: put requests, records, statistics.

Pure pydantic values: no connections or file handles inside. The original
bytes travel in ``PutRequest`` and come back from ``Store.get``; a ``Record``
carries only the metadata, read without loading the payload.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PutRequest", "Record", "StoreStats"]


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
