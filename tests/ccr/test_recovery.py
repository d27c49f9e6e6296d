"""The recovery tool answers from the store, and never breaks the loop."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ccr import marker, open_store, tinyjuice_marker
from ccr.recovery import DEFAULT_MAX_TOKENS, RECOVERY_TOOL, RECOVERY_TOOL_NAME, TINYJUICE_RECOVERY_TOOL, recover
from compactor.core.config import load_settings
from compactor.core.messages import Message, ToolResultBlock, ToolUseBlock
from compactor.core.tokens import RoughCounter, TiktokenCounter
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.spans import messages_jsonl

ORIGINAL = b"\n\n".join(f"paragraph {i}: the value of item-{i} is {i * 7}".encode() for i in range(50))


@pytest.fixture
def stored(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = open_store(tmp_path / "ccr.db")
    return store, store.put(ORIGINAL)


def test_the_tool_definition_is_a_valid_messages_tool() -> None:
    assert RECOVERY_TOOL["name"] == RECOVERY_TOOL_NAME
    assert RECOVERY_TOOL["input_schema"]["required"] == ["handle"]
    assert set(RECOVERY_TOOL["input_schema"]["properties"]) == {
        "handle",
        "query",
        "lines",
        "bytes",
        "max_tokens",
        "exact",
    }


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
    assert (
        recover(store, {"handle": handle, "lines": [1, 1]}).content.strip() == "paragraph 0: the value of item-0 is 0"
    )
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


def test_a_shared_concept_the_store_raises_is_an_error_answer_too(stored) -> None:  # type: ignore[no-untyped-def]
    store, handle = stored  # a bad range is the shared InvalidRequest, not a CCRError
    answer = recover(store, {"handle": handle, "lines": [3, 1]})
    assert answer.is_error and answer.content.startswith("usage_error: ")


def test_recovery_answers_are_never_deduplicated(tmp_path: Path) -> None:
    settings = load_settings(env={})
    orch = Orchestrator(settings=settings, store=open_store(tmp_path / "ccr.db"), counter=RoughCounter())
    handle = orch.store.put(ORIGINAL)
    answers = []
    for call_id in ("a", "b"):
        orch.add_message(
            Message(
                role="assistant",
                content=[
                    ToolUseBlock(id=call_id, name=RECOVERY_TOOL_NAME, input={"handle": handle}),
                ],
            )
        )
        answers.append(orch.answer_recovery_call(call_id, {"handle": handle}))
    texts = [m.tool_results()[0].text() for m in answers]
    assert texts == [ORIGINAL.decode()] * 2
    assert orch.state.dedup.hits == {}


# -- answers that fit in a context -----------------------------------------------------------------------

COUNTER = TiktokenCounter()
CUT = re.compile(r"\[ccr: answer cut to [\d,]+ tokens: .*\]\n\Z", re.S)


def _conversation(turns: int) -> list[Message]:
    messages = []
    for i in range(turns):
        messages.append(
            Message(
                role="assistant", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"make test {i}"})]
            )
        )
        log = f"run {i}\n" + "".join(f"ok line {j}\n" for j in range(200)) + f'done {i}: "all good"\tend\n'
        messages.append(Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content=log)]))
    return messages


def _body(content: str) -> str:
    """The answer without its cut notice."""
    return CUT.sub("", content)


def test_a_stored_tool_output_comes_back_raw_not_json_escaped_inside_its_message(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    messages = _conversation(3)
    handle = store.put(messages_jsonl(messages))
    answer = recover(store, {"handle": handle, "query": "done 1"})
    assert not answer.is_error
    log = messages[3].tool_results()[0].text()
    assert log in answer.content  # newlines, quotes and tabs as the tool gave them
    assert "\\n" not in answer.content and '\\"' not in answer.content
    assert "[tool call Bash t1]" in answer.content
    exact = recover(store, {"handle": handle, "query": "done 1", "exact": True})
    assert json.dumps(log)[1:-1] in exact.content  # JSONL as stored


def test_every_answer_is_bounded_and_names_the_line_ranges_that_page_through_the_rest(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    original = "".join(f"line {i}: some build output for step {i}\n" for i in range(1, 5_001)).encode()
    handle = store.put(original)
    for call in ({"handle": handle}, {"handle": handle, "query": "zebra"}):
        answer = recover(store, call)
        assert COUNTER.count_text(answer.content) <= DEFAULT_MAX_TOKENS  # the notices count too
        assert CUT.search(answer.content) and '"lines": [' in answer.content
    # Paging with the ranges the notice names gives back every byte, in order.
    answer = recover(store, {"handle": handle, "max_tokens": 700})
    named = re.search(r'Read on with "lines": \[(\d+), (\d+)\].* up to line (\d+)', answer.content)
    assert named is not None and int(named[3]) == 5_000
    pages, at, size = [_body(answer.content)], int(named[1]), int(named[2]) - int(named[1]) + 1
    assert at == _body(answer.content).count("\n") + 1
    while at <= 5_000:
        answer = recover(store, {"handle": handle, "lines": [at, at + size - 1], "max_tokens": 700})
        assert COUNTER.count_text(answer.content) <= 700
        pages.append(_body(answer.content))
        at += pages[-1].count("\n")
    assert "".join(pages).encode() == original and len(pages) > 10
    whole = recover(store, {"handle": handle, "max_tokens": 0})
    assert whole.content.encode() == original


def test_a_line_longer_than_the_bound_is_shown_from_its_start_with_byte_ranges_for_the_rest(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    original = json.dumps({"rows": [{"id": i, "name": f"item {i}"} for i in range(3_000)]}).encode()
    handle = store.put(original)
    answer = recover(store, {"handle": handle, "max_tokens": 500})
    assert COUNTER.count_text(answer.content) <= 500
    head = answer.content.split("\n[ccr: answer cut")[0]
    assert original.startswith(head.encode()) and head
    named = re.search(r'"bytes": \[(\d+), (\d+)\].* up to byte (\d+)', answer.content)
    assert named is not None and int(named[1]) == len(head.encode()) and int(named[3]) == len(original)
    got, at, size = head.encode(), int(named[1]), int(named[2]) - int(named[1])
    while at < len(original):  # the pages the notice names, one after another
        answer = recover(store, {"handle": handle, "bytes": [at, at + size], "max_tokens": 500})
        assert COUNTER.count_text(answer.content) <= 500 and "answer cut" not in answer.content
        got += answer.content.encode()
        at += size
    assert got == original


def test_a_query_answer_cut_to_the_bound_says_where_the_other_matches_are(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    handle = store.put(messages_jsonl(_conversation(20)))
    answer = recover(store, {"handle": handle, "query": "ok line"})
    assert COUNTER.count_text(_body(answer.content)) <= DEFAULT_MAX_TOKENS
    found = re.search(r"(\d+) of (\d+) matching units shown\. The others are at lines ([\d, -]+)", answer.content)
    assert found is not None and int(found[1]) < int(found[2])
    first_other = int(found[3].split(",")[0].split("-")[0])
    other = recover(store, {"handle": handle, "lines": [first_other, first_other]})
    assert f"[line {first_other}: user]" in other.content and "ok line 199" in other.content


def test_the_orchestrator_bounds_its_recovery_answers_with_its_own_counter(tmp_path: Path) -> None:
    orch = Orchestrator(settings=load_settings(env={}), store=open_store(tmp_path / "ccr.db"), counter=RoughCounter())
    handle = orch.store.put(("x" * 60 + "\n").encode() * 2_000)
    orch.add_message(
        Message(role="assistant", content=[ToolUseBlock(id="r1", name=RECOVERY_TOOL_NAME, input={"handle": handle})])
    )
    result = orch.answer_recovery_call("r1", {"handle": handle, "max_tokens": 300})
    text = result.tool_results()[0].text()
    assert RoughCounter().count_text(_body(text)) <= 300 and "answer cut to 300 tokens" in text


def test_a_negative_max_tokens_is_an_error_answer(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    answer = recover(store, {"handle": store.put(b"abc"), "max_tokens": -1})
    assert answer.is_error and "max_tokens" in answer.content


def test_a_query_whose_every_match_is_over_the_bound_shows_the_start_of_the_best_one(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    rows = [json.dumps({"role": "user", "content": f"alpha {i} " + "filler " * 3_000}) for i in range(3)]
    rows[1] = json.dumps({"role": "user", "content": "alpha beta " + "filler " * 3_000})
    handle = store.put(("\n".join(rows) + "\n").encode())
    answer = recover(store, {"handle": handle, "query": "alpha beta", "max_tokens": 400})
    assert COUNTER.count_text(answer.content) <= 400
    assert "[line 2: user]\nalpha beta" in answer.content and '"bytes": [' in answer.content


def test_a_matching_unit_too_large_to_show_still_shows_its_lines_that_match_the_query(tmp_path: Path) -> None:
    store = open_store(tmp_path / "ccr.db")
    notes = "".join(f"{i:04d} the deploy key rotates on day {i % 28 + 1}\n" for i in range(1_500))
    messages = [
        Message(role="user", content="read the notes, then tell me when the key rotates on day 17"),
        Message(role="assistant", content=[ToolUseBlock(id="r1", name="Read", input={"file_path": "/n.txt"})]),
        Message(role="user", content=[ToolResultBlock(tool_use_id="r1", content=notes)]),
    ]
    handle = store.put(messages_jsonl(messages))
    answer = recover(store, {"handle": handle, "query": "rotates on day 17"})
    assert COUNTER.count_text(answer.content) <= DEFAULT_MAX_TOKENS
    assert "matching unit left out to fit: line 3; the lines of it that match most of the query" in answer.content
    assert "0016 the deploy key rotates on day 17\n" in answer.content
    assert "0017 the deploy key rotates on day 18" not in answer.content


BINARY_CASES = {
    "invalid UTF-8": b"\xff\xfe not text \x80\x81",
    "NUL and high bytes": bytes(range(256)) * 4,
    "a cut character": "wörld".encode()[:2],
    "latin-1 text": "café crème".encode("latin-1"),
}


@pytest.mark.parametrize("name", list(BINARY_CASES), ids=list(BINARY_CASES))
def test_exact_on_bytes_that_are_not_utf8_gives_base64_after_a_notice_never_replacement_characters(name: str) -> None:
    import base64

    data = BINARY_CASES[name]
    store = open_store(":memory:")
    handle = store.put(data)
    answer = recover(store, {"handle": handle, "exact": True, "max_tokens": 0})
    assert answer.is_error is False and "\ufffd" not in answer.content
    notice, encoded = answer.content.rstrip("\n").split("\n")
    assert "not UTF-8 text, so they are given as base64" in notice and "left out" not in notice
    assert base64.b64decode(encoded) == data


def test_exact_base64_that_does_not_fit_max_tokens_names_the_byte_range_left_out() -> None:
    import base64

    data = bytes(range(256)) * 40
    store = open_store(":memory:")
    handle = store.put(data)
    answer = recover(store, {"handle": handle, "exact": True, "max_tokens": 300})
    notice, encoded = answer.content.rstrip("\n").split("\n")
    given = base64.b64decode(encoded)
    assert 0 < len(given) < len(data) and data.startswith(given) and len(given) % 3 == 0
    assert f"bytes [{len(given)}, {len(data)}) are left out to fit" in notice
    rest = recover(store, {"handle": handle, "exact": True, "bytes": [len(given), len(data)], "max_tokens": 0})
    assert base64.b64decode(rest.content.rstrip("\n").split("\n")[1]) == data[len(given) :]


def test_exact_on_utf8_text_is_still_the_text_itself() -> None:
    store = open_store(":memory:")
    handle = store.put("plain text, é and 😀\n".encode())
    assert recover(store, {"handle": handle, "exact": True}).content == "plain text, é and 😀\n"
