"""``ccr repair``: a store damaged at page level gives back every record outside the damage.

Which records a damaged page held is found independently of the salvage
code: records here are small enough to sit whole inside one page, so the
original file shows where each one's bytes are.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from ccr import open_store
from tests.ccr.conftest import ccr

PAGE = 4096


def payloads(count: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [f"record {i}: ".encode() + rng.randbytes(rng.choice([40, 300, 900, 1500])) for i in range(count)]


def build(db: Path, datas: list[bytes], *, extra_big: bool = True) -> dict[str, bytes]:
    stored: dict[str, bytes] = {}
    with open_store(db) as store:
        for i, data in enumerate(datas):
            handle = store.put(data, producer="test", metadata={"session_id": f"s{i % 3}", "kind": "message"})
            stored[handle] = data
        if extra_big:  # overflow pages too
            for data in (random.Random(7).randbytes(30_000), random.Random(8).randbytes(70_000)):
                stored[store.put(data, producer="test")] = data
    return stored


def damage(db: Path, offset: int, length: int = PAGE) -> None:
    with db.open("r+b") as f:
        f.seek(offset)
        f.write(b"\xa5" * length)


def on_page(original: bytes, data: bytes, offset: int) -> bool:
    """Whether ``data`` sits (whole) in the page at ``offset`` of the original file."""
    at = original.find(data)
    return at >= 0 and offset <= at < offset + PAGE


def repaired(path: Path) -> dict[str, bytes]:
    with open_store(path) as store:
        return {r.handle: store.get(r.handle) for r in store.records()}


def test_damage_at_offset_4096_loses_nothing_and_the_store_works_again(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    stored = build(db, payloads(300, seed=1))
    damage(db, 4096)
    broken = ccr("--store", str(db), "verify")
    # verify's rule: damage found is 65, whether in one record or in the file itself
    assert broken.returncode == 65 and broken.stderr.startswith(b"ccr: ccr_damaged_file: ")
    assert b"malformed" in broken.stderr
    assert b"ccr repair" in broken.stderr
    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert f"salvaged {len(stored)} record(s)".encode() in done.stdout
    assert b"lost:" not in done.stdout
    assert repaired(db) == stored
    assert ccr("--store", str(db), "verify").returncode == 0
    kept = [p.name for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert kept and all(name.startswith("ccr.db.damaged-") for name in kept)
    with open_store(db) as store:
        record = store.record(next(iter(stored)))
    assert record.metadata is not None and record.metadata["kind"] == "message"


def test_every_record_outside_a_damaged_data_page_comes_back_byte_exact_and_the_lost_are_named(
    tmp_path: Path,
) -> None:
    db = tmp_path / "ccr.db"
    stored = build(db, payloads(300, seed=2))
    original = db.read_bytes()
    small = [h for h, d in stored.items() if len(d) < 2000]
    # A page in the middle of the file that holds some small records whole.
    offsets = sorted({original.find(stored[h]) // PAGE * PAGE for h in small if original.find(stored[h]) >= 0})
    offset = offsets[len(offsets) // 2]
    inside = {h for h in small if on_page(original, stored[h], offset)}
    assert inside, "the chosen page holds records"
    damage(db, offset)
    out = tmp_path / "salvaged.db"
    done = ccr("--store", str(db), "repair", "--output", str(out))
    assert done.returncode == 65, done.stderr
    assert b"ccr_records_lost" in done.stderr
    back = repaired(out)
    assert all(back[h] == stored[h] for h in back)
    assert set(back) == set(stored) - inside
    named = {line.split()[1] for line in done.stdout.decode().splitlines() if line.startswith("lost: ccr_")}
    assert named == inside
    assert db.read_bytes()[:offset] == original[:offset]  # --output leaves the damaged store as it was


def test_records_only_in_the_write_ahead_log_are_salvaged(tmp_path: Path) -> None:
    db = tmp_path / "live" / "ccr.db"
    stored = build(db, payloads(50, seed=3), extra_big=False)
    store = open_store(db)
    try:
        late = {store.put(data, producer="late"): data for data in payloads(20, seed=4)}
        late[store.put(b"x")] = b"x"
        copy = tmp_path / "copy"
        copy.mkdir()
        for suffix in ("", "-wal"):
            shutil.copyfile(db.with_name("ccr.db" + suffix), copy / ("ccr.db" + suffix))
    finally:
        store.close()
    assert (copy / "ccr.db-wal").stat().st_size > 0
    damage(copy / "ccr.db", 4096)
    done = ccr("--store", str(copy / "ccr.db"), "repair", "--output", str(tmp_path / "out.db"))
    assert done.returncode == 0, done.stderr
    assert repaired(tmp_path / "out.db") == {**stored, **late}


def test_a_removed_record_is_not_brought_back_by_repair(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    stored = build(db, payloads(40, seed=5), extra_big=False)
    gone = sorted(stored)[:5]
    assert ccr("--store", str(db), "rm", *gone).returncode == 0
    damage(db, 4096)
    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert set(repaired(db)) == set(stored) - set(gone)


def test_a_flipped_payload_byte_is_named_lost_by_repair_and_healed_by_put(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    stored = build(db, payloads(10, seed=6), extra_big=False)
    victim = sorted(stored)[0]
    raw = sqlite3.connect(db)
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"!" + stored[victim][1:], victim))
    raw.close()
    out = tmp_path / "out.db"
    done = ccr("--store", str(db), "repair", "--output", str(out))
    assert done.returncode == 65
    assert f"lost: {victim}".encode() in done.stdout
    assert set(repaired(out)) == set(stored) - {victim}
    source = tmp_path / "victim.bin"
    source.write_bytes(stored[victim])
    assert ccr("--store", str(db), "put", str(source)).returncode == 0
    assert ccr("--store", str(db), "verify").returncode == 0


def test_repair_of_a_missing_store_exits_66(tmp_path: Path) -> None:
    done = ccr("--store", str(tmp_path / "absent.db"), "repair")
    assert done.returncode == 66
    assert not (tmp_path / "absent.db").exists()


@pytest.mark.parametrize("objects", [3])
def test_typed_objects_are_salvaged_too(tmp_path: Path, objects: int) -> None:
    from ccr import OBJECT_TYPES, make_object

    KIND = sorted(OBJECT_TYPES)[0]

    db = tmp_path / "ccr.db"
    build(db, payloads(20, seed=9), extra_big=False)
    with open_store(db) as store:
        ids = [
            store.put_object(
                make_object(KIND, session_id="s", source="t", content={"text": f"use sqlite {i}"}, repo_state="r")
            )
            for i in range(objects)
        ]
    damage(db, 4096)
    out = tmp_path / "out.db"
    assert ccr("--store", str(db), "repair", "--output", str(out)).returncode == 0
    with open_store(out) as store:
        assert [store.get_object(i).content["text"] for i in ids] == [f"use sqlite {i}" for i in range(objects)]
    assert os.path.exists(out)


def test_a_store_whose_first_page_is_gone_is_still_salvaged(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    stored = build(db, payloads(60, seed=10))
    damage(db, 0)
    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert repaired(db) == stored


def test_repair_leaves_a_file_that_is_not_a_store_alone(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes\n" * 1000)
    done = ccr("--store", str(notes), "repair")
    assert done.returncode == 73
    assert b"not_a_store" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
    assert notes.read_bytes() == b"my notes\n" * 1000


def store_with_metadata(db: Path) -> list[str]:
    """Five records with metadata, all in the main file (the log checkpointed), oldest first."""
    with open_store(db) as store:
        handles = [
            store.put(
                b"tool output %d\n" % i, producer="hooks", metadata={"kind": "tool_result", "session_id": f"s{i}"}
            )
            for i in range(5)
        ]
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return handles


def flip(db: Path, anchor: bytes, at: int, new: bytes) -> None:
    """Overwrite bytes at ``at`` past the only place ``anchor`` is in the file, keeping its length."""
    data = bytearray(db.read_bytes())
    where = data.find(anchor)
    assert where >= 0 and data.find(anchor, where + 1) < 0
    data[where + at : where + at + len(new)] = new
    db.write_bytes(bytes(data))


METADATA_DAMAGE = {
    "a quote in a value": (b'"kind":"tool_result","session_id":"s2"', 12, b'"'),
    "a byte that is not UTF-8": (b'"kind":"tool_result","session_id":"s2"', 10, b"\xff"),
    "the opening brace": (b'{"kind":"tool_result","session_id":"s2"', 0, b"["),
    "a creation time": (b'"kind":"tool_result","session_id":"s2"', 38 + 6, b"x"),
    "the producer": (b'hooks{"kind":"tool_result","session_id":"s2"', 0, b"\xfe"),
}


@pytest.mark.parametrize("damage_", list(METADATA_DAMAGE), ids=list(METADATA_DAMAGE))
def test_damaged_metadata_is_found_by_verify_named_by_list_and_export_and_salvaged_by_repair(
    tmp_path: Path, damage_: str
) -> None:
    db = tmp_path / "ccr.db"
    handles = store_with_metadata(db)
    anchor, at, new = METADATA_DAMAGE[damage_]
    if damage_ == "a creation time":
        conn = sqlite3.connect(db)
        created = conn.execute("SELECT created_at FROM blobs WHERE handle = ?", (handles[2],)).fetchone()[0]
        conn.close()
        anchor, at = b'"session_id":"s2"}' + created.encode(), len(b'"session_id":"s2"}') + 4
    flip(db, anchor, at, new)
    damaged = handles[2]

    verify = ccr("--store", str(db), "verify")
    assert verify.returncode == 65, verify.stderr
    assert verify.stdout.decode().split() == [damaged]
    assert verify.stderr.startswith(b"ccr: ccr_corrupt_record: ") and b"ccr repair" in verify.stderr

    # A creation time is also kept in its index, which a listing reads: it shows the time as written.
    in_index = damage_ == "a creation time"
    for args in (["list"], ["list", "--json"], ["list", "--session", "s2"], ["list", "--kind", "tool_result"]):
        listed = ccr("--store", str(db), *args)
        assert b"Traceback" not in listed.stderr
        filtered = len(args) > 2  # SQLite may answer a filter from its index, without the damaged row
        if not in_index and (not filtered or listed.returncode != 0):
            assert listed.returncode == 65, (args, listed.stderr)
            assert listed.stderr.startswith(b"ccr: ccr_damaged_metadata: ") and damaged.encode() in listed.stderr
            assert b"ccr repair" in listed.stderr
        for handle in handles:  # the others are listed (those the filter asks for), the damaged one never as intact
            if handle != damaged or not in_index:
                shown = handle.encode() in listed.stdout
                assert shown == (handle != damaged and args[-1] != "s2"), (args, handle)

    if not in_index:
        info = ccr("--store", str(db), "info", damaged)
        assert info.returncode == 65 and info.stderr.startswith(b"ccr: ccr_damaged_metadata: ")
        archive = tmp_path / "a.jsonl"
        exported = ccr("--store", str(db), "export", str(archive))
        assert exported.returncode == 65 and exported.stderr.startswith(b"ccr: ccr_damaged_metadata: ")
        assert b"ccr repair" in exported.stderr and not archive.exists()
    assert ccr("--store", str(db), "get", damaged).stdout == b"tool output 2\n"  # the bytes are intact

    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert b"the damaged store is kept as " in done.stdout
    assert b"salvaged 5 record(s)" in done.stdout
    assert ccr("--store", str(db), "verify").returncode == 0
    assert ccr("--store", str(db), "list").returncode == 0


def test_repair_of_a_healthy_store_does_not_call_it_damaged(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    handles = store_with_metadata(db)
    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert b"damaged" not in done.stdout
    assert b"the store as it was is kept as " in done.stdout and b"every record in it was salvaged" in done.stdout
    kept = [p.name for p in tmp_path.iterdir() if p.name.startswith("ccr.db.")]
    assert kept and all(".before-repair-" in name for name in kept)
    with open_store(db) as store:
        assert [r.handle for r in store.records()] == handles
