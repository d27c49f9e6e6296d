"""Reading commands read a store on read-only media, and change nothing in it.

The store is made read-only for the reading process: a 0444 file, or a 0555
directory. Permissions do not bind root, so as root the file or directory
is made immutable instead (``chattr +i``), which refuses root's writes too.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ccr import PutRequest, open_store
from tests.ccr.conftest import ccr as run_ccr

MESSAGES = b"".join(
    json.dumps({"role": "user", "content": text}).encode() + b"\n"
    for text in ["rotate the deploy key", "fix the pricing test", "rename the helper"]
)


def ccr(*args: str) -> subprocess.CompletedProcess[bytes]:
    return run_ccr(*args, env={"COMPACTOR_HOME": "/nonexistent-home"})


def make_store(folder: Path) -> tuple[Path, list[str]]:
    folder.mkdir(mode=0o755)
    db = folder / "ccr.db"
    with open_store(db) as store:
        handles = store.put_many(
            [
                PutRequest(
                    data=MESSAGES, content_type="application/x-ndjson", metadata={"kind": "head", "session_id": "s1"}
                ),
                PutRequest(data=b"second record\n", metadata={"kind": "message", "session_id": "s1"}),
            ]
        )
    return db, handles


def snapshot(folder: Path) -> dict[str, bytes]:
    """The folder's files, leaving out an empty WAL and the WAL index a reader may set up."""
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


@pytest.mark.parametrize("how", ["file", "directory"])
def test_every_reading_command_works_on_a_read_only_store_and_changes_nothing(
    tmp_path: Path, freeze: Callable[[Path], None], how: str
) -> None:
    folder = tmp_path / "media"
    db, (head, second) = make_store(folder)
    freeze(db if how == "file" else folder)
    before = snapshot(folder)
    store = ["--store", str(db)]
    got = ccr(*store, "get", head)
    assert (got.returncode, got.stdout) == (0, MESSAGES), got.stderr
    query = ccr(*store, "get", head, "--query", "pricing")
    assert query.returncode == 0, query.stderr
    assert b"pricing" in query.stdout and b"deploy" not in query.stdout
    assert json.loads(ccr(*store, "info", head).stdout)["size"] == len(MESSAGES)
    listed = ccr(*store, "list", "--json", "--session", "s1")
    assert sorted(r["handle"] for r in json.loads(listed.stdout)) == sorted([head, second]), listed.stderr
    stats = ccr(*store, "stats", "--json")
    assert json.loads(stats.stdout)["entries"] == 2, stats.stderr
    verify = ccr(*store, "verify")
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith(b"verified 2 record(s)")
    exported = ccr(*store, "export", str(tmp_path / "a.jsonl"))
    assert exported.returncode == 0, exported.stderr
    written = ccr(*store, "put", "-")
    assert written.returncode == 73
    assert b"Traceback" not in written.stderr
    assert snapshot(folder) == before


def test_a_read_only_store_with_a_pending_log_it_cannot_read_is_refused_not_half_read(
    tmp_path: Path, freeze: Callable[[Path], None]
) -> None:
    folder = tmp_path / "media"
    db, _ = make_store(folder)
    (folder / "ccr.db-wal").write_bytes(b"\x00" * 64)  # a log SQLite would need to index first
    freeze(folder)
    result = ccr("--store", str(db), "stats")
    assert result.returncode == 73
    assert b"write-ahead log" in result.stderr


def test_a_read_only_store_from_before_the_session_column_is_still_listed_by_session(
    tmp_path: Path, freeze: Callable[[Path], None]
) -> None:
    import sqlite3
    from datetime import UTC, datetime

    from ccr import handle_for
    from ccr._migrations import MIGRATIONS

    folder = tmp_path / "old"
    folder.mkdir()
    db = folder / "ccr.db"
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for statement in MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute("INSERT INTO schema_migrations VALUES (1, 'v1', ?)", (datetime.now(UTC).isoformat(),))
    for data, session in ((b"first", "s1"), (b"second", "s2")):
        conn.execute(
            "INSERT INTO blobs (handle, content_type, producer, metadata, created_at, size, data)"
            " VALUES (?, 'text/plain', 'old', ?, ?, ?, ?)",
            (
                handle_for(data),
                json.dumps({"session_id": session, "kind": "head"}),
                datetime.now(UTC).isoformat(),
                len(data),
                data,
            ),
        )
    conn.close()
    freeze(folder)
    listed = ccr("--store", str(db), "list", "--json", "--session", "s2")
    assert listed.returncode == 0, listed.stderr
    assert [r["handle"] for r in json.loads(listed.stdout)] == [handle_for(b"second")]
    assert ccr("--store", str(db), "get", handle_for(b"first")).stdout == b"first"


READING = [
    ["stats"],
    ["stats", "--json"],
    ["list"],
    ["list", "--json"],
    ["verify"],
    ["get", "ccr_" + "0" * 32],
    ["info", "ccr_" + "0" * 32],
    ["export", "out.jsonl"],
    ["gc", "--dry-run", "--older-than", "7"],
]


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c))
@pytest.mark.parametrize("where", ["s.db", "typo/deeper/s.db", "a-file/s.db"])
def test_a_reading_command_on_a_named_store_that_does_not_exist_is_input_not_found_and_makes_nothing(
    tmp_path: Path, command: list[str], where: str
) -> None:
    (tmp_path / "a-file").write_bytes(b"a file where a folder would be\n")
    args = [str(tmp_path / part) if part == "out.jsonl" else part for part in command]
    done = ccr("--store", str(tmp_path / where), *args)
    assert done.returncode == 66, done.stderr
    assert done.stderr.startswith(b"ccr: input_not_found: no ccr store at ") and done.stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c))
def test_a_reading_command_on_an_empty_file_says_it_is_not_a_store_and_leaves_it_empty(
    tmp_path: Path, command: list[str]
) -> None:
    empty = tmp_path / "n.txt"
    empty.write_bytes(b"")
    args = [str(tmp_path / part) if part == "out.jsonl" else part for part in command]
    done = ccr("--store", str(empty), *args)
    assert done.returncode == 73, done.stderr
    assert done.stderr.startswith(b"ccr: not_a_store: ") and b"empty" in done.stderr
    assert empty.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == ["n.txt"]


@pytest.mark.parametrize("command", READING, ids=lambda c: " ".join(c))
def test_a_reading_command_on_the_default_store_not_made_yet_reads_it_empty_and_makes_nothing(
    tmp_path: Path, command: list[str]
) -> None:
    home = tmp_path / "home"
    args = [str(tmp_path / part) if part == "out.jsonl" else part for part in command]
    done = run_ccr(*args, env={"COMPACTOR_HOME": str(home)})
    expected = 66 if command[0] in ("get", "info") else 0  # the handle is not there: nothing is
    assert done.returncode == expected, done.stderr
    assert not home.exists()


@pytest.mark.parametrize(
    "command",
    [["put", "-"], ["import", "-"], ["rm", "ccr_" + "0" * 32], ["gc", "--older-than", "7"]],
    ids=lambda c: c[0],
)
def test_a_writing_command_makes_no_folder_the_user_did_not_ask_for(tmp_path: Path, command: list[str]) -> None:
    archive = b'{"format":"ccr-archive","version":1,"records":0,"objects":0,"created_at":"2026-01-01T00:00:00+00:00"}\n'
    given = archive if command[0] == "import" else b"some bytes\n"
    done = run_ccr("--store", str(tmp_path / "tpyo" / "s.db"), *command, input=given)
    assert done.returncode in (2, 66), done.stderr
    assert b"Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_put_makes_a_named_store_in_a_folder_that_exists_and_the_default_one_with_its_folder(tmp_path: Path) -> None:
    named = run_ccr("--store", str(tmp_path / "s.db"), "put", "-", input=b"named\n")
    assert named.returncode == 0, named.stderr
    home = tmp_path / "home" / "deeper"
    default = run_ccr("put", "-", input=b"default\n", env={"COMPACTOR_HOME": str(home)})
    assert default.returncode == 0, default.stderr
    assert (tmp_path / "s.db").is_file() and (home / "ccr.db").is_file()


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs, unmounted after (needs root and Linux: skipped elsewhere)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root, or no mount)")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def fill(disk: Path) -> None:
    with open(disk / "filler", "wb", buffering=0) as out:
        try:
            while True:
                out.write(bytes(1 << 16))
        except OSError:
            pass
    os.sync()


UNCHECKPOINTED_PUT = (
    "import os, sys; from ccr import open_store; s = open_store(sys.argv[1]); "
    "print(s.put(b'only in the log\\n'), flush=True); os._exit(0)"  # no close: the log is not checkpointed
)


@pytest.mark.parametrize("log", ["checkpointed", "pending, index removed", "pending, index kept"])
def test_a_store_on_a_full_disk_can_still_be_read_by_get_verify_stats_and_mcp(full_disk: Path, log: str) -> None:
    import sys

    db = full_disk / "home" / "ccr.db"
    put = run_ccr("put", "-", input=b"stored before the disk filled\n", env={"COMPACTOR_HOME": str(db.parent)})
    assert put.returncode == 0, put.stderr
    handles = [put.stdout.decode().strip()]
    if log != "checkpointed":
        done = subprocess.run([sys.executable, "-c", UNCHECKPOINTED_PUT, str(db)], capture_output=True, check=True)
        handles.append(done.stdout.decode().strip())
        assert (full_disk / "home" / "ccr.db-wal").stat().st_size > 0
        if log == "pending, index removed":
            (full_disk / "home" / "ccr.db-shm").unlink()
    fill(full_disk)
    home = {"COMPACTOR_HOME": str(db.parent)}
    for handle in handles:
        got = run_ccr("get", handle, env=home)
        assert got.returncode == 0, got.stderr
        assert got.stdout in (b"stored before the disk filled\n", b"only in the log\n")
    verify = run_ccr("verify", env=home)
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.startswith(f"verified {len(handles)} record(s)".encode())
    stats = run_ccr("stats", "--json", env=home)
    assert json.loads(stats.stdout)["entries"] == len(handles), stats.stderr
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "ccr_retrieve", "arguments": {"handle": handles[-1]}}
    served = run_ccr("mcp", input=(json.dumps(hello) + "\n" + json.dumps(call) + "\n").encode(), env=home)
    assert served.returncode == 0, served.stderr
    answer = json.loads(served.stdout.splitlines()[-1])["result"]
    assert answer["isError"] is False and answer["content"][0]["text"].endswith("\n")
