"""Retrieval: exact, by line or byte range, and by query over whole units."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ccr import InvalidRequest, Store
from ccr.retrieval import (
    QUERY_UNITS,
    gap_marker,
    notice_text,
    retrieve,
    select_bytes,
    select_lines,
    select_query,
)

GAP = re.compile(r"^\[\.\.\. (\d+) (?:units?|lines?) omitted \.\.\.\]$")


def _non_gap_lines(data: bytes) -> list[str]:
    return [line for line in data.decode().splitlines() if line and not GAP.match(line)]


def _omitted(data: bytes) -> int:
    return sum(int(m.group(1)) for line in data.decode().splitlines() if (m := GAP.match(line)))


# -- ranges -------------------------------------------------------------------------


def test_lines_are_one_based_inclusive_and_keep_their_endings() -> None:
    data = b"one\ntwo\r\nthree\nfour"
    result = select_lines(data, (2, 3))
    assert result.data == b"two\r\nthree\n"
    assert (result.mode, result.start, result.end) == ("lines", 2, 3)


def test_line_range_is_clamped_at_the_end() -> None:
    assert select_lines(b"a\nb\nc\n", (2, 99)).data == b"b\nc\n"
    assert select_lines(b"a\nb\nc\n", (2, 99)).end == 3


def test_line_range_starting_past_the_end_is_empty() -> None:
    result = select_lines(b"a\nb\n", (3, 5))
    assert result.data == b""
    assert not result.whole


@pytest.mark.parametrize("span", [(0, 3), (4, 2), (-1, 1)])
def test_malformed_line_ranges_are_refused(span: tuple[int, int]) -> None:
    with pytest.raises(InvalidRequest):
        select_lines(b"a\n", span)


def test_byte_range_is_half_open_and_clamped() -> None:
    assert select_bytes(b"abcdef", (1, 3)).data == b"bc"
    assert select_bytes(b"abcdef", (4, 100)).data == b"ef"
    assert select_bytes(b"abcdef", (10, 20)).data == b""


def test_byte_range_inside_a_multibyte_character_widens_to_the_whole_character() -> None:
    data = "aé€😀z".encode()  # a:1 é:2 €:3 😀:4 z:1 bytes
    assert select_bytes(data, (2, 3)).data == "é".encode()
    assert select_bytes(data, (4, 5)).data == "€".encode()
    result = select_bytes(data, (7, 9))
    assert result.data == "😀".encode()
    assert (result.start, result.end) == (6, 10)
    assert select_bytes(data, (2, 2)).data == b""


def test_byte_range_of_binary_data_is_a_plain_slice() -> None:
    data = bytes([0x80, 0x81, 0xFF, 0x00, 0xC3])
    assert select_bytes(data, (1, 3)).data == bytes([0x81, 0xFF])


@pytest.mark.parametrize("span", [(-1, 2), (3, 1)])
def test_malformed_byte_ranges_are_refused(span: tuple[int, int]) -> None:
    with pytest.raises(InvalidRequest):
        select_bytes(b"abc", span)


@given(text=st.text(min_size=1), a=st.integers(0, 400), b=st.integers(0, 400))
def test_any_byte_range_of_text_is_valid_utf8_and_covers_the_requested_bytes(text: str, a: int, b: int) -> None:
    data = text.encode("utf-8")
    start, end = min(a, b), max(a, b)
    result = select_bytes(data, (start, end))
    result.data.decode("utf-8")
    assert result.start is not None and result.end is not None
    assert data[result.start : result.end] == result.data
    clamped_start, clamped_end = min(start, len(data)), min(end, len(data))
    if clamped_start < clamped_end:
        assert result.start <= clamped_start and clamped_end <= result.end
        assert result.end - result.start - (clamped_end - clamped_start) <= 6


# -- query ----------------------------------------------------------------------------


def _transcript(n: int) -> bytes:
    lines = []
    for i in range(n):
        text = f"message {i} about the parser" if i in (7, 8, 30) else f"message {i} about lunch"
        lines.append(json.dumps({"type": "user", "uuid": f"u{i}", "message": {"content": text}}))
    return ("\n".join(lines) + "\n").encode()


def test_query_returns_only_whole_jsonl_lines_in_original_order_with_gap_markers() -> None:
    data = _transcript(40)
    result = select_query(data, "parser")
    kept = _non_gap_lines(result.data)
    assert [json.loads(line)["uuid"] for line in kept] == ["u7", "u8", "u30"]
    assert all(line.encode() + b"\n" in data for line in kept)
    assert result.data.decode().splitlines()[0] == gap_marker(7)
    assert gap_marker(21) in result.data.decode().splitlines()
    assert result.data.decode().splitlines()[-1] == gap_marker(9)
    assert _omitted(result.data) + len(kept) == 40
    assert (result.units_total, result.units_returned, result.whole) == (40, 3, False)


def test_adjacent_units_get_no_marker_between_them() -> None:
    lines = select_query(_transcript(40), "parser").data.decode().splitlines()
    assert not GAP.match(lines[2])


def test_query_returns_at_most_the_best_twenty_units() -> None:
    paragraphs = [f"paragraph {i} " + ("needle " * (i % 5 + 1)) for i in range(50)]
    data = "\n\n".join(paragraphs).encode()
    result = select_query(data, "needle")
    kept = _non_gap_lines(result.data)
    assert len(kept) == QUERY_UNITS
    assert all(p in paragraphs for p in kept)
    numbers = [int(p.split()[1]) for p in kept]
    assert numbers == sorted(numbers)
    assert {n % 5 for n in numbers} == {3, 4}
    assert _omitted(result.data) + len(kept) == 50


def test_query_with_no_hit_returns_the_whole_original() -> None:
    data = _transcript(10)
    result = select_query(data, "zebra")
    assert result.data == data
    assert result.whole
    assert result.notice == "query_no_match"
    text = notice_text(result, query="zebra")
    assert text is not None and "zebra" in text and "whole original" in text


def test_query_on_text_without_units_returns_the_whole_original() -> None:
    data = b"one single paragraph mentioning the parser\nand continuing here\n"
    result = select_query(data, "parser")
    assert result.data == data
    assert result.whole
    assert result.notice == "query_no_units"


def test_a_range_past_the_end_is_empty_and_says_so_and_one_inside_says_nothing() -> None:
    data = b"one\ntwo\n"
    past = retrieve(data, handle="ccr_x", lines=(1000, 2000))
    assert (past.data, past.notice, past.lines_total) == (b"", "past_end", 2)
    assert "2 lines" in (notice_text(past) or "")
    assert retrieve(data, handle="ccr_x", byte_range=(8, 20)).notice == "past_end"
    for inside in (retrieve(data, handle="ccr_x", lines=(2, 9)), retrieve(data, handle="ccr_x", byte_range=(0, 0))):
        assert inside.notice is None and notice_text(inside) is None
    assert retrieve(b"one\n\ntwo\n", handle="ccr_x", query="two").notice is None


def test_query_on_numbered_read_output_returns_the_matching_lines_with_line_gaps() -> None:
    lines = [f"{i:>6}\u2192" + ("def compute_total(order):" if i == 40 else f"filler text {i}") for i in range(1, 400)]
    data = ("\n".join(lines) + "\n").encode()
    result = select_query(data, "compute_total")
    assert result.data == (b"[... 39 lines omitted ...]\n" + lines[39].encode() + b"\n[... 359 lines omitted ...]\n")
    assert result.units_total == 399 and result.notice is None


def test_query_on_binary_data_returns_the_whole_original() -> None:
    data = bytes(range(256)) * 4
    assert select_query(data, "parser").data == data


def test_empty_query_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        select_query(b"a\n\nb", "  ")


def test_query_over_a_json_array_returns_whole_objects() -> None:
    records = [{"id": i, "name": "widget" if i == 3 else "gadget", "note": "é"} for i in range(6)]
    data = json.dumps(records, indent=2, ensure_ascii=False).encode()
    result = select_query(data, "widget")
    kept = result.data.decode().split("\n" + gap_marker(2) + "\n")[0]
    chunks = result.data.decode()
    assert gap_marker(3) in chunks
    assert gap_marker(2) in chunks
    obj_text = chunks.split(gap_marker(3) + "\n", 1)[1].split("\n" + gap_marker(2), 1)[0]
    assert json.loads(obj_text) == records[3]
    assert obj_text.encode() in data
    assert kept


def test_query_over_csv_keeps_the_header_and_whole_rows() -> None:
    rows = ["id,name,city"] + [f"{i},person {i},{'Paris' if i == 5 else 'Rome'}" for i in range(10)]
    rows.insert(4, '99,"multi\nline, quoted",Paris')
    data = ("\n".join(rows) + "\n").encode()
    lines = select_query(data, "paris").data.decode().splitlines()
    assert lines[0] == "id,name,city"
    assert lines[1] == gap_marker(3)
    assert lines[2:4] == ['99,"multi', 'line, quoted",Paris']
    assert "5,person 5,Paris" in lines


def test_query_over_paragraphs_returns_whole_paragraphs() -> None:
    data = b"intro text\nstill intro\n\n\nthe parser fails here\nwith detail\n\noutro\n"
    result = select_query(data, "parser")
    assert result.data == (gap_marker(1) + "\n\nthe parser fails here\nwith detail\n\n" + gap_marker(1) + "\n").encode()


# -- dispatch ---------------------------------------------------------------------------


def test_exact_retrieval_is_flagged_as_recovery_output() -> None:
    result = retrieve(b"abc", handle="h")
    assert (result.mode, result.data, result.recovered, result.whole) == ("exact", b"abc", True, True)
    assert result.text == "abc"


def test_every_mode_is_flagged_as_recovery_output() -> None:
    data = b"x\n\ny parser\n\nz"
    results = [
        retrieve(data, handle="h", query="parser"),
        retrieve(data, handle="h", lines=(1, 1)),
        retrieve(data, handle="h", byte_range=(0, 1)),
    ]
    assert [r.mode for r in results] == ["query", "lines", "bytes"]
    assert all(r.recovered for r in results)


def test_two_selections_at_once_are_refused() -> None:
    with pytest.raises(InvalidRequest):
        retrieve(b"abc", handle="h", lines=(1, 1), byte_range=(0, 1))


def test_store_retrieve_names_the_handle_and_selects(store: Store) -> None:
    handle = store.put(_transcript(40))
    result = store.retrieve(f"<<ccr:{handle}>>", query="parser")
    assert (result.handle, result.ref, result.mode) == (handle, handle, "query")
    assert store.retrieve(handle, lines=(8, 8)).data == _transcript(40).splitlines(keepends=True)[7]


def test_query_on_a_real_transcript_returns_only_whole_lines(shared_transcript: Path) -> None:
    data = shared_transcript.read_bytes()
    original_lines = set(data.splitlines())
    result = select_query(data, "error test failed")
    kept = [line for line in result.data.splitlines() if line and not GAP.match(line.decode())]
    assert not result.whole
    assert all(line in original_lines for line in kept)
    assert 0 < len(kept) <= QUERY_UNITS
    assert _omitted(result.data) + len(kept) == result.units_total


@given(
    words=st.lists(st.sampled_from(["parser", "lunch", "error", "tool", "file"]), min_size=2, max_size=60),
    query=st.sampled_from(["parser", "error tool", "missing"]),
)
def test_query_output_is_whole_units_and_accounts_for_every_unit(words: list[str], query: str) -> None:
    lines = [json.dumps({"i": i, "text": w}) for i, w in enumerate(words)]
    data = ("\n".join(lines) + "\n").encode()
    result = select_query(data, query)
    if result.whole:
        assert result.data == data
        assert not any(w in query.split() for w in words)
        return
    kept = _non_gap_lines(result.data)
    assert all(line in lines for line in kept)
    assert [json.loads(k)["i"] for k in kept] == sorted(json.loads(k)["i"] for k in kept)
    assert _omitted(result.data) + len(kept) == len(lines)
    assert 0 < len(kept) <= QUERY_UNITS


def _read_results(folder: Path, limit: int = 20) -> list[str]:
    """Large line-numbered Read results from real transcripts."""
    found: list[str] = []
    for path in sorted(folder.rglob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            if b'"tool_result"' not in raw:
                continue
            try:
                content = json.loads(raw).get("message", {}).get("content")
            except (ValueError, AttributeError):
                continue
            for block in content if isinstance(content, list) else []:
                text = block.get("content") if isinstance(block, dict) else None
                if isinstance(text, list):
                    text = "".join(b.get("text", "") for b in text if isinstance(b, dict))
                if isinstance(text, str) and len(text) > 5000 and re.match(r" *1(\u2192|\t)", text):
                    found.append(text)
                    if len(found) >= limit:
                        return found
    return found


def test_query_on_real_read_results_returns_matching_lines_not_the_whole_file(shared_transcripts: Path) -> None:
    results = _read_results(shared_transcripts)
    if not results:
        pytest.skip("no large Read result in the shared transcripts")
    for text in results:
        data = text.encode()
        lines = text.splitlines()
        target = max(lines[len(lines) // 2 :], key=lambda line: len(set(re.findall(r"[a-z]{6,}", line.lower()))))
        words = re.findall(r"[a-z]{6,}", target.lower())
        if not words:
            continue
        result = select_query(data, " ".join(sorted(set(words))[:3]))
        assert not result.whole and result.notice is None
        assert len(result.data) < len(data) / 2
        assert all(
            line.encode() + b"\n" in data + b"\n" or GAP.match(line) for line in result.data.decode().splitlines()
        )
