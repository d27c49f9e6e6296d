"""Archives: what ``write_archive`` writes, ``read_archive`` reads back, and nothing damaged gets through."""

from __future__ import annotations

import io
import json

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
