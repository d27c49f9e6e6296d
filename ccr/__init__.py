"""ccr: the content-addressed recovery store.

Every byte the compactor drops is stored here under a handle derived from
its content (``ccr_`` + 32 hex of sha256), and comes back exactly, by query,
or by range. Typed objects (``ccr_obj_...``) keep structured observations
that ``ccr://`` pointers select into.
"""

from __future__ import annotations

from ccr._memory import MemoryStore
from ccr._sqlite import SQLiteStore
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
from ccr.handles import Ref, find_handles, handle_for, marker, parse_ref
from ccr.objects import (
    OBJECT_TYPES,
    Currentness,
    Lifecycle,
    ObjectType,
    StoredObject,
    TypedObject,
    make_object,
)
from ccr.records import PutRequest, Record, RecordFilter, StoreStats
from ccr.retrieval import Retrieval, RetrievalMode
from ccr.store import DEFAULT_MAX_BYTES, Store, default_store_path, open_store

__all__ = [
    "ArchiveInvalid",
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
]
