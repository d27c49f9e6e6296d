"""Splitting an original into whole units, by kind."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from ccr._units import segment


def _texts(data: bytes) -> list[bytes]:
    seg = segment(data)
    assert seg is not None
    return [data[a:b] for a, b in seg.units]


def test_jsonl_splits_into_lines_and_skips_blank_ones() -> None:
    data = b'{"a": 1}\n\n{"b": 2}\n{"c": 3}'
    seg = segment(data)
    assert seg is not None and seg.kind == "jsonl"
    assert _texts(data) == [b'{"a": 1}\n', b'{"b": 2}\n', b'{"c": 3}']


def test_json_array_of_objects_splits_into_objects_with_exact_byte_spans() -> None:
    data = '  [ {"k": "é"} ,\n {"k": [1, 2]}]\n'.encode()
    seg = segment(data)
    assert seg is not None and seg.kind == "json_array"
    assert _texts(data) == ['{"k": "é"}'.encode(), b'{"k": [1, 2]}']


def test_json_array_of_scalars_is_not_split_as_objects() -> None:
    seg = segment(b"[1, 2, 3]")
    assert seg is None or seg.kind != "json_array"


def test_csv_keeps_the_header_apart_and_rows_whole() -> None:
    data = b'a,b\n1,"x\ny"\n2,z\n'
    seg = segment(data)
    assert seg is not None and seg.kind == "csv"
    assert seg.header is not None and data[seg.header[0] : seg.header[1]] == b"a,b\n"
    assert _texts(data) == [b'1,"x\ny"\n', b"2,z\n"]


def test_ragged_comma_text_is_not_csv() -> None:
    seg = segment(b"a,b\nc,d,e\n\nlast, para\n")
    assert seg is not None and seg.kind == "paragraph"


def test_paragraphs_split_on_blank_lines() -> None:
    data = b"one\ntwo\n \n\nthree\n\n"
    seg = segment(data)
    assert seg is not None and seg.kind == "paragraph"
    assert _texts(data) == [b"one\ntwo\n", b"three\n"]


def test_a_single_unit_or_binary_data_means_no_units() -> None:
    assert segment(b"just one paragraph\nof text\n") is None
    assert segment(b"\xff\xfe\x00") is None
    assert segment(b"") is None


def test_json_nested_too_deeply_to_parse_is_split_as_plain_text_instead_of_crashing() -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
    assert segment(deep + b"\n" + b'{"b": 1}\n') is None
    seg = segment(deep + b"\n\n" + b'{"b": 1}\n')
    assert seg is not None and seg.kind == "paragraph"
    array = b"[" + deep + b', {"b": 1}]'
    seg = segment(array)
    assert seg is None or seg.kind != "json_array"


@given(st.lists(st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3), min_size=2, max_size=8))
def test_every_json_array_unit_parses_back_to_its_object(records: list[dict[str, str]]) -> None:
    data = json.dumps(records, indent=1, ensure_ascii=False).encode()
    assert [json.loads(t) for t in _texts(data)] == records


@given(st.lists(st.text(alphabet="abc xyz", min_size=1, max_size=20).filter(str.strip), min_size=2, max_size=10))
def test_paragraph_units_are_disjoint_and_in_order(paragraphs: list[str]) -> None:
    data = "\n\n".join(paragraphs).encode()
    seg = segment(data)
    assert seg is not None
    ends = [0]
    for a, b in seg.units:
        assert ends[-1] <= a < b
        ends.append(b)


READ_ARROW = "".join(f"{i:>6}\u2192line {i} of the file\n" for i in range(1, 8)).encode()
READ_TAB = "".join(f"{i}\tline {i} of the file\n" for i in range(1, 8)).encode()


def test_numbered_read_output_splits_into_its_lines() -> None:
    for data in (READ_ARROW, READ_TAB):
        seg = segment(data)
        assert seg is not None and seg.kind == "numbered_lines"
        assert [data[a:b] for a, b in seg.units] == data.splitlines(keepends=True)


def test_a_note_after_the_numbered_lines_stays_with_the_last_line_and_a_preamble_is_the_header() -> None:
    note = b"\n<system-reminder>\nconsider whether the file is malicious\n</system-reminder>\n"
    data = b"Here is the file:\n" + READ_ARROW + note
    seg = segment(data)
    assert seg is not None and seg.kind == "numbered_lines"
    assert seg.header is not None and data[seg.header[0] : seg.header[1]] == b"Here is the file:\n"
    assert len(seg.units) == 7
    assert data[seg.units[-1][0] : seg.units[-1][1]].endswith(note)
    assert seg.units[-1][1] == len(data)


def test_numbers_that_do_not_count_up_by_one_are_not_a_numbered_listing() -> None:
    data = b"1\tfirst\n5\tsecond\n\n9\tthird\n"
    seg = segment(data)
    assert seg is None or seg.kind != "numbered_lines"
