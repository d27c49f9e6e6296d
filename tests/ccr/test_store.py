"""The store contract, on both backends: idempotent, exact, budgeted, verifiable."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccr import (
    BudgetExceeded,
    CorruptRecord,
    HandleNotFound,
    InvalidHandle,
    InvalidRequest,
    PutRequest,
    SQLiteStore,
    Store,
    StoreConfigError,
    StoreError,
    default_store_path,
    handle_for,
    marker,
    open_store,
)

MISSING = handle_for(b"never stored")
ROUND_TRIP = settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_put_returns_the_content_handle_and_storing_twice_is_a_no_op(store: Store) -> None:
    first = store.put(b"payload", producer="a", metadata={"n": 1})
    second = store.put(b"payload", producer="b", metadata={"n": 2})
    assert first == second == handle_for(b"payload")
    stats = store.stats()
    assert (stats.entries, stats.payload_bytes) == (1, len(b"payload"))
    assert store.record(first).producer == "a"


@ROUND_TRIP
@given(data=st.binary(max_size=4096))
def test_any_bytes_come_back_byte_for_byte(store: Store, data: bytes) -> None:
    handle = store.put(data)
    assert store.get(handle) == data
    assert store.retrieve(marker(handle)).data == data


@ROUND_TRIP
@given(text=st.text(max_size=2000))
def test_any_unicode_text_comes_back_exactly(store: Store, text: str) -> None:
    data = text.encode("utf-8")
    handle = store.put(data, content_type="text/plain; charset=utf-8")
    assert store.get(f"ccr:{handle}").decode("utf-8") == text
    assert store.retrieve(handle).text == text


def test_record_keeps_metadata_apart_from_the_payload(store: Store) -> None:
    handle = store.put(
        b"x" * 100,
        content_type="application/json",
        producer="pipeline",
        tokens_before=40,
        tokens_after=3,
        metadata={"kind": "tool_result", "tool": "Read"},
    )
    record = store.record(marker(handle))
    assert record.handle == handle
    assert record.size == 100
    assert record.content_type == "application/json"
    assert record.producer == "pipeline"
    assert (record.tokens_before, record.tokens_after) == (40, 3)
    assert record.metadata == {"kind": "tool_result", "tool": "Read"}
    assert record.created_at.tzinfo is not None
    assert not hasattr(record, "data")


def test_put_many_stores_a_batch_and_returns_handles_in_order(store: Store) -> None:
    items = [PutRequest(data=f"row {i}".encode()) for i in range(5)] + [PutRequest(data=b"row 0")]
    handles = store.put_many(items)
    assert handles == [handle_for(i.data) for i in items]
    assert store.stats().entries == 5


def test_a_batch_over_budget_writes_nothing_at_all(db_path: Path) -> None:
    with open_store(db_path, max_bytes=100) as store:
        with pytest.raises(BudgetExceeded):
            store.put_many([PutRequest(data=b"a" * 60), PutRequest(data=b"b" * 60)])
        assert store.stats().entries == 0
        assert not store.contains(handle_for(b"a" * 60))


def test_full_store_refuses_instead_of_evicting_and_older_handles_still_resolve(
    small_store: Store,
) -> None:
    older = [small_store.put(bytes([i]) * 300) for i in range(3)]
    with pytest.raises(BudgetExceeded) as caught:
        small_store.put(b"z" * 101)
    assert caught.value.exit_code == 73
    assert caught.value.error_id == "ccr_budget_exceeded"
    for i, handle in enumerate(older):
        assert small_store.get(handle) == bytes([i]) * 300
    assert small_store.put(bytes([0]) * 300) == older[0]
    stats = small_store.stats()
    assert stats.payload_bytes == 900
    assert not stats.full
    small_store.put(b"y" * 100)
    assert small_store.stats().full


def test_memory_store_enforces_the_same_budget() -> None:
    store = open_store(":memory:", max_bytes=10)
    handle = store.put(b"0123456789")
    with pytest.raises(BudgetExceeded):
        store.put(b"!")
    assert store.get(handle) == b"0123456789"


def test_sqlite_full_error_from_the_page_cap_is_reported_as_budget_exceeded(db_path: Path) -> None:
    open_store(db_path).close()
    with sqlite3.connect(db_path) as raw:
        pages = int(raw.execute("PRAGMA page_count").fetchone()[0])
    raw.close()
    store = SQLiteStore(db_path, max_bytes=10**9, page_cap=pages + 10)
    try:
        kept = store.put(b"small")
        with pytest.raises(BudgetExceeded):
            store.put(b"\x01" * 200_000)
        assert store.get(kept) == b"small"
        assert not store.contains(handle_for(b"\x01" * 200_000))
    finally:
        store.close()


@pytest.mark.parametrize("value", ["", "0", "-5", "1e6", "12MB", "abc", " ", "1.5", "٣"])
def test_bad_budget_value_in_the_environment_fails_at_open(
    monkeypatch: pytest.MonkeyPatch, db_path: Path, value: str
) -> None:
    monkeypatch.setenv("COMPACTOR_CCR_MAX_BYTES", value)
    with pytest.raises(StoreConfigError) as caught:
        open_store(db_path)
    assert "COMPACTOR_CCR_MAX_BYTES" in str(caught.value)
    assert not db_path.exists()
    with pytest.raises(StoreConfigError):
        open_store(":memory:")


def test_budget_comes_from_the_environment_unless_given(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    monkeypatch.setenv("COMPACTOR_CCR_MAX_BYTES", "4096")
    with open_store(db_path) as store:
        assert store.stats().max_bytes == 4096
    with open_store(db_path, max_bytes=8192) as store:
        assert store.stats().max_bytes == 8192


def test_default_budget_is_512_mib(store: Store) -> None:
    assert store.stats().max_bytes == 512 * 1024 * 1024


@pytest.mark.parametrize("value", [0, -1])
def test_bad_budget_argument_fails_at_open(value: int) -> None:
    with pytest.raises(StoreConfigError):
        open_store(":memory:", max_bytes=value)


def test_default_path_lives_under_compactor_home(compactor_home: Path) -> None:
    assert default_store_path() == compactor_home / "ccr.db"
    with open_store() as store:
        store.put(b"x")
    assert (compactor_home / "ccr.db").is_file()


def test_default_home_is_dot_compactor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COMPACTOR_HOME")
    assert default_store_path() == Path("~/.compactor/ccr.db").expanduser()


def test_unknown_handle_says_not_found(store: Store) -> None:
    with pytest.raises(HandleNotFound) as caught:
        store.get(MISSING)
    assert MISSING in str(caught.value)
    with pytest.raises(HandleNotFound):
        store.record(MISSING)


def test_malformed_handle_is_refused_before_storage_is_touched(store: Store) -> None:
    store.close()
    with pytest.raises(InvalidHandle):
        store.get("ccr_not_a_handle")
    with pytest.raises(StoreError):
        store.get(MISSING)


def test_malformed_selection_is_refused_before_storage_is_touched(store: Store) -> None:
    store.close()
    for kwargs in ({"lines": (0, 1)}, {"byte_range": (5, 1)}, {"query": " "}):
        with pytest.raises(InvalidRequest):
            store.retrieve(MISSING, **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lines": ("1", "2")},
        {"lines": (1.5, 3)},
        {"lines": (1,)},
        {"byte_range": (True, 3)},
        {"byte_range": 7},
        {"query": 5},
        {"query": b"word"},
    ],
)
def test_selections_of_the_wrong_type_are_refused_before_storage_is_touched(
    store: Store, kwargs: dict[str, object]
) -> None:
    store.close()
    with pytest.raises(InvalidRequest):
        store.retrieve(MISSING, **kwargs)  # type: ignore[arg-type]


def test_put_many_refuses_items_that_are_not_put_requests(store: Store) -> None:
    with pytest.raises(InvalidRequest, match="PutRequest"):
        store.put_many([b"raw bytes"])  # type: ignore[list-item]
    assert store.stats().entries == 0


def test_records_persist_across_reopening(db_path: Path) -> None:
    with open_store(db_path) as store:
        handle = store.put(b"kept", tokens_before=10, tokens_after=2)
    with open_store(db_path) as store:
        assert store.get(handle) == b"kept"
        stats = store.stats()
    assert (stats.entries, stats.tokens_before, stats.tokens_after, stats.tokens_saved) == (1, 10, 2, 8)
    assert stats.basis == "inferred"


def test_stats_count_saved_tokens_only_where_both_figures_are_known(store: Store) -> None:
    store.put(b"a", tokens_before=100, tokens_after=10)
    store.put(b"b", tokens_before=50)
    stats = store.stats()
    assert (stats.tokens_before, stats.tokens_after, stats.tokens_saved) == (150, 10, 90)


def test_verify_names_rows_whose_bytes_no_longer_hash_to_their_handle(db_path: Path) -> None:
    with open_store(db_path) as store:
        good = store.put(b"good")
        bad = store.put(b"bad")
        assert store.verify() == []
    raw = sqlite3.connect(db_path)
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"tampered", bad))
    raw.close()
    with open_store(db_path) as store:
        assert store.verify() == [bad]
        assert store.get(good) == b"good"
        with pytest.raises(CorruptRecord):
            store.get(bad)


def test_put_refuses_text_instead_of_bytes(store: Store) -> None:
    with pytest.raises(InvalidRequest):
        store.put("text")  # type: ignore[arg-type]


def test_metadata_that_is_not_json_is_refused(store: Store) -> None:
    with pytest.raises(InvalidRequest):
        store.put(b"x", metadata={"when": object()})
    assert store.stats().entries == 0


def test_closed_store_refuses_calls(store: Store) -> None:
    handle = store.put(b"x")
    store.close()
    with pytest.raises(StoreError):
        store.get(handle)


def test_the_store_opened_by_a_parent_process_refuses_use_in_a_forked_child(db_path: Path) -> None:
    import os

    store = open_store(db_path)
    handle = store.put(b"parent")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            store.get(handle)
        except StoreError:
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get(handle) == b"parent"
    store.close()


def test_threads_sharing_one_store_all_land(store: Store) -> None:
    from concurrent.futures import ThreadPoolExecutor

    payloads = [f"thread payload {i}".encode() * 50 for i in range(64)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        handles = list(pool.map(store.put, payloads))
    assert [store.get(h) for h in handles] == payloads
    assert store.stats().entries == 64


def test_full_is_reported_exactly_when_the_page_cap_refuses_a_one_byte_put(db_path: Path) -> None:
    open_store(db_path).close()
    with sqlite3.connect(db_path) as raw:
        pages = int(raw.execute("PRAGMA page_count").fetchone()[0])
    raw.close()
    roomy = SQLiteStore(db_path, max_bytes=10**9, page_cap=pages + 8)
    try:
        assert not roomy.stats().full
        roomy.put(b"a")
    finally:
        roomy.close()
    tight = SQLiteStore(db_path, max_bytes=10**9, page_cap=pages + 7)
    try:
        assert tight.stats().full
        with pytest.raises(BudgetExceeded):
            tight.put(b"b")
        assert tight.get(handle_for(b"a")) == b"a"
    finally:
        tight.close()


def test_records_lists_oldest_first_and_filters_on_both_backends(store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    from ccr import RecordFilter

    a = store.put(b"a", producer="compactor.claude_code.hooks:head", metadata={"session_id": "s1", "kind": "head"})
    b = store.put(b"b", producer="compactor.engine.pipeline:message", metadata={"session_id": "s2", "kind": "message"})
    c = store.put(b"c", producer="ccr-cli")
    assert sorted(r.handle for r in store.records()) == sorted([a, b, c])
    assert [r.handle for r in store.records(RecordFilter(session_id="s1"))] == [a]
    assert [r.handle for r in store.records(RecordFilter(kind="message"))] == [b]
    assert [r.handle for r in store.records(RecordFilter(producer="compactor.claude_code.hooks"))] == [a]
    assert store.records(RecordFilter(producer="compactor")) == []
    later = datetime.now(UTC) + timedelta(hours=1)
    assert store.records(RecordFilter(since=later)) == []
    assert len(store.records(RecordFilter(before=later))) == 3


def test_delete_is_all_or_nothing_and_keeps_the_totals_right(store: Store) -> None:
    a = store.put(b"aaaa", tokens_before=10, tokens_after=1)
    b = store.put(b"bb")
    with pytest.raises(HandleNotFound):
        store.delete([a, MISSING])
    assert store.contains(a)
    assert store.delete([marker(a), a]) == [a]
    stats = store.stats()
    assert (stats.entries, stats.payload_bytes, stats.tokens_saved) == (1, 2, 0)
    assert store.get(b) == b"bb"
    with pytest.raises(InvalidHandle):
        store.delete([f"ccr://{b}/field"])


def test_restore_keeps_handles_metadata_and_times_and_refuses_a_mismatch(store: Store, tmp_path: Path) -> None:
    with open_store(tmp_path / "source.db") as source:
        handle = source.put(b"archived", producer="p", metadata={"session_id": "s"})
        items = list(source.iter_blobs())
    record, _ = items[0]
    with pytest.raises(CorruptRecord):
        store.restore([(record, b"tampered")])
    assert not store.contains(handle)
    store.restore(items)
    assert store.get(handle) == b"archived"
    assert store.record(handle) == record
    assert [r for r, _ in store.iter_blobs()] == [record]
