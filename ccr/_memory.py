"""The in-memory backend: the same API and budget as SQLite, kept in dicts.

For tests and for agent loops that want reversibility within one process
only. Nothing survives ``close`` or the process.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Callable
from datetime import datetime

from ccr._base import BaseStore, BlobRow, ObjectRow
from ccr.errors import HandleNotFound, StoreError
from ccr.handles import handle_for
from ccr.objects import Currentness, Lifecycle, StoredObject, content_hash, object_id
from ccr.records import Record, RecordFilter, StoreStats

__all__ = ["MemoryStore"]


class MemoryStore(BaseStore):
    """A store held in process memory."""

    def __init__(self, *, max_bytes: int) -> None:
        super().__init__(max_bytes=max_bytes)
        self._lock = threading.Lock()
        self._blobs: dict[str, BlobRow] = {}
        self._objects: dict[str, ObjectRow] = {}
        self._used = 0
        self._closed = False

    def stats(self) -> StoreStats:
        with self._lock:
            self._check_open()
            before = sum(r.tokens_before or 0 for r in self._blobs.values())
            after = sum(r.tokens_after or 0 for r in self._blobs.values())
            saved = sum(
                r.tokens_before - r.tokens_after
                for r in self._blobs.values()
                if r.tokens_before is not None and r.tokens_after is not None
            )
            return StoreStats(
                backend="memory",
                entries=len(self._blobs),
                objects=len(self._objects),
                payload_bytes=self._used,
                max_bytes=self.max_bytes,
                full=self._used >= self.max_bytes,
                tokens_before=before,
                tokens_after=after,
                tokens_saved=saved,
            )

    def verify(self, progress: Callable[[int], object] | None = None) -> list[str]:
        with self._lock:
            self._check_open()
            bad = [h for h, row in self._blobs.items() if handle_for(row.data) != h]
            if progress is not None:
                progress(self._used)
            for oid, orow in self._objects.items():
                obj = orow.obj
                digest = content_hash(json.loads(orow.content))
                ident = object_id(obj.type, obj.session_id, obj.source, obj.repo_state, digest)
                if digest != obj.content_hash or ident != oid:
                    bad.append(oid)
            return bad

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._blobs.clear()
            self._objects.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")

    def _insert_blobs(self, rows: list[BlobRow]) -> None:
        with self._lock:
            self._check_open()
            new = [r for r in rows if r.handle not in self._blobs]
            adding = sum(len(r.data) for r in new)
            self._refuse_over_budget(self._used, adding)
            for row in new:
                self._blobs[row.handle] = row
            self._used += adding
            for row in rows:
                kept = self._blobs[row.handle]
                if kept.data != row.data:  # a corrupt copy: the given bytes hash to the handle
                    self._used += len(row.data) - len(kept.data)
                    self._blobs[row.handle] = dataclasses.replace(kept, data=row.data)

    def _load_blob(self, handle: str) -> bytes | None:
        with self._lock:
            self._check_open()
            row = self._blobs.get(handle)
            return None if row is None else row.data

    def _load_record(self, handle: str) -> Record | None:
        with self._lock:
            self._check_open()
            row = self._blobs.get(handle)
            return None if row is None else _record(row)

    def _list_records(self, where: RecordFilter) -> list[Record]:
        with self._lock:
            self._check_open()
            found = [r for r in map(_record, self._blobs.values()) if where.matches(r)]
        return sorted(found, key=lambda r: (r.created_at, r.handle))

    def _object_ids(self) -> list[str]:
        with self._lock:
            self._check_open()
            return sorted(self._objects, key=lambda oid: (self._objects[oid].obj.created_at, oid))

    def _delete(self, handles: list[str], object_ids: list[str]) -> None:
        with self._lock:
            self._check_open()
            missing = [h for h in handles if h not in self._blobs]
            missing += [o for o in object_ids if o not in self._objects]
            if missing:
                raise HandleNotFound(f"nothing removed: no record for {', '.join(missing)}")
            for handle in handles:
                self._used -= len(self._blobs.pop(handle).data)
            for oid in object_ids:
                self._used -= len(self._objects.pop(oid).content)

    def _insert_object(self, row: ObjectRow) -> None:
        with self._lock:
            self._check_open()
            if row.obj.id in self._objects:
                return
            self._refuse_over_budget(self._used, len(row.content))
            self._objects[row.obj.id] = row
            self._used += len(row.content)

    def _load_object(self, object_id: str) -> StoredObject | None:
        with self._lock:
            self._check_open()
            row = self._objects.get(object_id)
            return None if row is None else row.obj

    def _update_object_state(
        self,
        object_id: str,
        currentness: Currentness | None,
        lifecycle: Lifecycle | None,
        stamp: datetime,
    ) -> StoredObject | None:
        with self._lock:
            self._check_open()
            row = self._objects.get(object_id)
            if row is None:
                return None
            changes: dict[str, object] = {"updated_at": stamp}
            if currentness is not None:
                changes["currentness"] = currentness
            if lifecycle is not None:
                changes["lifecycle"] = lifecycle
            updated = row.obj.model_copy(update=changes)
            self._objects[object_id] = ObjectRow(obj=updated, content=row.content)
            return updated


def _record(row: BlobRow) -> Record:
    return Record(
        handle=row.handle,
        size=len(row.data),
        content_type=row.content_type,
        producer=row.producer,
        tokens_before=row.tokens_before,
        tokens_after=row.tokens_after,
        metadata=None if row.metadata is None else json.loads(row.metadata),
        created_at=row.created_at,
    )
