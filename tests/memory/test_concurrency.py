"""Many processes at once on one fresh database: every remember lands, none is lost."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from memory import memory_id, open_memory
from tests.memory.conftest import CLI_TIMEOUT_S

PROCESSES = 32


def test_32_processes_remembering_different_texts_at_once_all_land(tmp_path: Path) -> None:
    db_path = tmp_path / "fresh" / "memory.db"
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
                    [sys.executable, "-m", "memory", "--db", str(db_path), "remember", "--stdin"],
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
