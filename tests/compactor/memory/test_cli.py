"""``compactor memory`` in real subprocesses: JSON out, ``compactor: error_id: message``, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compactor.memory import MAX_TEXT_BYTES, memory_id
from compactor.memory.cli import COMMANDS
from tests.compactor.memory.conftest import CLI_TIMEOUT_S, run_memory

FACT = "The staging database is reset every night at 02:00 UTC"


def ok_json(done: subprocess.CompletedProcess[bytes]) -> dict:
    assert done.returncode == 0, done.stderr.decode()
    assert done.stderr == b""
    return json.loads(done.stdout)


def refused(done: subprocess.CompletedProcess[bytes], code: int, error_id: str) -> str:
    assert done.returncode == code, (done.stdout, done.stderr)
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.startswith(f"compactor: {error_id}: ") or f"\ncompactor: {error_id}: " in err, err
    return err


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_command_has_help_and_help_opens_no_database(tmp_path: Path, command: str | None) -> None:
    args = ["--help"] if command is None else [command, "--help"]
    done = run_memory(*args, home=tmp_path / "home")
    assert done.returncode == 0 and done.stdout.startswith(b"usage: compactor memory")
    assert not (tmp_path / "home").exists()


def test_compactor_memory_is_what_python_m_compactor_memory_runs(tmp_path: Path) -> None:
    compactor = Path(sys.executable).with_name("compactor")
    if not compactor.exists():
        pytest.skip("the compactor script is not installed beside this Python")
    runs = [
        ["--help"],
        ["recall", "--help"],
        ["remember", FACT],
        ["recall", "staging"],
        ["history", "mem_1"],
        ["recall", "x", "--limit", "many"],
        ["forget", memory_id(FACT)],
        ["recall", "staging"],
    ]
    for args in runs:
        by_module = run_memory(*args, home=tmp_path / "module")
        by_script = subprocess.run(
            [str(compactor), "memory", *args],
            capture_output=True,
            timeout=CLI_TIMEOUT_S,
            env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "script")},
            check=False,
        )
        assert (by_script.returncode, by_script.stderr) == (by_module.returncode, by_module.stderr), args
        if args[0] == "remember":  # the same answer but for when each was stored
            stamped = [json.loads(done.stdout) for done in (by_script, by_module)]
            assert [{k: v for k, v in answer.items() if k != "created_at"} for answer in stamped] == [
                {"id": memory_id(FACT), "created": True, "basis": "inferred"}
            ] * 2
        else:
            assert by_script.stdout == by_module.stdout, args


def test_compactor_help_lists_memory() -> None:  # the wheel has no memory script: tests/test_packaging.py
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "--help"],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0 and "\n    memory " in done.stdout


def test_help_loads_neither_the_store_nor_pydantic_tiktoken_or_jinja2(tmp_path: Path) -> None:
    probe = (
        "import sys, contextlib, io\n"
        "from compactor.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    codes = [main(['memory', '--help']), main(['memory', 'recall', '--help'])]\n"
        "assert codes == [0, 0], codes\n"
        "heavy = {'pydantic', 'tiktoken', 'jinja2', 'sqlite3', 'compactor.memory.store'}\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=CLI_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_version_prints_the_package_version(tmp_path: Path) -> None:
    done = run_memory("--version", home=tmp_path)
    assert done.returncode == 0 and done.stdout.decode().startswith("compactor memory ")


def test_remember_from_argv_or_stdin_prints_the_id_and_whether_it_was_new(tmp_path: Path) -> None:
    first = ok_json(run_memory("remember", FACT, home=tmp_path))
    again = ok_json(run_memory("remember", "--stdin", home=tmp_path, stdin=FACT.encode()))
    assert first["id"] == again["id"] == memory_id(FACT)
    assert first["created"] is True and again["created"] is False
    assert first["created_at"] == again["created_at"]
    assert (tmp_path / "memory.db").is_file()


def test_remember_over_256_kib_on_stdin_exits_65_memory_too_large(tmp_path: Path) -> None:
    huge = b"x" * (4 * 1024 * 1024)
    refused(run_memory("remember", "--stdin", home=tmp_path, stdin=huge), 65, "memory_too_large")
    refused(run_memory("remember", "--stdin", home=tmp_path, stdin=b"y" * (MAX_TEXT_BYTES + 1)), 65, "memory_too_large")
    assert ok_json(run_memory("remember", "--stdin", home=tmp_path, stdin=b"y" * MAX_TEXT_BYTES))["created"]


def test_remember_refuses_empty_text_and_stdin_that_is_not_utf8(tmp_path: Path) -> None:
    refused(run_memory("remember", "  ", home=tmp_path), 65, "memory_invalid_text")
    refused(run_memory("remember", "--stdin", home=tmp_path, stdin=b"\xff\xfe bad"), 65, "memory_invalid_text")


def test_remember_needs_exactly_one_of_text_and_stdin(tmp_path: Path) -> None:
    refused(run_memory("remember", "--stdin", FACT, home=tmp_path, stdin=b"x"), 2, "usage_error")
    refused(run_memory("remember", home=tmp_path), 2, "usage_error")


def test_remember_with_a_closed_stdin_exits_66(tmp_path: Path) -> None:
    done = subprocess.run(
        ["sh", "-c", 'exec "$0" -m compactor.memory remember --stdin <&-', sys.executable],
        capture_output=True,
        timeout=CLI_TIMEOUT_S,
        env={"COMPACTOR_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    refused(done, 66, "input_not_found")


def test_recall_prints_hits_and_an_off_topic_query_prints_none(tmp_path: Path) -> None:
    ok_json(run_memory("remember", FACT, home=tmp_path))
    hits = ok_json(run_memory("recall", "staging database reset", home=tmp_path))["hits"]
    assert [h["id"] for h in hits] == [memory_id(FACT)]
    assert set(hits[0]) == {"id", "text", "score", "tokens_added", "basis"}
    assert hits[0]["basis"] == "inferred"
    assert ok_json(run_memory("recall", "quantum chromodynamics", home=tmp_path)) == {"hits": [], "basis": "inferred"}


def test_recall_budget_zero_is_unlimited_omitted_is_2000_and_negative_is_refused(tmp_path: Path) -> None:
    big = "ledger " + " ".join(f"row{i}" for i in range(6_000))
    ok_json(run_memory("remember", "--stdin", home=tmp_path, stdin=big.encode()))
    (whole,) = ok_json(run_memory("recall", "ledger", "--token-budget", "0", home=tmp_path))["hits"]
    assert whole["text"] == big and "recovery_handle" not in whole
    (default,) = ok_json(run_memory("recall", "ledger", home=tmp_path))["hits"]
    assert default["tokens_added"] <= 2000 and default["recovery_handle"].startswith("ccr_")
    refused(run_memory("recall", "ledger", "--token-budget", "-1", home=tmp_path), 2, "usage_error")
    refused(run_memory("recall", "ledger", "--limit", "0", home=tmp_path), 2, "usage_error")
    refused(run_memory("recall", "ledger", "--limit", "many", home=tmp_path), 2, "usage_error")


def test_recover_writes_the_exact_bytes_behind_a_handle(tmp_path: Path) -> None:
    big = "".join(f"ledger row {i} ✓ café\n" for i in range(20_000))[:200_000]
    ok_json(run_memory("remember", "--stdin", home=tmp_path, stdin=big.encode()))
    (hit,) = ok_json(run_memory("recall", "ledger", "--token-budget", "300", home=tmp_path))["hits"]
    assert hit["tokens_added"] <= 300 and big.startswith(hit["text"])
    done = run_memory("recover", hit["recovery_handle"], home=tmp_path)
    assert done.returncode == 0 and done.stdout == big.encode()
    refused(run_memory("recover", "ccr_" + "0" * 32, home=tmp_path), 66, "ccr_not_found")
    refused(run_memory("recover", "nope", home=tmp_path), 2, "ccr_invalid_handle")


def test_supersede_history_and_forget(tmp_path: Path) -> None:
    v1 = ok_json(run_memory("remember", "deploy window is Tuesday", home=tmp_path))["id"]
    v2 = ok_json(run_memory("supersede", v1, "--stdin", home=tmp_path, stdin=b"deploy window is Thursday"))
    assert v2["supersedes"] == v1 and v2["valid_until"] is None
    chain = ok_json(run_memory("history", v1, home=tmp_path))["versions"]
    assert [v["id"] for v in chain] == [v1, v2["id"]]
    assert chain[0]["superseded_by"] == v2["id"]
    refused(run_memory("supersede", v1, "deploy window is Friday", home=tmp_path), 65, "memory_not_current")
    refused(run_memory("remember", "deploy window is Tuesday", home=tmp_path), 65, "memory_superseded")
    assert ok_json(run_memory("forget", v2["id"], home=tmp_path)) == {"forgotten": True, "basis": "inferred"}
    assert ok_json(run_memory("forget", v2["id"], home=tmp_path)) == {"forgotten": False, "basis": "inferred"}
    assert ok_json(run_memory("recall", "deploy window", home=tmp_path)) == {"hits": [], "basis": "inferred"}


def test_unknown_and_malformed_ids(tmp_path: Path) -> None:
    unknown = "mem_" + "a" * 16
    refused(run_memory("history", unknown, home=tmp_path), 66, "memory_not_found")
    refused(run_memory("supersede", unknown, "x", home=tmp_path), 66, "memory_not_found")
    refused(run_memory("history", "mem_1", home=tmp_path), 2, "usage_error")
    refused(run_memory("forget", "1234", home=tmp_path), 2, "usage_error")


def test_db_flag_and_env_choose_the_database(tmp_path: Path) -> None:
    chosen = tmp_path / "elsewhere" / "mem.db"
    chosen.parent.mkdir()  # a database the user names is made only in a folder that exists
    ok_json(run_memory("--db", str(chosen), "remember", FACT, home=tmp_path / "home"))
    assert chosen.is_file() and not (tmp_path / "home" / "memory.db").exists()
    by_env = ok_json(run_memory("recall", "staging", home=tmp_path / "home", env={"COMPACTOR_MEMORY_DB": str(chosen)}))
    assert len(by_env["hits"]) == 1


def test_a_file_that_is_not_a_memory_database_exits_73_and_is_left_alone(tmp_path: Path) -> None:
    other = tmp_path / "notes.db"
    other.write_bytes(b"plain text, not sqlite")
    refused(run_memory("--db", str(other), "recall", "x", home=tmp_path), 73, "not_a_store")
    assert other.read_bytes() == b"plain text, not sqlite"


def test_recall_and_history_of_a_memory_edited_on_disk_name_it_exit_65_and_forget_removes_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    damaged = ok_json(run_memory("remember", "key in vault alpha-zzzzzzzz", home=home))["id"]
    other = ok_json(run_memory("remember", "vault key rotation is monthly", home=home))["id"]
    for path in home.glob("memory.db*"):
        path.write_bytes(path.read_bytes().replace(b"zzzzzzzz", b"zzzzQzzz"))
    recalled = run_memory("recall", "vault key", home=home)
    assert recalled.returncode == 65
    answer = json.loads(recalled.stdout)
    assert [h["id"] for h in answer["hits"]] == [other] and answer["damaged"] == [damaged]
    assert b"zzzzQzzz" not in recalled.stdout
    assert recalled.stderr.decode().startswith("compactor: memory_damaged: ") and damaged in recalled.stderr.decode()
    assert recalled.stderr.count(b"\n") == 1
    refused(run_memory("history", damaged, home=home), 65, "memory_damaged")
    assert ok_json(run_memory("forget", damaged, home=home))["forgotten"] is True
    assert [h["id"] for h in ok_json(run_memory("recall", "vault key", home=home))["hits"]] == [other]
