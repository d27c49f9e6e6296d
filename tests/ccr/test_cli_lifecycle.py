"""The store's lifecycle through the ``ccr`` command line: list, rm, gc, export, import, heal, full."""

from __future__ import annotations

import base64
import errno
import gzip
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ccr import PutRequest, handle_for, open_store
from tests.ccr.conftest import ccr

BINARY = bytes(range(256)) + b"\r\n\x00\r" + "é€😀".encode()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    (tmp_path / "store").mkdir()  # a store the user names is made only in a folder that exists
    return tmp_path / "store" / "ccr.db"


def fill(db: Path) -> dict[str, list[str]]:
    """Records of two sessions and of no session; returns their handles by group."""
    groups: dict[str, list[str]] = {"s1": [], "s2": [], "none": []}
    with open_store(db) as store:
        for i in range(3):
            groups["s1"].append(
                store.put(
                    f"s1 head {i}\n".encode() * 50,
                    producer="compactor.claude_code.hooks:head",
                    metadata={"kind": "head", "session_id": "s1"},
                )
            )
        groups["s2"] += store.put_many(
            [
                PutRequest(
                    data=b"s2 message\n" * 40,
                    producer="compactor.engine.pipeline:message",
                    metadata={"kind": "message", "session_id": "s2"},
                ),
                PutRequest(
                    data=BINARY,
                    producer="compactor.engine.pipeline:tool_result",
                    metadata={"kind": "tool_result", "session_id": "s2"},
                ),
            ]
        )
        groups["none"].append(store.put(b"loose bytes", producer="ccr-cli"))
    return groups


def listed(db: Path, *args: str) -> list[str]:
    result = ccr("--store", str(db), "list", "--json", *args)
    assert result.returncode == 0, result.stderr
    return [r["handle"] for r in json.loads(result.stdout)]


def test_list_filters_by_session_kind_producer_and_time(db: Path) -> None:
    groups = fill(db)
    everything = [h for g in groups.values() for h in g]
    assert sorted(listed(db)) == sorted(everything)
    assert sorted(listed(db, "--session", "s1")) == sorted(groups["s1"])
    assert sorted(listed(db, "--session", "s2")) == sorted(groups["s2"])
    assert listed(db, "--kind", "tool_result") == [handle_for(BINARY)]
    assert sorted(listed(db, "--producer", "compactor.engine.pipeline")) == sorted(groups["s2"])
    assert listed(db, "--producer", "compactor") == []  # a prefix only up to a ':'
    assert sorted(listed(db, "--since", "1d")) == sorted(everything)
    assert listed(db, "--since", "2999-01-01") == []
    table = ccr("--store", str(db), "list", "--session", "s1")
    lines = table.stdout.decode().splitlines()
    assert lines[0].split()[:3] == ["HANDLE", "BYTES", "KIND"]
    assert all(h in table.stdout.decode() for h in groups["s1"])
    assert lines[-1] == f"3 record(s), {3 * 50 * len('s1 head 0 ')} bytes"


def test_list_rejects_a_time_it_cannot_read(db: Path) -> None:
    result = ccr("--store", str(db), "list", "--since", "last tuesday")
    assert result.returncode == 2
    assert b"usage_error" in result.stderr


def test_rm_removes_the_named_records_and_their_bytes_from_the_totals(db: Path) -> None:
    groups = fill(db)
    before = json.loads(ccr("--store", str(db), "stats", "--json").stdout)
    gone = groups["s2"]
    result = ccr("--store", str(db), "rm", *gone)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().split() == gone
    for handle in gone:
        assert ccr("--store", str(db), "get", handle).returncode == 66
    after = json.loads(ccr("--store", str(db), "stats", "--json").stdout)
    assert after["entries"] == before["entries"] - 2
    assert after["payload_bytes"] == before["payload_bytes"] - len(b"s2 message\n" * 40) - len(BINARY)
    assert ccr("--store", str(db), "verify").returncode == 0


def test_rm_of_a_handle_not_stored_removes_nothing(db: Path) -> None:
    groups = fill(db)
    missing = handle_for(b"never stored")
    result = ccr("--store", str(db), "rm", groups["s1"][0], missing)
    assert result.returncode == 66
    assert missing.encode() in result.stderr
    assert ccr("--store", str(db), "get", groups["s1"][0]).returncode == 0


def test_gc_by_session_dry_run_changes_nothing_then_removes_that_session_and_shrinks_the_file(
    db: Path,
) -> None:
    groups = fill(db)
    with open_store(db) as store:  # enough bytes for the shrink to show on disk
        store.put(os.urandom(400_000), metadata={"session_id": "s2", "kind": "head"})
    big = listed(db, "--session", "s2")
    dry = ccr("--store", str(db), "gc", "--session", "s2", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert sorted(dry.stdout.decode().split()[: len(big)]) == sorted(big)
    assert b"dry run: nothing removed" in dry.stdout
    assert sorted(listed(db, "--session", "s2")) == sorted(big)
    size = db.stat().st_size
    done = ccr("--store", str(db), "gc", "--session", "s2")
    assert done.returncode == 0, done.stderr
    assert listed(db, "--session", "s2") == []
    assert sorted(listed(db)) == sorted(groups["s1"] + groups["none"])
    assert db.stat().st_size < size - 300_000
    assert b"shrank by" in done.stderr


def test_gc_older_than_removes_only_old_records(db: Path, tmp_path: Path) -> None:
    fill(db)
    old = b"from an old session"
    archive = tmp_path / "old.jsonl"
    lines = [
        {"format": "ccr-archive", "version": 1, "records": 1, "objects": 0, "created_at": "2020-01-01T00:00:00+00:00"},
        {
            "item": "record",
            "handle": handle_for(old),
            "size": len(old),
            "content_type": "text/plain",
            "producer": "test",
            "tokens_before": None,
            "tokens_after": None,
            "metadata": None,
            "created_at": "2020-01-01T00:00:00+00:00",
            "data": base64.b64encode(old).decode(),
        },
    ]
    archive.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert ccr("--store", str(db), "import", str(archive)).returncode == 0
    count = len(listed(db))
    assert (
        ccr("--store", str(db), "gc", "--older-than", "365", "--dry-run").stdout.split()[0] == handle_for(old).encode()
    )
    done = ccr("--store", str(db), "gc", "--older-than", "365")
    assert done.returncode == 0, done.stderr
    assert handle_for(old) not in listed(db)
    assert len(listed(db)) == count - 1


@pytest.mark.parametrize(
    "args", [[], ["--older-than", "-1"], ["--older-than", "x"], ["--older-than", "3", "--session", "s"]]
)
def test_gc_needs_exactly_one_valid_choice(db: Path, args: list[str]) -> None:
    result = ccr("--store", str(db), "gc", *args)
    assert result.returncode == 2
    assert b"usage_error" in result.stderr


@pytest.mark.parametrize("name", ["archive.jsonl", "archive.jsonl.gz"])
def test_export_then_import_keeps_handles_bytes_metadata_and_times(db: Path, tmp_path: Path, name: str) -> None:
    from ccr import OBJECT_TYPES, make_object

    groups = fill(db)
    with open_store(db) as store:
        oid = store.put_object(
            make_object(sorted(OBJECT_TYPES)[0], session_id="s1", source="t", content={"note": "kept"})
        )
    archive = tmp_path / name
    done = ccr("--store", str(db), "export", str(archive))
    assert done.returncode == 0, done.stderr
    assert b"exported 6 record(s) and 1 typed object(s)" in done.stdout
    if name.endswith(".gz"):
        assert gzip.decompress(archive.read_bytes()).startswith(b'{"format":"ccr-archive"')
    other = tmp_path / "other" / "ccr.db"
    other.parent.mkdir()
    loaded = ccr("--store", str(other), "import", str(archive))
    assert loaded.returncode == 0, loaded.stderr
    with open_store(db) as a, open_store(other) as b:
        for handle in [h for g in groups.values() for h in g]:
            assert b.get(handle) == a.get(handle)
            assert b.record(handle) == a.record(handle)
        assert b.get_object(oid) == a.get_object(oid)
    assert ccr("--store", str(other), "verify").returncode == 0


def test_import_names_each_record_that_was_new_and_counts_those_already_stored(db: Path, tmp_path: Path) -> None:
    groups = fill(db)
    archive = tmp_path / "a.jsonl"
    assert ccr("--store", str(db), "export", str(archive)).returncode == 0
    handles = [h for g in groups.values() for h in g]
    other = tmp_path / "other" / "ccr.db"
    with open_store(db) as source:
        first = source.get(handles[0])
    with open_store(other) as store:
        kept = store.put(first)
    assert kept == handles[0]
    done = ccr("--store", str(other), "import", str(archive))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    named = [line.split()[1] for line in lines[:-1]]
    assert sorted(named) == sorted(h for h in handles if h != kept)
    assert all(line.startswith("new ccr_") and line.endswith(" bytes") for line in lines[:-1])
    assert (
        lines[-1]
        == f"imported {len(handles)} record(s), {len(handles) - 1} new and 1 already stored, and 0 typed object(s)"
    )
    again = ccr("--store", str(other), "import", str(archive))
    assert again.stdout.decode().splitlines() == [
        f"imported {len(handles)} record(s), 0 new and {len(handles)} already stored, and 0 typed object(s)"
    ]


def test_import_refuses_a_tampered_or_cut_archive_and_stores_nothing(db: Path, tmp_path: Path) -> None:
    fill(db)
    archive = tmp_path / "a.jsonl"
    assert ccr("--store", str(db), "export", str(archive)).returncode == 0
    lines = archive.read_bytes().splitlines(keepends=True)
    item = json.loads(lines[1])
    item["data"] = base64.b64encode(b"not the original").decode()
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_bytes(lines[0] + json.dumps(item).encode() + b"\n" + b"".join(lines[2:]))
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-1]))
    target = tmp_path / "new" / "ccr.db"
    for bad, error_id in ((tampered, b"ccr_corrupt_record"), (cut, b"ccr_archive_invalid")):
        result = ccr("--store", str(target), "import", str(bad))
        assert result.returncode == 65, result.stderr
        assert error_id in result.stderr
        assert not target.exists() or listed(target) == []
    assert ccr("--store", str(target), "import", str(tmp_path / "absent.jsonl")).returncode == 66


def test_export_refuses_a_store_with_a_corrupt_record_and_leaves_no_file(db: Path, tmp_path: Path) -> None:
    groups = fill(db)
    raw = sqlite3.connect(db)
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"flipped", groups["s1"][0]))
    raw.close()
    archive = tmp_path / "a.jsonl"
    result = ccr("--store", str(db), "export", str(archive))
    assert result.returncode == 65
    assert groups["s1"][0].encode() in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_a_put_of_the_original_bytes_heals_a_corrupt_record(db: Path) -> None:
    original = b"the original payload\n" * 20
    handle = ccr("--store", str(db), "put", input=original).stdout.decode().strip()
    raw = sqlite3.connect(db)
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"X" + original[1:], handle))
    raw.close()
    assert ccr("--store", str(db), "get", handle).returncode == 65
    entries = json.loads(ccr("--store", str(db), "stats", "--json").stdout)
    healed = ccr("--store", str(db), "put", input=original)
    assert (healed.returncode, healed.stdout.decode().strip()) == (0, handle)
    assert ccr("--store", str(db), "verify").returncode == 0
    assert ccr("--store", str(db), "get", handle).stdout == original
    assert json.loads(ccr("--store", str(db), "stats", "--json").stdout) == entries


def test_stats_says_full_exactly_when_a_one_byte_put_is_refused(db: Path) -> None:
    env = {"COMPACTOR_CCR_MAX_BYTES": "1000"}

    def full() -> bool:
        return bool(json.loads(ccr("--store", str(db), "stats", "--json", env=env).stdout)["full"])

    assert ccr("--store", str(db), "put", input=b"a" * 990, env=env).returncode == 0
    assert not full()
    assert ccr("--store", str(db), "put", input=b"b" * 11, env=env).returncode == 73  # too big, not full
    assert not full()
    assert ccr("--store", str(db), "put", input=b"c" * 10, env=env).returncode == 0
    assert full()
    refused = ccr("--store", str(db), "put", input=b"d", env=env)
    assert refused.returncode == 73
    assert b"ccr_budget_exceeded" in refused.stderr


def test_a_compaction_records_its_session_so_list_and_gc_find_its_spans(db: Path) -> None:
    from attachments import DiskFiles
    from compactor.core.messages import Message
    from compactor.core.session import SessionState
    from compactor.core.tokens import RoughCounter
    from compactor.engine.pipeline import CompactOptions, compact
    from compactor.summarizers import ExtractiveSummarizer

    messages = [
        Message(role="user" if i % 2 == 0 else "assistant", content=f"turn {i} " + "x" * 3000) for i in range(12)
    ]
    with open_store(db) as store:
        out = compact(
            messages,
            SessionState(session_id="sess-42"),
            store=store,
            counter=RoughCounter(),
            summarizer=ExtractiveSummarizer(),
            files=DiskFiles(),
            options=CompactOptions(tail_tokens=2_000),
        )
    assert out.ok, out.report
    dropped = {d.handle for d in out.report.dropped}
    assert dropped and set(listed(db, "--session", "sess-42")) == dropped
    assert ccr("--store", str(db), "gc", "--session", "sess-42").returncode == 0
    assert listed(db) == []


def test_a_full_store_still_heals_a_corrupt_record(db: Path) -> None:
    env = {"COMPACTOR_CCR_MAX_BYTES": "1000"}
    original = b"o" * 1000
    handle = ccr("--store", str(db), "put", input=original, env=env).stdout.decode().strip()
    raw = sqlite3.connect(db)
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"X" + original[1:], handle))
    raw.close()
    assert json.loads(ccr("--store", str(db), "stats", "--json", env=env).stdout)["full"]
    healed = ccr("--store", str(db), "put", input=original, env=env)
    assert healed.returncode == 0, healed.stderr
    assert ccr("--store", str(db), "get", handle, env=env).stdout == original


def test_export_refuses_to_write_the_archive_over_the_store_itself(db: Path) -> None:
    groups = fill(db)
    for target in (db, db.parent / "." / db.name, Path(f"{db}-wal")):
        result = ccr("--store", str(db), "export", str(target))
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(b"ccr: output_refused: ")
        assert result.stdout == b""
    assert sorted(listed(db)) == sorted(h for g in groups.values() for h in g)


def test_export_into_a_folder_that_cannot_hold_it_is_refused_without_a_traceback(db: Path, tmp_path: Path) -> None:
    fill(db)
    result = ccr("--store", str(db), "export", str(tmp_path / "absent" / "a.jsonl"))
    assert result.returncode == 73
    assert result.stderr.startswith(b"ccr: output_write_failed: cannot write the archive ")
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize("age", ["1000000d", "99999999999999999999d", "999999999999h"])
def test_an_age_reaching_before_the_calendar_lists_every_record(db: Path, age: str) -> None:
    groups = fill(db)
    assert sorted(listed(db, "--since", age)) == sorted(h for g in groups.values() for h in g)


@pytest.mark.parametrize("days", ["100000000", "99999999999999999999"])
def test_gc_older_than_more_days_than_the_calendar_holds_removes_nothing(db: Path, days: str) -> None:
    groups = fill(db)
    result = ccr("--store", str(db), "gc", "--older-than", days)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"removed 0 record(s), 0 bytes\n"
    assert len(listed(db)) == sum(len(g) for g in groups.values())


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"\x1f\x8b\x08\x00" + bytes(range(256)) * 20, id="gzip magic then garbage"),
        pytest.param(gzip.compress(b'{"format":"ccr-archive"')[:-12], id="a gzip file cut short"),
    ],
)
def test_importing_a_damaged_gzip_archive_is_exit_65_without_a_traceback(
    db: Path, tmp_path: Path, content: bytes
) -> None:
    archive = tmp_path / "damaged.jsonl.gz"
    archive.write_bytes(content)
    fill(db)
    before = listed(db)
    result = ccr("--store", str(db), "import", str(archive))
    assert result.returncode == 65, result.stderr
    assert result.stderr.startswith(b"ccr: ccr_archive_invalid: ") and b"Traceback" not in result.stderr
    assert listed(db) == before


def test_importing_a_fifo_or_a_device_is_refused_instead_of_blocking(db: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "archive.jsonl"
    os.mkfifo(fifo)
    for name in (str(fifo), "/dev/zero"):
        result = ccr("--store", str(db), "import", name)
        assert result.returncode == 65, result.stderr
        assert b"not a regular file" in result.stderr


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs (root only; skipped elsewhere), unmounted afterwards."""
    folder = tmp_path / "small-disk"
    folder.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)], capture_output=True, check=False
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def _fill(folder: Path) -> None:
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)


def test_on_a_full_disk_rm_still_removes_without_growing_the_file_and_says_the_disk_is_full(full_disk: Path) -> None:
    db = full_disk / "ccr.db"
    payload = base64.b64encode(os.urandom(150_000))
    handle = ccr("--store", str(db), "put", input=payload).stdout.decode().strip()
    _fill(full_disk)
    size = db.stat().st_size
    put = ccr("--store", str(db), "put", input=b"more " * 10_000)
    assert put.returncode == 73 and put.stderr.startswith(b"ccr: ccr_disk_full: ")
    assert b"not the store's byte budget" in put.stderr
    removed = ccr("--store", str(db), "rm", "--vacuum", handle)
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.decode().split() == [handle]
    assert db.stat().st_size == size and b"Traceback" not in removed.stderr
    (full_disk / "filler").unlink()
    assert listed(db) == []
    assert ccr("--store", str(db), "verify").returncode == 0


def test_a_byte_budget_beyond_any_disk_is_an_error_naming_the_setting(db: Path) -> None:
    result = ccr("--store", str(db), "stats", env={"COMPACTOR_CCR_MAX_BYTES": "99999999999999999999999"})
    assert result.returncode == 2
    assert result.stderr.startswith(b"ccr: ccr_config_invalid: COMPACTOR_CCR_MAX_BYTES=")


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (gzip.compress(bytes(64 << 20), compresslevel=1), b"control bytes"),
        (gzip.compress(b"{" + b"A" * (24 << 20), compresslevel=1), b"longer than"),
        (
            gzip.compress(
                b'{"format":"ccr-archive","version":1,"records":1,"objects":0,"created_at":"x"}\n'
                b'{"item":"record","handle":"ccr_x","size":"big","data":""}\n'
            ),
            b"line 2: not a valid record: size: ",
        ),
    ],
    ids=["a gzip of zeros", "one line past the budget", "a record pydantic refuses"],
)
def test_importing_a_hostile_archive_is_refused_on_one_line_with_a_bounded_read(
    db: Path, tmp_path: Path, content: bytes, says: bytes
) -> None:
    fill(db)
    before = listed(db)
    archive = tmp_path / "hostile.jsonl.gz"
    archive.write_bytes(content)
    result = ccr("--store", str(db), "import", str(archive), env={"COMPACTOR_CCR_MAX_BYTES": str(16 << 20)})
    assert result.returncode == 65, result.stderr
    assert result.stderr.startswith(b"ccr: ccr_archive_invalid: ") and says in result.stderr
    assert result.stderr.count(b"\n") == 1 and result.stdout == b""
    assert listed(db) == before
