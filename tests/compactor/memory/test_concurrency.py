"""Many processes at once on one fresh database: every remember lands, none is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from compactor.memory import memory_id, open_memory
from tests.compactor.memory.conftest import CLI_TIMEOUT_S

PROCESSES = 32


def test_32_processes_remembering_different_texts_at_once_all_land(tmp_path: Path) -> None:
    db_path = tmp_path / "fresh" / "memory.db"
    db_path.parent.mkdir()  # a database the user names is made only in a folder that exists
    texts = [f"worker {i} learned that shard{i}marker needs a warm cache" for i in range(PROCESSES)]
    env = {**os.environ, "COMPACTOR_HOME": str(tmp_path / "home")}
    inputs = []
    for i, text in enumerate(texts):
        inputs.append(tmp_path / f"text{i}.txt")
        inputs[-1].write_text(text)
    procs = []
    for given in inputs:
        with given.open("rb") as stdin:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "compactor.memory", "--db", str(db_path), "remember", "--stdin"],
                    stdin=stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    env=env,
                )
            )
    answers = []
    for proc in procs:
        out, err = proc.communicate(timeout=CLI_TIMEOUT_S)
        assert proc.returncode == 0, err.decode()
        answers.append(json.loads(out))
    assert [a["id"] for a in answers] == [memory_id(t) for t in texts]
    assert all(a["created"] for a in answers)
    with open_memory(db_path, recovery=tmp_path / "ccr.db") as db:
        for i, text in enumerate(texts):
            hits = db.recall(f"shard{i}marker")
            assert [h.id for h in hits] == [memory_id(text)]


def test_kill_9_right_after_the_acknowledgement_loses_no_acknowledged_memory(tmp_path: Path) -> None:
    import signal
    import sqlite3

    db = tmp_path / "memory.db"
    env = {**os.environ, "COMPACTOR_MEMORY_DB": str(db)}
    acknowledged: dict[str, str] = {}
    for i in range(12):
        text = f"note {i}: the deploy key rotates on day {i}"
        process = subprocess.Popen(
            [sys.executable, "-m", "compactor.memory", "remember", text],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert process.stdout is not None
        line = process.stdout.readline()  # the acknowledgement; the process is still closing the database
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=CLI_TIMEOUT_S)
        process.stdout.close()
        if line:
            acknowledged[json.loads(line)["id"]] = text
        # and one killed at once, before it could answer: it may land or not, but it must not damage anything
        early = subprocess.Popen(
            [sys.executable, "-m", "compactor.memory", "remember", f"early {i}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        early.send_signal(signal.SIGKILL)
        early.wait(timeout=CLI_TIMEOUT_S)
    assert len(acknowledged) == 12
    store = open_memory(db)
    try:
        for mid, text in acknowledged.items():
            assert store.get(mid).text == text
        store.remember("after the kills, the database still takes memories")
    finally:
        store.close()
    check = sqlite3.connect(db)
    try:
        assert check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    finally:
        check.close()
