"""A batch of records to store together: one transaction for everything one job stores.

A CCR handle is the content address of the bytes (``handle_for``), so a
record can be named before it is stored: code that builds a compaction
names its spans and cut tails at once, keeps them in a ``StoreBatch``, and
its owner writes them all with one ``put_many`` (one transaction, one sync,
all or nothing) once nothing can fail any more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ccr.errors import StoreError
from ccr.handles import handle_for
from ccr.records import PutRequest

__all__ = ["BatchStore", "StoreBatch"]


class BatchStore(Protocol):
    """The part of the CCR store a ``StoreBatch`` uses: storing many records in one transaction."""

    def put_many(self, items: Sequence[PutRequest]) -> list[str]: ...


class StoreBatch:
    """Records to store together, each named by its content handle before it is stored.

    A CCR handle is the content address of the bytes (``ccr.handle_for``), so
    ``put`` and ``put_many`` answer it at once and keep the record;
    ``store_in`` then writes every record kept with one ``put_many`` (one
    transaction, one sync, all or nothing) instead of one per call. A
    record's bytes are hashed here at most once, when it is kept (not at all
    when the caller has the handle: ``put_named``), and not again to check
    what the store answers. Nothing that names a kept record may be used
    before ``store_in`` has returned.
    """

    def __init__(self) -> None:
        self.requests: list[PutRequest] = []
        self.handles: list[str] = []
        self._held: set[str] = set()

    def put(
        self,
        data: bytes,
        *,
        content_type: str = "text/plain",
        producer: str = "",
        tokens_before: int | None = None,
        tokens_after: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Keep one record for ``store_in``; its content handle."""
        return self._keep(
            PutRequest(
                data=data,
                content_type=content_type,
                producer=producer,
                tokens_before=tokens_before,
                tokens_after=tokens_after,
                metadata=metadata,
            )
        )

    def put_many(self, items: Sequence[PutRequest]) -> list[str]:
        """Keep every record for ``store_in``; their content handles in order."""
        return [self._keep(item) for item in items]

    def put_named(self, request: PutRequest, handle: str) -> str:
        """Keep ``request`` under ``handle``, its content handle as the caller already has it.

        A span and a planned cut carry the handle of their bytes, so the
        bytes are not hashed again here; ``store_in`` checks every handle
        against the one the store computes.
        """
        return self._keep(request, handle)

    def holds(self, handle: str) -> bool:
        """Whether a record kept for ``store_in`` has ``handle``."""
        return handle in self._held

    def store_in(self, store: BatchStore) -> None:
        """Store every kept record in one ``put_many`` (nothing when none was kept).

        Raises:
            StoreError: the store named a record otherwise than by its content handle.
            Whatever ``store.put_many`` raises (``ccr.BudgetExceeded``, store
                errors), unchanged: nothing was stored and the caller fails closed.
        """
        if not self.requests:
            return
        if store.put_many(self.requests) != self.handles:
            raise StoreError("the store named a record it was given otherwise than by its content handle")

    def _keep(self, request: PutRequest, handle: str | None = None) -> str:
        handle = handle if handle is not None else handle_for(request.data)
        self.requests.append(request)
        self.handles.append(handle)
        self._held.add(handle)
        return handle
