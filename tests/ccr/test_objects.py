"""Typed objects: closed types, content-derived ids, explicit state changes, strict selectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ccr import (
    OBJECT_TYPES,
    HandleNotFound,
    InvalidRequest,
    InvalidSelector,
    Store,
    TypedObject,
    UnknownObjectType,
    make_object,
    parse_ref,
)
from ccr.objects import object_id, select

CONTENT = {"passed": 41, "failed": [{"name": "test_parse", "error": "AssertionError: 1 != 2"}]}


def _result(**overrides: Any) -> TypedObject:
    fields: dict[str, Any] = {"session_id": "s1", "source": "pytest -q", "repo_state": "abc123", "content": CONTENT}
    fields.update(overrides)
    return make_object("test_result", **fields)


def test_the_type_set_is_closed_and_complete() -> None:
    assert {
        "file_observation",
        "search_result",
        "command_result",
        "test_result",
        "build_result",
        "diff_snapshot",
        "task_contract",
        "task_decision",
        "execution_state",
        "documentation_excerpt",
        "browser_snapshot",
        "repository_map",
        "evidence_bundle",
    } == OBJECT_TYPES


def test_an_unknown_type_is_refused() -> None:
    with pytest.raises(UnknownObjectType) as caught:
        make_object("opinion", session_id="s", source="x", content={})
    assert caught.value.exit_code == 2


def test_content_that_is_not_json_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        make_object("test_result", session_id="s", source="x", content={"x": float("nan")})


def test_id_is_derived_from_type_session_source_repo_state_and_content() -> None:
    obj = _result()
    assert obj.id.startswith("ccr_obj_") and len(obj.id) == 40
    assert parse_ref(obj.id).kind == "object"
    assert _result().id == obj.id
    assert obj.id == object_id("test_result", "s1", "pytest -q", "abc123", obj.content_hash)
    variants = [
        _result(session_id="s2"),
        _result(source="pytest"),
        _result(repo_state="def456"),
        _result(content={**CONTENT, "passed": 40}),
        make_object("build_result", session_id="s1", source="pytest -q", repo_state="abc123", content=CONTENT),
    ]
    assert len({v.id for v in variants} | {obj.id}) == len(variants) + 1


def test_key_order_in_content_does_not_change_the_id() -> None:
    a = make_object("search_result", session_id="s", source="grep", content={"a": 1, "b": 2})
    b = make_object("search_result", session_id="s", source="grep", content={"b": 2, "a": 1})
    assert a.id == b.id


def test_a_stored_object_starts_current_and_hot(store: Store) -> None:
    oid = store.put_object(_result())
    stored = store.get_object(oid)
    assert (stored.currentness, stored.lifecycle) == ("current", "hot")
    assert stored.content == CONTENT


def test_states_change_only_through_explicit_calls(store: Store) -> None:
    obj = _result()
    oid = store.put_object(obj)
    stale = store.set_currentness(oid, "stale")
    assert (stale.currentness, stale.lifecycle) == ("stale", "hot")
    cold = store.set_lifecycle(oid, "cold")
    assert (cold.currentness, cold.lifecycle) == ("stale", "cold")
    assert store.put_object(obj) == oid
    again = store.get_object(oid)
    assert (again.currentness, again.lifecycle) == ("stale", "cold")
    assert again.created_at == stale.created_at
    assert store.stats().objects == 1


def test_unknown_states_are_refused(store: Store) -> None:
    oid = store.put_object(_result())
    with pytest.raises(InvalidRequest):
        store.set_currentness(oid, "fresh")  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest):
        store.set_lifecycle(oid, "frozen")  # type: ignore[arg-type]
    assert store.get_object(oid).lifecycle == "hot"


def test_state_change_of_an_unknown_object_says_not_found(store: Store) -> None:
    with pytest.raises(HandleNotFound):
        store.set_lifecycle("ccr_obj_" + "0" * 32, "cold")


def test_pointer_selects_a_field_or_subtree(store: Store) -> None:
    oid = store.put_object(_result())
    assert store.get(f"ccr://{oid}/content/failed/0/error") == b"AssertionError: 1 != 2"
    assert json.loads(store.get(f"ccr://{oid}/content/failed")) == CONTENT["failed"]
    assert store.get(f"ccr://{oid}/content/passed") == b"41"
    assert store.get(f"ccr://{oid}/currentness") == b"current"
    whole = json.loads(store.get(oid))
    assert whole["id"] == oid and whole["content"] == CONTENT


@pytest.mark.parametrize(
    "path",
    [
        "content/missing",
        "content/failed/1",
        "content/failed/01",
        "content/failed/-1",
        "content/failed/x",
        "content/passed/0",
        "Content",
    ],
)
def test_a_bad_selector_is_an_error_never_a_guess(store: Store, path: str) -> None:
    oid = store.put_object(_result())
    with pytest.raises(InvalidSelector):
        store.get(f"ccr://{oid}/{path}")


def test_pointer_into_a_json_blob_selects_too(store: Store) -> None:
    handle = store.put(json.dumps({"files": ["a.py", "b/c.py"], "a/b": True}).encode())
    assert store.get(f"ccr://{handle}/files/1") == b"b/c.py"
    assert store.get(f"ccr://{handle}/a%2Fb") == b"true"


def test_pointer_into_a_blob_that_is_not_json_is_a_bad_selector(store: Store) -> None:
    handle = store.put(b"plain text")
    with pytest.raises(InvalidSelector):
        store.get(f"ccr://{handle}/field")


def test_pointer_into_json_nested_too_deeply_to_parse_is_a_bad_selector(store: Store) -> None:
    handle = store.put(b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    with pytest.raises(InvalidSelector, match="nested too deeply"):
        store.get(f"ccr://{handle}/a")


def test_resolution_reports_not_found_after_blobs_and_objects(store: Store) -> None:
    with pytest.raises(HandleNotFound):
        store.get("ccr_obj_" + "1" * 32)
    with pytest.raises(HandleNotFound):
        store.get_object("ccr_obj_" + "1" * 32)


def test_blob_and_object_calls_refuse_each_others_ids(store: Store) -> None:
    oid = store.put_object(_result())
    handle = store.put(b"x")
    with pytest.raises(InvalidRequest):
        store.record(oid)
    with pytest.raises(InvalidRequest):
        store.get_object(handle)


def test_objects_count_against_the_budget() -> None:
    from ccr import BudgetExceeded, open_store

    store = open_store(":memory:", max_bytes=50)
    with pytest.raises(BudgetExceeded):
        store.put_object(_result())


def test_select_walks_plain_json_values() -> None:
    assert select({"a": [{"b": None}]}, ("a", "0", "b")) is None
    with pytest.raises(InvalidSelector):
        select(None, ("x",))


def test_verify_names_an_object_whose_content_was_altered(db_path: Path) -> None:
    import sqlite3

    from ccr import open_store

    with open_store(db_path) as store:
        oid = store.put_object(_result())
    raw = sqlite3.connect(db_path)
    with raw:
        raw.execute("UPDATE objects SET content = ? WHERE id = ?", (b'{"passed":99}', oid))
    raw.close()
    with open_store(db_path) as store:
        assert store.verify() == [oid]
