"""Handles, markers and the reference resolver's accepted shapes."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccr import InvalidHandle, find_handles, handle_for, marker, parse_ref, tinyjuice_marker

H = "ccr_" + "0123456789abcdef" * 2
HEX = H.removeprefix("ccr_")
OBJ = "ccr_obj_" + "fedcba9876543210" * 2


def test_handle_is_prefix_plus_first_16_bytes_of_sha256_in_lowercase_hex() -> None:
    data = b"the exact bytes"
    assert handle_for(data) == "ccr_" + hashlib.sha256(data).hexdigest()[:32]
    assert len(handle_for(data)) == 36


def test_same_bytes_same_handle_and_different_bytes_different_handle() -> None:
    assert handle_for(b"a") == handle_for(b"a")
    assert handle_for(b"a") != handle_for(b"a ")


def test_marker_wraps_the_handle() -> None:
    assert marker(H) == f"<<ccr:{H}>>"


def test_marker_refuses_what_is_not_a_handle() -> None:
    with pytest.raises(InvalidHandle):
        marker("ccr_123")


@pytest.mark.parametrize("text", [H, f"<<ccr:{H}>>", f"ccr:{H}", f"  {H}\n", f"ccr://{H}"])
def test_resolver_accepts_every_documented_shape_of_a_blob_handle(text: str) -> None:
    ref = parse_ref(text)
    assert ref.handle == H
    assert ref.kind == "blob"
    assert ref.path == ()


@pytest.mark.parametrize(
    "text",
    [
        f"tj:{HEX}",
        f"[tj:{HEX}]",
        f"\u27e6tj:{HEX}\u27e7",
        f"\u3010tj:{HEX}\u3011",
        f" tj:{HEX} ",
        f'retrieve_tool_output("{HEX}")',
        f"retrieve_tool_output('{HEX}')",
        f'retrieve_tool_output( "tj:{HEX}" )',
    ],
)
def test_resolver_accepts_tinyjuice_markers_and_the_legacy_call_form(text: str) -> None:
    assert parse_ref(text) == parse_ref(H)


def test_tinyjuice_marker_writes_tj_and_the_handles_hex() -> None:
    assert tinyjuice_marker(H) == f"tj:{HEX}"
    with pytest.raises(InvalidHandle):
        tinyjuice_marker(OBJ)


def test_resolver_accepts_object_pointers_with_a_field_path() -> None:
    ref = parse_ref(f"ccr://{OBJ}/content/files/0/a%2Fb")
    assert ref.kind == "object"
    assert ref.handle == OBJ
    assert ref.path == ("content", "files", "0", "a/b")
    assert parse_ref(str(ref)) == ref


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ccr_",
        H.upper(),
        "CCR_" + H[4:],
        H[:-1],
        H + "0",
        "ccr_" + "g" * 32,
        f"<<ccr:{H}>",
        f"<ccr:{H}>>",
        f"<<{H}>>",
        f"ccr:/{H}",
        f"ccr://{H}//x",
        f"ccr:{H}/content",
        f"see {H}",
        "ccr_obj_" + "0" * 31,
        "r12",
        "../../etc/passwd",
        "tj:" + HEX[:16],
        "tj:" + HEX.upper(),
        f"tj:{H}",
        f"[tj:{HEX}",
        f"(tj:{HEX}]",
        f"tj:{HEX}0",
        f"retrieve_tool_output(\"{HEX}')",
        f"retrieve_tool_output({HEX})",
        f'tokenjuice_retrieve("{HEX}")',
    ],
)
def test_resolver_rejects_every_other_shape(text: str) -> None:
    with pytest.raises(InvalidHandle):
        parse_ref(text)


@pytest.mark.parametrize("value", [None, H.encode(), 42, [H]])
def test_resolver_rejects_values_that_are_not_text(value: object) -> None:
    with pytest.raises(InvalidHandle, match="must be text"):
        parse_ref(value)  # type: ignore[arg-type]


def test_find_handles_finds_bare_handles_and_markers_in_order_without_duplicates() -> None:
    other = handle_for(b"other")
    text = f"first <<ccr:{H}>> then ccr:{other}, see ccr://{OBJ}/content and again {H}."
    assert find_handles(text) == [H, other, OBJ]


def test_find_handles_finds_tinyjuice_markers_as_handles_in_order() -> None:
    other = handle_for(b"other")
    text = f'first tj:{HEX}, then <<ccr:{other}>>, legacy retrieve_tool_output("{HEX}"); x-tj:{other[4:]}0 no'
    assert find_handles(text) == [H, other]
    assert find_handles(f'[compacted ... with token "{tinyjuice_marker(other)}"] and {H}') == [other, H]


def test_find_handles_ignores_lookalikes_glued_to_other_word_characters() -> None:
    assert find_handles(f"x{H} {H}0 ccr_{'a' * 31}") == []


@given(st.binary())
def test_every_marker_of_any_bytes_resolves_back_to_its_handle(data: bytes) -> None:
    handle = handle_for(data)
    assert parse_ref(marker(handle)).handle == handle
    assert find_handles(f"text {marker(handle)} more") == [handle]
