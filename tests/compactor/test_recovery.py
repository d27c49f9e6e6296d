"""The recovery tool answers from the store, and never breaks the loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from ccr import marker, open_store, tinyjuice_marker
from compactor.config import load_settings
from compactor.messages import Message, ToolUseBlock
from compactor.orchestrator import Orchestrator
from compactor.recovery import RECOVERY_TOOL, RECOVERY_TOOL_NAME, TINYJUICE_RECOVERY_TOOL, recover
from compactor.tokens import RoughCounter

ORIGINAL = b"\n\n".join(f"paragraph {i}: the value of item-{i} is {i * 7}".encode() for i in range(50))


@pytest.fixture
def stored(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = open_store(tmp_path / "ccr.db")
    return store, store.put(ORIGINAL)


def test_the_tool_definition_is_a_valid_messages_tool() -> None:
    assert RECOVERY_TOOL["name"] == RECOVERY_TOOL_NAME
    assert RECOVERY_TOOL["input_schema"]["required"] == ["handle"]
    assert set(RECOVERY_TOOL["input_schema"]["properties"]) == {"handle", "query", "lines", "bytes"}


def test_a_marker_brings_back_the_whole_original(stored) -> None:  # type: ignore[no-untyped-def]
    store, handle = stored
    answer = recover(store, {"handle": marker(handle)})
    assert not answer.is_error and answer.content.encode() == ORIGINAL


def test_tinyjuice_s_tool_is_offered_and_its_token_brings_back_the_whole_original(stored) -> None:  # type: ignore[no-untyped-def]
    store, handle = stored
    assert TINYJUICE_RECOVERY_TOOL["name"] == "tokenjuice_retrieve"
    assert TINYJUICE_RECOVERY_TOOL["input_schema"]["required"] == ["token"]
    for token in (tinyjuice_marker(handle), f'retrieve_tool_output("{handle[4:]}")', handle):
        answer = recover(store, {"token": token})
        assert not answer.is_error and answer.content.encode() == ORIGINAL
    assert recover(store, {"token": handle, "handle": handle}).is_error


def test_query_lines_and_bytes_select_parts(stored) -> None:  # type: ignore[no-untyped-def]
    store, handle = stored
    found = recover(store, {"handle": handle, "query": "item-17"})
    assert "item-17 is 119" in found.content and len(found.content) < len(ORIGINAL)
    assert recover(store, {"handle": handle, "lines": [1, 1]}).content.strip() == "paragraph 0: the value of item-0 is 0"
    assert recover(store, {"handle": handle, "bytes": [0, 9]}).content == "paragraph"


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"handle": "nonsense"}, "ccr_invalid_handle"),
        ({"handle": "ccr_" + "f" * 32}, "ccr_not_found"),
        ({}, "handle"),
        ({"handle": "x", "lines": "1-2"}, "lines"),
        ({"handle": "x", "query": "a", "lines": [1, 2]}, "at most one"),
        ({"handle": "x", "colour": "red"}, "colour"),
    ],
)
def test_a_bad_call_is_an_error_answer_not_an_exception(stored, tool_input: dict, expected: str) -> None:  # type: ignore[no-untyped-def,type-arg]
    store, _ = stored
    answer = recover(store, tool_input)
    assert answer.is_error and expected in answer.content


def test_recovery_answers_are_never_deduplicated(tmp_path: Path) -> None:
    settings = load_settings(env={})
    orch = Orchestrator(settings=settings, store=open_store(tmp_path / "ccr.db"), counter=RoughCounter())
    handle = orch.store.put(ORIGINAL)
    answers = []
    for call_id in ("a", "b"):
        orch.add_message(Message(role="assistant", content=[
            ToolUseBlock(id=call_id, name=RECOVERY_TOOL_NAME, input={"handle": handle}),
        ]))
        answers.append(orch.answer_recovery_call(call_id, {"handle": handle}))
    texts = [m.tool_results()[0].text() for m in answers]
    assert texts == [ORIGINAL.decode()] * 2
    assert orch.state.dedup.hits == {}
