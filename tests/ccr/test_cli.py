"""The ``ccr`` command line, run as a real process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ccr import StoreStats, handle_for, open_store
from ccr._sqlite_read import STATS_FIELDS
from ccr.cli import COMMANDS
from tests.ccr.conftest import ccr

BINARY = bytes(range(256)) + b"\r\n\x00\r" + "é€😀".encode()


@pytest.fixture
def store_arg(tmp_path: Path) -> list[str]:
    (tmp_path / "store").mkdir()  # a store the user names is made only in a folder that exists
    return ["--store", str(tmp_path / "store" / "ccr.db")]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_every_command_has_help(command: str | None) -> None:
    result = ccr(*([command] if command else []), "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(b"usage: ccr")
    assert result.stderr == b""


def test_console_script_is_installed() -> None:
    script = Path(sys.executable).with_name("ccr")
    result = subprocess.run([str(script), "--help"], capture_output=True, check=False)
    assert result.returncode == 0
    assert b"put" in result.stdout


def test_put_prints_the_handle_and_get_writes_the_bytes_back_exactly(tmp_path: Path, store_arg: list[str]) -> None:
    source = tmp_path / "payload.bin"
    source.write_bytes(BINARY)
    put = ccr(*store_arg, "put", str(source), "--content-type", "application/octet-stream")
    assert put.returncode == 0, put.stderr
    handle = put.stdout.decode().strip()
    assert put.stdout == f"{handle_for(BINARY)}\n".encode()
    got = ccr(*store_arg, "get", f"<<ccr:{handle}>>")
    assert got.returncode == 0, got.stderr
    assert got.stdout == BINARY
    assert got.stderr == b""


def test_put_reads_stdin_and_store_option_works_after_the_command(store_arg: list[str]) -> None:
    put = ccr("put", "-", *store_arg, input=b"from stdin\n")
    assert put.returncode == 0, put.stderr
    assert ccr("get", put.stdout.decode().strip(), *store_arg).stdout == b"from stdin\n"


def test_get_takes_tinyjuice_markers_and_a_short_token_is_a_usage_error(store_arg: list[str]) -> None:
    handle = ccr(*store_arg, "put", "-", input=BINARY).stdout.decode().strip()
    for ref in (f"tj:{handle[4:]}", f'retrieve_tool_output("{handle[4:]}")'):
        got = ccr(*store_arg, "get", ref)
        assert got.returncode == 0, got.stderr
        assert got.stdout == BINARY
    short = ccr(*store_arg, "get", "tj:" + handle[4:20])
    assert short.returncode != 0 and short.stdout == b""
    assert b"tj:<32 hex>" in short.stderr


def test_compactor_home_chooses_the_default_store(tmp_path: Path) -> None:
    home = tmp_path / "home"
    put = ccr("put", input=b"x", env={"COMPACTOR_HOME": str(home)})
    assert put.returncode == 0, put.stderr
    assert (home / "ccr.db").is_file()


def test_get_by_lines_bytes_and_query(store_arg: list[str]) -> None:
    data = "alpha\nbeta é\n\ngamma parser\n\ndelta\n".encode()
    handle = ccr(*store_arg, "put", input=data).stdout.decode().strip()
    assert ccr(*store_arg, "get", handle, "--lines", "2:2").stdout == "beta é\n".encode()
    assert ccr(*store_arg, "get", handle, "--lines", "6:").stdout == b"delta\n"
    assert ccr(*store_arg, "get", handle, "--bytes", "11:12").stdout == "é".encode()
    query = ccr(*store_arg, "get", handle, "--query", "parser").stdout.decode()
    assert "gamma parser" in query and "omitted" in query and "delta" not in query


def test_get_says_on_stderr_when_a_query_matches_nothing_or_a_range_is_past_the_end(
    store_arg: list[str],
) -> None:
    data = b"alpha\n\nbeta\n\ngamma\n"
    handle = ccr(*store_arg, "put", input=data).stdout.decode().strip()
    miss = ccr(*store_arg, "get", handle, "--query", "zebra")
    assert (miss.returncode, miss.stdout) == (0, data)
    assert b"nothing in" in miss.stderr and b"zebra" in miss.stderr and b"whole original" in miss.stderr
    for flag, span in (("--lines", "1000:2000"), ("--bytes", "500:")):
        past = ccr(*store_arg, "get", handle, flag, span)
        assert (past.returncode, past.stdout) == (0, b"")
        assert b"past the end" in past.stderr
    quiet = ccr(*store_arg, "get", handle, "--query", "beta")
    assert quiet.stderr == b"" and b"beta" in quiet.stdout


def test_unknown_handle_exits_66_with_a_stable_error_id(store_arg: list[str]) -> None:
    ccr(*store_arg, "put", input=b"another record")
    result = ccr(*store_arg, "get", handle_for(b"never"))
    assert result.returncode == 66
    assert result.stdout == b""
    assert result.stderr.startswith(b"ccr: ccr_not_found: ")


def test_malformed_handle_exits_2_without_creating_a_store(tmp_path: Path) -> None:
    db = tmp_path / "untouched" / "ccr.db"
    result = ccr("--store", str(db), "get", "ccr_xyz")
    assert result.returncode == 2
    assert result.stderr.startswith(b"ccr: ccr_invalid_handle: ")
    assert not db.parent.exists()


def test_full_store_exits_73(store_arg: list[str]) -> None:
    env = {"COMPACTOR_CCR_MAX_BYTES": "10"}
    assert ccr(*store_arg, "put", input=b"0123456789", env=env).returncode == 0
    result = ccr(*store_arg, "put", input=b"more", env=env)
    assert result.returncode == 73
    assert result.stderr.startswith(b"ccr: ccr_budget_exceeded: ")
    assert result.stdout == b""


def test_bad_budget_variable_exits_2(store_arg: list[str]) -> None:
    result = ccr(*store_arg, "stats", env={"COMPACTOR_CCR_MAX_BYTES": "lots"})
    assert result.returncode == 2
    assert result.stderr.startswith(b"ccr: ccr_config_invalid: ")


def test_missing_input_file_exits_66(tmp_path: Path, store_arg: list[str]) -> None:
    result = ccr(*store_arg, "put", str(tmp_path / "nope.txt"))
    assert result.returncode == 66
    assert result.stderr.startswith(b"ccr: input_not_found: ")


@pytest.mark.parametrize(
    ("args", "error_id"),
    [
        ([], b"usage_error"),
        (["get"], b"usage_error"),
        (["get", "ccr_" + "0" * 32, "--lines", "1:2", "--bytes", "0:1"], b"usage_error"),
        (["get", "ccr_" + "0" * 32, "--lines", "x"], b"usage_error"),
        (["get", "ccr_" + "0" * 32, "--lines", "3:1"], b"usage_error"),
        (["frobnicate"], b"usage_error"),
    ],
)
def test_usage_mistakes_exit_2(store_arg: list[str], args: list[str], error_id: bytes) -> None:
    result = ccr(*store_arg, *args)
    assert result.returncode == 2
    assert b"ccr: " + error_id + b": " in result.stderr
    assert result.stdout == b""


def test_stats_prints_json_with_inferred_basis(store_arg: list[str]) -> None:
    ccr(*store_arg, "put", input=b"abc")
    result = ccr(*store_arg, "stats", "--json")
    stats = json.loads(result.stdout)
    assert (stats["entries"], stats["payload_bytes"], stats["full"], stats["basis"]) == (1, 3, False, "inferred")
    assert b"entries: 1" in ccr(*store_arg, "stats").stdout


def test_info_prints_record_metadata(store_arg: list[str]) -> None:
    handle = ccr(*store_arg, "put", "--producer", "me", input=b"abc").stdout.decode().strip()
    info = json.loads(ccr(*store_arg, "info", handle).stdout)
    assert (info["handle"], info["size"], info["producer"]) == (handle, 3, "me")


def test_verify_passes_clean_and_names_corrupt_records(tmp_path: Path, store_arg: list[str]) -> None:
    handle = ccr(*store_arg, "put", input=b"original").stdout.decode().strip()
    clean = ccr(*store_arg, "verify")
    assert (clean.returncode, clean.stdout) == (
        0,
        b"verified 1 record(s) and 0 typed object(s): every one matches its handle\n",
    )
    raw = sqlite3.connect(tmp_path / "store" / "ccr.db")
    with raw:
        raw.execute("UPDATE blobs SET data = ? WHERE handle = ?", (b"altered", handle))
    raw.close()
    broken = ccr(*store_arg, "verify")
    assert broken.returncode == 65
    assert broken.stdout.decode().split() == [handle]
    assert handle.encode() in broken.stderr
    assert ccr(*store_arg, "get", handle).returncode == 65


def test_verify_draws_a_progress_bar_on_a_terminal_only_and_stdout_stays_the_same(store_arg: list[str]) -> None:
    import pty
    import select

    ccr(*store_arg, "put", input=b"x" * 100_000)
    piped = ccr(*store_arg, "verify")
    assert piped.stderr == b""
    master, slave = pty.openpty()
    try:
        on_terminal = subprocess.run(
            [sys.executable, "-m", "ccr", *store_arg, "verify"],
            stdout=subprocess.PIPE,
            stderr=slave,
            check=False,
        )
        os.close(slave)
        drawn = b""
        while select.select([master], [], [], 0)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(master)
    assert (on_terminal.returncode, on_terminal.stdout) == (0, piped.stdout)
    assert b"verifying" in drawn


def test_main_returns_exit_codes_in_process(store_arg: list[str]) -> None:
    from ccr.cli import main

    assert main([*store_arg, "get", "nonsense"]) == 2
    assert main([*store_arg, "--help"]) == 0


def test_a_store_path_naming_a_file_that_is_not_a_store_is_refused_and_left_untouched(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(b"my notes\n")
    notes.chmod(0o644)
    foreign = tmp_path / "places.sqlite"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE bookmarks (url TEXT)")
    conn.close()
    foreign.chmod(0o644)
    before = foreign.read_bytes()
    for path in (notes, foreign):
        result = ccr("--store", str(path), "stats")
        assert result.returncode == 73, result.stderr
        assert result.stdout == b""
        assert result.stderr.startswith(b"ccr: not_a_store: ")
        assert (path.stat().st_mode & 0o777) == 0o644
    assert notes.read_bytes() == b"my notes\n"
    assert foreign.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "places.sqlite"]


def test_put_with_a_closed_stdin_says_so_instead_of_a_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "ccr", "--store", str(tmp_path / "ccr.db"), "put"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        preexec_fn=lambda: os.close(0),
    )
    assert done.returncode == 66
    assert b"input_not_found" in done.stderr and b"Traceback" not in done.stderr


def test_stats_read_from_the_file_are_the_store_s_own(store_arg: list[str], tmp_path: Path) -> None:
    assert ccr(*store_arg, "put", input=b"abc").returncode == 0
    assert ccr(*store_arg, "put", "--producer", "test", input="é 日本".encode()).returncode == 0
    with open_store(store_arg[1], readonly=True) as store:
        expected = store.stats()
    assert list(StoreStats.model_fields) == list(STATS_FIELDS)
    assert ccr(*store_arg, "stats", "--json").stdout.decode() == expected.model_dump_json() + "\n"
    lines = ccr(*store_arg, "stats").stdout.decode().splitlines()
    assert lines == [f"{k}: {str(v).lower() if isinstance(v, bool) else v}" for k, v in expected.model_dump().items()]


def test_stats_of_the_default_store_not_made_yet_say_it_is_empty_and_make_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    done = ccr("stats", "--json", env={"COMPACTOR_HOME": str(home)})
    stats = json.loads(done.stdout)
    assert (stats["entries"], stats["full"], stats["path"]) == (0, False, str(home / "ccr.db"))
    assert not home.exists()


def test_stats_read_no_models(store_arg: list[str]) -> None:
    ccr(*store_arg, "put", input=b"abc")
    code = (
        "import sys; from ccr.cli import main; code = main(sys.argv[1:]); "
        "assert 'pydantic' not in sys.modules, 'pydantic was loaded'; sys.exit(code)"
    )
    done = subprocess.run([sys.executable, "-c", code, *store_arg, "stats"], capture_output=True, check=False)
    assert done.returncode == 0, done.stderr
