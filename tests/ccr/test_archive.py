"""Archives: what ``write_archive`` writes, ``read_archive`` reads back, and nothing damaged gets through."""

from __future__ import annotations

import io
import json
import re

import pytest

from ccr import OBJECT_TYPES, ArchiveInvalid, CorruptRecord, make_object, open_store
from ccr.archive import read_archive, write_archive


def archive_of(records: int = 2, objects: int = 1) -> bytes:
    with open_store(":memory:") as store:
        for i in range(records):
            store.put(f"record {i}".encode() + bytes([0, 255, i]), metadata={"session_id": "s", "kind": "head"})
        for i in range(objects):
            store.put_object(make_object(sorted(OBJECT_TYPES)[0], session_id="s", source="t", content={"i": i}))
        blobs = list(store.iter_blobs())
        objs = list(store.iter_objects())
        out = io.BytesIO()
        write_archive(out, blobs, objs, counts=(len(blobs), len(objs)))
    return out.getvalue()


def lines(data: bytes) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in data.splitlines()]


def test_an_archive_reads_back_to_the_same_records_and_objects() -> None:
    data = archive_of()
    blobs, objects = read_archive(io.BytesIO(data))
    assert len(blobs) == 2 and len(objects) == 1
    assert all(b"record" in payload for _, payload in blobs)
    assert lines(data)[0]["format"] == "ccr-archive"


@pytest.mark.parametrize(
    "mangle",
    [
        lambda ls: [],  # empty
        lambda ls: [{"format": "something-else", "version": 1, "records": 0, "objects": 0}],
        lambda ls: [{**ls[0], "version": 99}, *ls[1:]],
        lambda ls: [{**ls[0], "records": -1}, *ls[1:]],
        lambda ls: [ls[0], {**ls[1], "item": "mystery"}, *ls[2:]],
        lambda ls: [ls[0], {**ls[1], "data": "%%% not base64"}, *ls[2:]],
        lambda ls: [ls[0], {**ls[1], "extra": 1}, *ls[2:]],
        lambda ls: ls[:-1],  # cut short
        lambda ls: [*ls, ls[1]],  # one more than announced
    ],
)
def test_a_damaged_or_foreign_archive_is_refused(mangle) -> None:  # type: ignore[no-untyped-def]
    data = b"".join(json.dumps(item).encode() + b"\n" for item in mangle(lines(archive_of())))
    with pytest.raises(ArchiveInvalid):
        read_archive(io.BytesIO(data))


def test_a_record_or_object_that_does_not_match_its_handle_is_refused() -> None:
    items = lines(archive_of())
    wrong_record = [items[0], {**items[1], "handle": items[2]["handle"]}, *items[2:]]
    wrong_object = [*items[:-1], {**items[-1], "content": {"i": 99}}]
    for broken in (wrong_record, wrong_object):
        data = b"".join(json.dumps(item).encode() + b"\n" for item in broken)
        with pytest.raises(CorruptRecord):
            read_archive(io.BytesIO(data))


def test_writing_refuses_a_record_whose_bytes_no_longer_match() -> None:
    with open_store(":memory:") as store:
        store.put(b"good")
        record, _ = next(store.iter_blobs())
    with pytest.raises(CorruptRecord):
        write_archive(io.BytesIO(), [(record, b"bad")], [], counts=(1, 0))


class CountingReader(io.BytesIO):
    """A file that says how many bytes were asked of it, to prove a bounded read stopped early."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.given = 0

    def readline(self, size: int | None = -1) -> bytes:
        line = super().readline(size)
        self.given += len(line)
        return line


HEADER = archive_of(records=0, objects=0)


@pytest.mark.parametrize(
    "body",
    [
        b"\x00" * (8 << 20),
        b"{" + b"\x00" * (8 << 20),
        b'{"item":"record","data":"' + b"\x01" * (8 << 20),
        b"A" * (4 << 20) + b"\x1f" + b"A" * (4 << 20),
    ],
    ids=["zeros", "brace then zeros", "record then control bytes", "control byte past 4 MiB"],
)
def test_a_line_of_bytes_json_never_holds_is_refused_at_the_first_chunk_that_shows_them(body: bytes) -> None:
    source = CountingReader(HEADER + body)
    with pytest.raises(ArchiveInvalid, match="control bytes"):
        read_archive(source, max_bytes=1 << 30)
    found = re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f]", body)
    assert found is not None
    first_control = found.start()
    assert source.given <= len(HEADER) + first_control + (1 << 20)  # no more than the chunk that showed it


@pytest.mark.parametrize("newline", [b"", b"\n"])
def test_a_line_longer_than_any_record_of_the_budget_is_refused_without_reading_it_whole(newline: bytes) -> None:
    from ccr.archive import line_limit

    limit = line_limit(3000)
    source = CountingReader(HEADER + b'{"item":"record","data":"' + b"QUFB" * (2 << 20) + newline)
    with pytest.raises(ArchiveInvalid, match=f"longer than {limit:,} bytes"):
        read_archive(source, max_bytes=3000)
    assert source.given <= len(HEADER) + limit + (1 << 20)


def test_a_record_as_large_as_the_budget_still_reads_back() -> None:
    with open_store(":memory:", max_bytes=3 << 20) as store:
        store.put(bytes(range(256)) * (3 << 12))  # exactly the budget, binary
        blobs = list(store.iter_blobs())
        out = io.BytesIO()
        write_archive(out, blobs, [], counts=(1, 0))
    (record, data), *_ = read_archive(io.BytesIO(out.getvalue()), max_bytes=3 << 20)[0]
    assert len(data) == 3 << 20 and record.size == len(data)


def test_records_past_the_budget_stop_the_reading_there_with_nothing_stored() -> None:
    from ccr import BudgetExceeded

    data = archive_of(records=5, objects=0)
    with pytest.raises(BudgetExceeded, match="line 5: the archive's records pass the store's budget of 36 bytes"):
        read_archive(io.BytesIO(data), max_bytes=36)


@pytest.mark.parametrize(
    "item",
    [
        {"item": "record", "handle": "ccr_x", "size": "big", "data": ""},
        {"item": "record", "data": "AAAA"},
        {"item": "object", "id": 5, "type": ["a\nb"]},
        {"item": "record", "data": "not base64!\n"},
    ],
)
def test_an_invalid_item_is_refused_on_one_line(item: dict) -> None:  # type: ignore[type-arg]
    header = json.dumps({**lines(HEADER)[0], "records": 1}).encode() + b"\n"
    with pytest.raises(ArchiveInvalid) as refused:
        read_archive(io.BytesIO(header + json.dumps(item).encode() + b"\n"), max_bytes=1 << 20)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("line 2: not a valid ")
