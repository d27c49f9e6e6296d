"""ccr: the content-addressed recovery store.

Every byte the compactor drops is stored here under a handle derived from
its content (``ccr_`` + 32 hex of sha256), and comes back exactly, by query,
or by range. Typed objects (``ccr_obj_...``) keep structured observations
that ``ccr://`` pointers select into.

Public names are imported on first use (``_EXPORTS``), so that a command
needing one of them (a handle, the store's path) does not load every
backend, SQLite and all. The SQLite plumbing the memory store shares is
the public ``ccr.sqlite_kit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from ccr._memory import MemoryStore
    from ccr._sqlite import SQLiteStore
    from ccr.batch import BatchStore, StoreBatch
    from ccr.errors import (
        ArchiveInvalid,
        BudgetExceeded,
        CCRError,
        CorruptRecord,
        HandleNotFound,
        InvalidHandle,
        InvalidRequest,
        InvalidSelector,
        NotAStore,
        RecordsLost,
        StoreConfigError,
        StoreError,
        UnknownObjectType,
        UnsafeStorePath,
    )
    from ccr.handles import Ref, find_handles, handle_for, marker, parse_ref, tinyjuice_marker
    from ccr.objects import (
        OBJECT_TYPES,
        Currentness,
        Lifecycle,
        ObjectType,
        StoredObject,
        TypedObject,
        make_object,
    )
    from ccr.paths import default_store_path
    from ccr.records import PutRequest, Record, RecordFilter, StoreStats
    from ccr.retrieval import Retrieval, RetrievalMode
    from ccr.store import DEFAULT_MAX_BYTES, Store, open_store

__all__ = [
    "ArchiveInvalid",
    "BatchStore",
    "BudgetExceeded",
    "CCRError",
    "CorruptRecord",
    "Currentness",
    "DEFAULT_MAX_BYTES",
    "HandleNotFound",
    "InvalidHandle",
    "InvalidRequest",
    "InvalidSelector",
    "Lifecycle",
    "MemoryStore",
    "NotAStore",
    "OBJECT_TYPES",
    "ObjectType",
    "PutRequest",
    "Record",
    "RecordFilter",
    "RecordsLost",
    "Ref",
    "Retrieval",
    "RetrievalMode",
    "SQLiteStore",
    "Store",
    "StoreBatch",
    "StoreConfigError",
    "StoreError",
    "StoreStats",
    "StoredObject",
    "TypedObject",
    "UnknownObjectType",
    "UnsafeStorePath",
    "default_store_path",
    "find_handles",
    "handle_for",
    "make_object",
    "marker",
    "open_store",
    "parse_ref",
    "tinyjuice_marker",
]

_EXPORTS: dict[str, str] = {
    "ArchiveInvalid": "ccr.errors",
    "BatchStore": "ccr.batch",
    "BudgetExceeded": "ccr.errors",
    "CCRError": "ccr.errors",
    "CorruptRecord": "ccr.errors",
    "Currentness": "ccr.objects",
    "DEFAULT_MAX_BYTES": "ccr.store",
    "HandleNotFound": "ccr.errors",
    "InvalidHandle": "ccr.errors",
    "InvalidRequest": "ccr.errors",
    "InvalidSelector": "ccr.errors",
    "Lifecycle": "ccr.objects",
    "MemoryStore": "ccr._memory",
    "NotAStore": "ccr.errors",
    "OBJECT_TYPES": "ccr.objects",
    "ObjectType": "ccr.objects",
    "PutRequest": "ccr.records",
    "Record": "ccr.records",
    "RecordFilter": "ccr.records",
    "RecordsLost": "ccr.errors",
    "Ref": "ccr.handles",
    "Retrieval": "ccr.retrieval",
    "RetrievalMode": "ccr.retrieval",
    "SQLiteStore": "ccr._sqlite",
    "Store": "ccr.store",
    "StoreBatch": "ccr.batch",
    "StoreConfigError": "ccr.errors",
    "StoreError": "ccr.errors",
    "StoreStats": "ccr.records",
    "StoredObject": "ccr.objects",
    "TypedObject": "ccr.objects",
    "UnknownObjectType": "ccr.errors",
    "UnsafeStorePath": "ccr.errors",
    "default_store_path": "ccr.paths",
    "find_handles": "ccr.handles",
    "handle_for": "ccr.handles",
    "make_object": "ccr.objects",
    "marker": "ccr.handles",
    "open_store": "ccr.store",
    "parse_ref": "ccr.handles",
    "tinyjuice_marker": "ccr.handles",
}
"""Public name -> module defining it (add a line here with each new export)."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)
