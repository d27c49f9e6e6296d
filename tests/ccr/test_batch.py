"""A store batch names records by content at once and stores them all in one transaction."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import ccr
from ccr import StoreBatch


def test_a_batch_names_each_record_by_its_content_handle_and_stores_them_all_in_one_put_many() -> None:
    batch = StoreBatch()
    first = batch.put(b"a cut tail", producer="test:file")
    rest = batch.put_many([ccr.PutRequest(data=b"a span"), ccr.PutRequest(data=b"a cut tail")])
    assert [first, *rest] == [ccr.handle_for(b"a cut tail"), ccr.handle_for(b"a span"), first]
    assert batch.holds(first) and not batch.holds(ccr.handle_for(b"never kept"))
    store = ccr.open_store(":memory:")
    assert store.stats().entries == 0
    batch.store_in(store)
    assert store.get(first) == b"a cut tail" and store.get(rest[0]) == b"a span"


class RenamingStore:
    """A store seam that names what it stores otherwise than by content."""

    def put_many(self, items: Sequence[ccr.PutRequest]) -> list[str]:
        return ["ccr_" + "0" * 32 for _ in items]


def test_a_store_naming_a_record_otherwise_than_by_its_content_fails_the_batch() -> None:
    batch = StoreBatch()
    batch.put(b"a cut tail")
    with pytest.raises(ccr.StoreError):
        batch.store_in(RenamingStore())
