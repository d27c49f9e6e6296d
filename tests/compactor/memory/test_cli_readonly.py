"""Reading commands (recall, history) create nothing, and read a database on read-only media.

A database that does not exist yet answers as an empty store, and neither
its folder nor its file is created. An existing one is opened read-only, so a
0444 file or a read-only folder can be read. Permissions do not bind root, so
as root the file or folder is made immutable instead (``chattr +i``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from compactor.memory import memory_id, open_memory
from tests.compactor.memory.conftest import run_memory

FACT = "The staging database is reset every night at 02:00 UTC"


def make_db(folder: Path) -> Path:
    folder.mkdir(mode=0o755, exist_ok=True)
    path = folder / "memory.db"
    with open_memory(path, recovery=folder / "ccr.db") as db:
        db.remember(FACT)
    return path


def files(folder: Path) -> dict[str, bytes]:
    """The folder's files, leaving out an empty WAL and the WAL index a reader may set up."""
    return {
        p.name: p.read_bytes()
        for p in sorted(folder.iterdir())
        if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and p.stat().st_size == 0)
    }


@pytest.mark.parametrize("command", [["recall", "staging"], ["history", memory_id(FACT)]])
@pytest.mark.parametrize("where", ["nonexistent/dir/m.db", "m.db", "file.txt/m.db"])
def test_a_named_database_that_does_not_exist_is_input_not_found_and_nothing_is_created(
    tmp_path: Path, command: list[str], where: str
) -> None:
    (tmp_path / "file.txt").write_bytes(b"a file where a folder would be\n")
    missing = tmp_path / where
    done = run_memory("--db", str(missing), *command, home=tmp_path / "home")
    assert done.returncode == 66, done.stderr
    assert done.stderr.startswith(b"compactor: input_not_found: no memory database at ")
    assert done.stdout == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]


def test_the_default_database_that_does_not_exist_yet_answers_nothing_and_creates_nothing(tmp_path: Path) -> None:
    done = run_memory("recall", "staging", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"hits": [], "basis": "inferred"}
    assert not (tmp_path / "home").exists()


def test_recall_on_an_empty_file_is_not_a_store_and_leaves_it_empty(tmp_path: Path) -> None:
    empty = tmp_path / "m.db"
    empty.write_bytes(b"")
    done = run_memory("--db", str(empty), "recall", "staging", home=tmp_path)
    assert done.returncode == 73, done.stderr
    assert done.stderr.startswith(b"compactor: not_a_store: ") and b"empty" in done.stderr
    assert empty.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"]


@pytest.mark.parametrize(
    "command",
    [["remember", "deploys go through staging"], ["forget", "mem_" + "0" * 16], ["supersede", "mem_" + "0" * 16, "x"]],
)
def test_a_writing_command_makes_no_folder_the_user_did_not_ask_for(tmp_path: Path, command: list[str]) -> None:
    typo = tmp_path / "tpyo" / "deeper" / "m.db"
    done = run_memory("--db", str(typo), *command, home=tmp_path / "home")
    assert done.returncode == 66, done.stderr
    assert done.stderr.startswith(b"compactor: input_not_found: no folder ")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_a_writing_command_makes_a_named_database_in_a_folder_that_exists(tmp_path: Path) -> None:
    done = run_memory("--db", str(tmp_path / "m.db"), "remember", FACT, home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.db").is_file() and not (tmp_path / "home").exists()


@pytest.mark.parametrize("how", ["file", "folder"])
def test_recall_and_history_read_a_read_only_database_and_change_nothing(
    tmp_path: Path, freeze: Callable[[Path], None], how: str
) -> None:
    folder = tmp_path / "store"
    path = make_db(folder)
    before = files(folder)
    freeze(path if how == "file" else folder)
    recalled = run_memory("--db", str(path), "recall", "staging", home=tmp_path / "home")
    assert recalled.returncode == 0, recalled.stderr
    assert [h["text"] for h in json.loads(recalled.stdout)["hits"]] == [FACT]
    history = run_memory("--db", str(path), "history", memory_id(FACT), home=tmp_path / "home")
    assert history.returncode == 0, history.stderr
    assert [v["text"] for v in json.loads(history.stdout)["versions"]] == [FACT]
    assert files(folder) == before


def test_writing_to_a_read_only_database_is_still_refused_with_73(
    tmp_path: Path, freeze: Callable[[Path], None]
) -> None:
    folder = tmp_path / "store"
    path = make_db(folder)
    freeze(path)
    done = run_memory("--db", str(path), "remember", "another fact entirely", home=tmp_path / "home")
    assert done.returncode == 73, done.stderr
    assert done.stderr.startswith(b"compactor: store_error: ") and b"memory store" in done.stderr


def test_a_database_opened_read_only_refuses_writes_even_when_it_does_not_exist(tmp_path: Path) -> None:
    from compactor.memory.errors import StoreError

    with open_memory(tmp_path / "none.db", readonly=True) as db:
        assert db.recall("staging") == []
        with pytest.raises(StoreError, match="read-only"):
            db.remember(FACT)
    assert list(tmp_path.iterdir()) == []
