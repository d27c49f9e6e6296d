"""The count of acknowledged records kept beside a store: lost committed writes are seen, nothing else is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccr import UnsafeStorePath, open_store
from ccr._acknowledged import acknowledge, acknowledged
from tests.ccr.conftest import ccr

DIE_AFTER_PUTS = (
    "import os, sys; from ccr import open_store; s = open_store(sys.argv[1]); "
    "[s.put(b'acknowledged %d' % i) for i in range(int(sys.argv[2]))]; os._exit(0)"  # no close, no checkpoint
)


def puts_then_dies(db: Path, count: int) -> None:
    subprocess.run([sys.executable, "-c", DIE_AFTER_PUTS, str(db), str(count)], check=True, timeout=60)


def lose_the_log(db: Path) -> None:
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink()


@pytest.mark.parametrize("lost", [1, 5, 40])
def test_a_deleted_log_that_held_acknowledged_puts_makes_verify_say_how_many_are_gone(
    tmp_path: Path, lost: int
) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        store.put(b"checkpointed on close")
    puts_then_dies(db, lost)
    assert acknowledged(db) == 1 + lost
    lose_the_log(db)
    done = ccr("--store", str(db), "verify")
    assert done.returncode == 65
    assert done.stderr.startswith(b"ccr: ccr_writes_lost: the store acknowledged %d record(s)" % (1 + lost))
    assert f"{lost} acknowledged write(s) are gone".encode() in done.stderr and b"ccr repair" in done.stderr
    assert b"every one matches" not in done.stdout
    as_json = ccr("--store", str(db), "verify", "--json")
    assert as_json.returncode == 65 and json.loads(as_json.stdout)["writes_lost"] == lost


def test_a_store_put_back_from_an_older_copy_is_seen_too(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        store.put(b"one")
    older = db.read_bytes()
    with open_store(db) as store:
        store.put(b"two")
        store.put(b"three")
    db.write_bytes(older)
    done = ccr("--store", str(db), "verify")
    assert done.returncode == 65 and b"2 acknowledged write(s) are gone" in done.stderr


def test_removals_writes_from_many_processes_and_repeated_puts_are_no_loss(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        handles = [store.put(b"record %d" % i) for i in range(10)]
        store.put(b"record 3")  # already stored: no new record
    procs = [
        subprocess.Popen([sys.executable, "-c", DIE_AFTER_PUTS.replace("os._exit(0)", "s.close()"), str(db), "8"])
        for _ in range(4)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0, 0]
    assert ccr("--store", str(db), "rm", *handles[:4]).returncode == 0
    done = ccr("--store", str(db), "verify")
    assert done.returncode == 0, done.stderr
    assert acknowledged(db) == 18  # ten, then eight distinct ones: the four processes store the same bytes


def test_a_store_without_a_count_beside_it_is_checked_as_before(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        store.put(b"a record")
    db.with_name("ccr.db-ack").unlink()
    done = ccr("--store", str(db), "verify")
    assert done.returncode == 0, done.stderr


def test_the_count_never_goes_down_and_ignores_a_file_that_does_not_read(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    acknowledge(db, 7)
    acknowledge(db, 3)
    assert acknowledged(db) == 7
    db.with_name("ccr.db-ack").write_bytes(b"not a count\n")
    assert acknowledged(db) is None
    acknowledge(db, 2)
    assert acknowledged(db) == 2


def test_repair_after_lost_writes_calls_the_store_damaged_and_starts_a_new_count(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    with open_store(db) as store:
        store.put(b"kept")
    puts_then_dies(db, 3)
    lose_the_log(db)
    done = ccr("--store", str(db), "repair")
    assert done.returncode == 0, done.stderr
    assert b"the damaged store is kept as " in done.stdout
    assert ccr("--store", str(db), "verify").returncode == 0
    assert acknowledged(db) == 1


def test_a_symlinked_count_file_is_refused_as_every_sidecar_is(tmp_path: Path) -> None:
    db = tmp_path / "ccr.db"
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    os.symlink(target, tmp_path / "ccr.db-ack")
    with pytest.raises(UnsafeStorePath):
        open_store(db)
    assert target.read_bytes() == b""
