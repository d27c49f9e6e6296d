"""The SQLite backend under real processes: concurrent opens, and a writer killed mid-put."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ccr import handle_for, open_store

WRITERS = 32
PER_WRITER = 4

_WRITER = """
import sys
from ccr import open_store, PutRequest
path, n = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
sys.stdin.read()
store = open_store(path)
handles = [store.put(f"writer {n} record {i} ".encode() * 100) for i in range(3)]
handles += store.put_many([PutRequest(data=f"writer {n} batch".encode()), PutRequest(data=b"shared")])
store.close()
print(" ".join(handles), flush=True)
"""

_LOOPER = """
import sys
from ccr import open_store
store = open_store(sys.argv[1])
i = 0
while True:
    handle = store.put(str(i).encode() * 1000, producer="looper", metadata={"i": i})
    print(i, handle, flush=True)
    i += 1
"""


def _payload(i: int) -> bytes:
    return str(i).encode() * 1000


def _child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Wait for a child whose stdin is already closed; return its stdout and stderr."""
    assert proc.stdout is not None and proc.stderr is not None
    with proc.stdout, proc.stderr:
        out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait()
    return out, err


def test_many_processes_opening_one_fresh_file_at_once_all_land(db_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(db_path), str(n)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        for n in range(WRITERS)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
    assert not db_path.exists()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.close()
    results = [_finish(proc) for proc in procs]
    failures = [(p.returncode, err) for p, (_, err) in zip(procs, results, strict=True) if p.returncode]
    assert failures == []
    handles = [h for out, _ in results for h in out.split()]
    assert len(handles) == WRITERS * (PER_WRITER + 1)
    with open_store(db_path) as store:
        assert store.verify() == []
        assert store.stats().entries == WRITERS * PER_WRITER + 1
        for n in range(WRITERS):
            assert store.get(handle_for(f"writer {n} record 2 ".encode() * 100)).startswith(
                f"writer {n} record 2".encode()
            )
        assert store.get(handle_for(b"shared")) == b"shared"


def test_writer_killed_mid_put_loop_leaves_a_clean_store_holding_every_returned_put(
    db_path: Path,
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _LOOPER, str(db_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_child_env(),
    )
    assert proc.stdout is not None
    returned: dict[int, str] = {}
    try:
        while len(returned) < 150:
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else "writer exited"
            number, printed = line.split()
            returned[int(number)] = printed
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    with open_store(db_path) as store:
        assert store.verify() == []
        for index, handle in returned.items():
            assert handle == handle_for(_payload(index))
            assert store.get(handle) == _payload(index)
            assert store.record(handle).metadata == {"i": index}
        assert store.stats().entries >= len(returned)


def test_a_read_only_store_not_made_yet_reads_empty_creates_nothing_and_reads_the_file_once_made(
    tmp_path: Path,
) -> None:
    from ccr import StoreError

    path = tmp_path / "later" / "ccr.db"
    reader = open_store(path, readonly=True)
    try:
        assert (reader.stats().entries, reader.records(), reader.contains("ccr_" + "0" * 32)) == (0, [], False)
        with pytest.raises(StoreError):
            reader.put(b"a reader writes nothing")
        assert not path.parent.exists()
        with open_store(path) as writer:
            handle = writer.put(b"stored by a writer meanwhile")
        assert reader.get(handle) == b"stored by a writer meanwhile"
        assert reader.stats().entries == 1
    finally:
        reader.close()
