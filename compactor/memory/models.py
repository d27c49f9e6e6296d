"""The values the memory store hands out: stored memories, remember receipts, recall hits."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Hit", "Memory", "Remembered"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Memory(_Model):
    """One stored version. ``valid_until`` is None while it is current (the only ones recalled)."""

    id: str
    text: str
    created_at: datetime
    valid_from: datetime
    valid_until: datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None

    @property
    def current(self) -> bool:
        return self.valid_until is None


class Remembered(_Model):
    """What ``remember`` did: the memory's id, when it was first stored, and whether this call stored it."""

    id: str
    created_at: datetime
    created: bool


class Hit(_Model):
    """One recalled memory as it enters a context.

    ``text`` is the whole memory, or, when the memory alone is larger than the
    whole budget, its head with ``recovery_handle`` naming the whole text in
    the recovery store. ``tokens_added`` is counted with the caller's counter,
    so its ``basis`` is ``"inferred"``.
    """

    id: str
    text: str
    score: float
    tokens_added: int
    basis: Literal["inferred"] = "inferred"
    recovery_handle: str | None = None
