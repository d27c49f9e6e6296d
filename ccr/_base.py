"""Behaviour both backends share: reference resolution, retrieval, validation.

A backend supplies storage primitives (``_insert_blobs``, ``_load_blob``,
...); everything that can be decided without storage (parsing a reference,
hashing, budget arithmetic, selecting a range) lives here once, so the SQLite
and memory backends cannot drift apart.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, ConfigDict

from ccr.errors import (
    BudgetExceeded,
    CorruptRecord,
    HandleNotFound,
    InvalidHandle,
    InvalidRequest,
    InvalidSelector,
)
from ccr.handles import Ref, handle_for, parse_ref
from ccr.objects import (
    Currentness,
    Lifecycle,
    StoredObject,
    TypedObject,
    canonical_json,
    check_state,
    content_hash,
    object_id,
    render_selection,
    select,
)
from ccr.records import PutRequest, Record, RecordFilter, StoreStats
from ccr.retrieval import Retrieval, check_selection, retrieve

__all__ = ["BaseStore", "BlobRow", "ObjectRow", "now"]


def now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class BlobRow:
    """A validated record ready to write: handle computed, metadata serialized.

    A plain dataclass rather than a pydantic model: it is built once per
    stored record on the hot path, from values already validated.
    """

    handle: str
    data: bytes
    content_type: str
    producer: str
    tokens_before: int | None
    tokens_after: int | None
    metadata: str | None
    created_at: datetime


class ObjectRow(BaseModel):
    """A typed object ready to write, with its canonical content bytes."""

    model_config = ConfigDict(frozen=True)

    obj: StoredObject
    content: bytes


class BaseStore(abc.ABC):
    """The store API over a backend's primitives. Thread-safe through the backend's lock."""

    max_bytes: int

    def __init__(self, *, max_bytes: int) -> None:
        self.max_bytes = max_bytes

    # -- public API -----------------------------------------------------------

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
        """Store ``data`` durably and return its handle; storing the same bytes again is a no-op.

        The first put of given bytes fixes the record's metadata.

        Raises:
            InvalidRequest: the data is not bytes, or metadata is not JSON.
            BudgetExceeded: the record does not fit in the budget; nothing was written.
            StoreError: the store could not write.
        """
        if not isinstance(data, bytes | bytearray | memoryview):
            raise InvalidRequest(f"put takes bytes, not {type(data).__name__}")
        request = PutRequest(
            data=bytes(data),
            content_type=content_type,
            producer=producer,
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            metadata=metadata,
        )
        return self.put_many([request])[0]

    def put_many(self, items: Sequence[PutRequest]) -> list[str]:
        """Store every item in one transaction (all or nothing); return their handles in order.

        Raises:
            InvalidRequest: an item is not a ``PutRequest``, or its metadata is not JSON.
            BudgetExceeded: the new bytes do not fit in the budget; nothing was written.
            StoreError: the store could not write.
        """
        for item in items:
            if not isinstance(item, PutRequest):
                raise InvalidRequest(f"put_many takes PutRequest items, not {type(item).__name__}")
        created = now()
        rows: dict[str, BlobRow] = {}
        handles: list[str] = []
        for item in items:
            handle = handle_for(item.data)
            handles.append(handle)
            if handle in rows:
                continue
            metadata = None if item.metadata is None else canonical_json(item.metadata).decode("utf-8")
            rows[handle] = BlobRow(
                handle=handle,
                data=item.data,
                content_type=item.content_type,
                producer=item.producer,
                tokens_before=item.tokens_before,
                tokens_after=item.tokens_after,
                metadata=metadata,
                created_at=created,
            )
        if rows:
            self._insert_blobs(list(rows.values()))
        return handles

    def get(self, ref: str) -> bytes:
        """The exact bytes a reference names (a ``ccr://`` path selects into a JSON value).

        Raises:
            InvalidHandle: the reference has no accepted shape (nothing was read).
            InvalidSelector: a ``ccr://`` path selects nothing.
            HandleNotFound: nothing is stored under the handle.
            CorruptRecord: the stored bytes no longer match the handle.
        """
        return self._resolve(parse_ref(ref))

    def contains(self, ref: str) -> bool:
        """Whether a blob or typed object is stored under the reference's handle.

        Raises:
            InvalidHandle: the reference has no accepted shape.
        """
        parsed = parse_ref(ref)
        if parsed.kind == "blob":
            return self._load_record(parsed.handle) is not None
        return self._load_object(parsed.handle) is not None

    def record(self, ref: str) -> Record:
        """A blob's metadata, read without loading its payload.

        Raises:
            InvalidHandle: the reference has no accepted shape.
            InvalidRequest: the reference names a typed object (use ``get_object``).
            HandleNotFound: nothing is stored under the handle.
        """
        parsed = parse_ref(ref)
        if parsed.kind != "blob":
            raise InvalidRequest(f"{parsed.handle} is a typed object; use get_object")
        found = self._load_record(parsed.handle)
        if found is None:
            raise HandleNotFound(f"no record for {parsed.handle}")
        return found

    def retrieve(
        self,
        ref: str,
        *,
        query: str | None = None,
        lines: tuple[int, int] | None = None,
        byte_range: tuple[int, int] | None = None,
    ) -> Retrieval:
        """Recover what a reference names: exactly, by query, or by line or byte range.

        Raises:
            InvalidHandle: the reference has no accepted shape.
            InvalidSelector: a ``ccr://`` path selects nothing.
            InvalidRequest: more than one selection, or a malformed one.
            HandleNotFound: nothing is stored under the handle.
            CorruptRecord: the stored bytes no longer match the handle.
        """
        parsed = parse_ref(ref)
        check_selection(query=query, lines=lines, byte_range=byte_range)
        data = self._resolve(parsed)
        return retrieve(
            data,
            handle=parsed.handle,
            ref=str(parsed),
            query=query,
            lines=lines,
            byte_range=byte_range,
        )

    def put_object(self, obj: TypedObject) -> str:
        """Store a typed object and return its id; storing it again changes nothing.

        Raises:
            BudgetExceeded: its content does not fit in the budget.
            StoreError: the store could not write.
        """
        stamp = now()
        content = canonical_json(obj.content)
        stored = StoredObject(
            id=obj.id,
            type=obj.type,
            session_id=obj.session_id,
            source=obj.source,
            repo_state=obj.repo_state,
            content_hash=obj.content_hash,
            content=obj.content,
            created_at=stamp,
            updated_at=stamp,
        )
        self._insert_object(ObjectRow(obj=stored, content=content))
        return stored.id

    def get_object(self, ref: str) -> StoredObject:
        """A stored typed object with its current states.

        Raises:
            InvalidHandle: the reference has no accepted shape.
            InvalidRequest: the reference names a blob, not a typed object.
            HandleNotFound: no object is stored under the id.
        """
        parsed = parse_ref(ref)
        if parsed.kind != "object":
            raise InvalidRequest(f"{parsed.handle} is a blob handle, not a typed object id")
        found = self._load_object(parsed.handle)
        if found is None:
            raise HandleNotFound(f"no typed object {parsed.handle}")
        return found

    def set_currentness(self, ref: str, currentness: Currentness) -> StoredObject:
        """Mark a typed object current, stale or archived; the only way its currentness changes.

        Raises:
            InvalidRequest: an unknown currentness, or the reference is not an object id.
            HandleNotFound: no object is stored under the id.
        """
        check_state(currentness=currentness)
        return self._set_state(ref, currentness=currentness, lifecycle=None)

    def set_lifecycle(self, ref: str, lifecycle: Lifecycle) -> StoredObject:
        """Move a typed object to hot, warm, cold or archived; the only way its lifecycle changes.

        Raises:
            InvalidRequest: an unknown lifecycle, or the reference is not an object id.
            HandleNotFound: no object is stored under the id.
        """
        check_state(lifecycle=lifecycle)
        return self._set_state(ref, currentness=None, lifecycle=lifecycle)

    def records(self, where: RecordFilter | None = None) -> list[Record]:
        """The blobs' metadata, oldest first, narrowed by ``where`` (payloads are not read).

        Raises:
            StoreError: the store could not be read.
        """
        return self._list_records(where or RecordFilter())

    def delete(self, refs: Sequence[str]) -> list[str]:
        """Remove the named blobs and typed objects in one transaction; return their handles.

        All or nothing: when any reference names nothing stored, nothing is
        removed. Only an explicit call removes anything; the store itself never
        evicts.

        Raises:
            InvalidHandle: a reference has no accepted shape, or selects a field.
            HandleNotFound: a reference names nothing stored; nothing was removed.
            StoreError: the store could not write.
        """
        blobs: list[str] = []
        objects: list[str] = []
        for ref in refs:
            parsed = parse_ref(ref)
            if parsed.path:
                raise InvalidHandle(f"{ref!r} selects a field; remove the whole record by its handle")
            target = blobs if parsed.kind == "blob" else objects
            if parsed.handle not in target:
                target.append(parsed.handle)
        if blobs or objects:
            self._delete(blobs, objects)
        return [*blobs, *objects]

    def iter_blobs(self) -> Iterator[tuple[Record, bytes]]:
        """Every blob with its metadata, oldest first, payload as stored (check it with ``handle_for``).

        Raises:
            StoreError: the store could not be read.
        """
        for record in self._list_records(RecordFilter()):
            data = self._load_blob(record.handle)
            if data is not None:
                yield record, data

    def iter_objects(self) -> Iterator[StoredObject]:
        """Every typed object with its states, oldest first.

        Raises:
            StoreError: the store could not be read.
        """
        for oid in self._object_ids():
            found = self._load_object(oid)
            if found is not None:
                yield found

    def restore(self, blobs: Sequence[tuple[Record, bytes]], objects: Sequence[StoredObject] = ()) -> None:
        """Store archived records under their own handles, keeping metadata and ``created_at``.

        Every item is checked before anything is written: a blob whose bytes
        do not hash to its handle, or an object whose id does not match its
        content, refuses the whole call. A record already stored keeps its
        metadata (a corrupt copy is healed).

        Raises:
            CorruptRecord: an item does not match its handle or id; nothing was written.
            BudgetExceeded: the records do not fit in the budget; nothing was written.
            StoreError: the store could not write.
        """
        rows: dict[str, BlobRow] = {}
        for record, data in blobs:
            if handle_for(data) != record.handle or len(data) != record.size:
                raise CorruptRecord(f"archived bytes do not match {record.handle}")
            rows.setdefault(
                record.handle,
                BlobRow(
                    handle=record.handle,
                    data=data,
                    content_type=record.content_type,
                    producer=record.producer,
                    tokens_before=record.tokens_before,
                    tokens_after=record.tokens_after,
                    metadata=None if record.metadata is None else canonical_json(record.metadata).decode("utf-8"),
                    created_at=record.created_at,
                ),
            )
        object_rows: list[ObjectRow] = []
        for obj in objects:
            digest = content_hash(obj.content)
            if (
                digest != obj.content_hash
                or object_id(obj.type, obj.session_id, obj.source, obj.repo_state, digest) != obj.id
            ):
                raise CorruptRecord(f"archived object does not match its id {obj.id}")
            object_rows.append(ObjectRow(obj=obj, content=canonical_json(obj.content)))
        if rows:
            self._insert_blobs(list(rows.values()))
        for row in object_rows:
            self._insert_object(row)

    def vacuum(self) -> int:
        """Give back the space removed records left; return the bytes the store shrank by.

        Raises:
            StoreError: the store could not be rewritten.
        """
        return 0

    @abc.abstractmethod
    def stats(self) -> StoreStats:
        """Entries, payload bytes, budget and fullness.

        Raises:
            StoreError: the store could not be read.
        """

    @abc.abstractmethod
    def verify(self, progress: Callable[[int], object] | None = None) -> list[str]:
        """Re-hash every blob and object; return the handles and ids that no longer match.

        ``progress`` is called with each record's size as it is checked.

        Raises:
            StoreError: the store could not be read.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release the store; further calls fail."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- shared logic -----------------------------------------------------------

    def _resolve(self, ref: Ref) -> bytes:
        """Blobs first, then typed objects, then not found; then apply the field path."""
        data = self._load_blob(ref.handle)
        if data is not None:
            if handle_for(data) != ref.handle:
                raise CorruptRecord(f"stored bytes no longer match {ref.handle}")
            if not ref.path:
                return data
            try:
                value = json.loads(data)
            except ValueError as exc:
                raise InvalidSelector(f"{ref.handle} is not JSON, so it has no field {'/'.join(ref.path)!r}") from exc
            except RecursionError as exc:
                raise InvalidSelector(
                    f"{ref.handle} is JSON nested too deeply to select {'/'.join(ref.path)!r} in; get it whole instead"
                ) from exc
            return render_selection(select(value, ref.path))
        obj = self._load_object(ref.handle)
        if obj is not None:
            return render_selection(select(obj.document(), ref.path))
        raise HandleNotFound(f"no record for {ref.handle}")

    def _set_state(self, ref: str, *, currentness: Currentness | None, lifecycle: Lifecycle | None) -> StoredObject:
        parsed = parse_ref(ref)
        if parsed.kind != "object":
            raise InvalidRequest(f"{parsed.handle} is a blob handle, not a typed object id")
        found = self._update_object_state(parsed.handle, currentness, lifecycle, now())
        if found is None:
            raise HandleNotFound(f"no typed object {parsed.handle}")
        return found

    def _refuse_over_budget(self, used: int, adding: int) -> None:
        """Raise when ``adding`` new payload bytes would pass the budget.

        Raises:
            BudgetExceeded: ``used + adding`` is above ``max_bytes``.
        """
        if adding and used + adding > self.max_bytes:
            raise BudgetExceeded(
                f"store is full: {used} of {self.max_bytes} bytes used, {adding} more refused (nothing is ever evicted)"
            )

    # -- backend primitives -----------------------------------------------------

    @abc.abstractmethod
    def _insert_blobs(self, rows: list[BlobRow]) -> None:
        """Insert rows not yet stored, in one transaction, after the budget check."""

    @abc.abstractmethod
    def _load_blob(self, handle: str) -> bytes | None: ...

    @abc.abstractmethod
    def _load_record(self, handle: str) -> Record | None: ...

    @abc.abstractmethod
    def _insert_object(self, row: ObjectRow) -> None: ...

    @abc.abstractmethod
    def _load_object(self, object_id: str) -> StoredObject | None: ...

    @abc.abstractmethod
    def _list_records(self, where: RecordFilter) -> list[Record]: ...

    @abc.abstractmethod
    def _object_ids(self) -> list[str]: ...

    @abc.abstractmethod
    def _delete(self, handles: list[str], object_ids: list[str]) -> None:
        """Remove the rows in one transaction, or raise ``HandleNotFound`` and remove none."""

    @abc.abstractmethod
    def _update_object_state(
        self,
        object_id: str,
        currentness: Currentness | None,
        lifecycle: Lifecycle | None,
        stamp: datetime,
    ) -> StoredObject | None: ...
