"""`compactor replay` in a real subprocess, on the project's own long session."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccr import open_store
from compactor.claude_code.transcript import read_sessions, read_transcript

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"


def cli(*args: str, env: dict[str, str] | None = None, prog: str = "compactor") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", prog, *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def long_replay(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:  # type: ignore[type-arg]
    store = tmp_path_factory.mktemp("replay") / "ccr.db"
    done = cli("replay", str(LONG), "--json", "--store", str(store))
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout), store


def test_replay_report_has_the_contract_fields(long_replay: tuple[dict, Path]) -> None:  # type: ignore[type-arg]
    report, _ = long_replay
    assert set(report) >= {"session", "compactions", "totals"}
    assert len(report["compactions"]) >= 2
    for c in report["compactions"]:
        assert {
            "trigger",
            "pre_tokens",
            "post_tokens",
            "threshold",
            "summary_tokens",
            "dropped",
            "attachments",
            "skipped",
            "dedup",
            "basis",
            "at_line",
            "reread_coverage",
        } <= set(c)
        assert c["post_tokens"] < c["threshold"] <= c["pre_tokens"]
        assert c["basis"] == "inferred"


def test_every_dropped_handle_resolves_byte_exact_through_ccr_get(long_replay: tuple[dict, Path]) -> None:  # type: ignore[type-arg]
    """Every handle is read back from the store file; one of each kind also through the ``ccr get``
    command itself (a process per handle would cost a minute for the same proof)."""
    report, store = long_replay
    handles = [d for c in report["compactions"] for d in c["dropped"]]
    handles += [
        {**a, "kind": f"attachment:{a['type']}"} for c in report["compactions"] for a in c["attachments"] if a["handle"]
    ]
    assert handles
    with open_store(store, readonly=True) as opened:
        for item in handles:
            data = opened.get(item["handle"])
            assert "ccr_" + hashlib.sha256(data).hexdigest()[:32] == item["handle"]
            if "bytes" in item:
                assert len(data) == item["bytes"]
    one_of_each_kind = {item["kind"]: item for item in reversed(handles)}
    assert {"head", "tool_result"} <= set(one_of_each_kind)
    for item in one_of_each_kind.values():
        got = cli("get", item["handle"], "--store", str(store), prog="ccr")
        assert got.returncode == 0, got.stderr.decode()
        assert "ccr_" + hashlib.sha256(got.stdout).hexdigest()[:32] == item["handle"]


def test_the_table_is_the_default_output(tmp_path: Path) -> None:
    done = cli("replay", str(LONG), "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    text = done.stdout.decode()
    assert "compactions:" in text and "re-read coverage" in text
    assert done.stderr.decode().splitlines() == [
        (
            f"compactor: the dropped spans are stored in {(tmp_path / 'ccr.db').resolve()} "
            f"(get one back: ccr get --store {(tmp_path / 'ccr.db').resolve()} HANDLE)"
        )
    ]


def test_replay_names_the_default_store_on_stderr_and_json_stdout_stays_only_the_report(tmp_path: Path) -> None:
    home = tmp_path / "home"
    page, out = tmp_path / "page.html", tmp_path / "out.jsonl"
    done = cli(
        "replay", str(LONG), "--json", "--html", str(page), "--output", str(out), env={"COMPACTOR_HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["compactions"]
    assert done.stderr.decode().splitlines() == [
        f"compactor: the dropped spans are stored in {home / 'ccr.db'} (get one back: ccr get HANDLE)",
        f"compactor: wrote the compacted session to {out}",
        f"compactor: wrote the report page to {page}",
    ]
    assert (home / "ccr.db").is_file() and page.is_file() and out.is_file()


def test_a_replay_that_drops_nothing_names_no_store(tmp_path: Path) -> None:
    small = LONG.parent / "small.jsonl"
    done = cli("replay", str(small), "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    assert "no compaction" in done.stdout.decode() and done.stderr == b""


def test_a_store_too_small_compacts_nothing_says_why_and_exits_73(tmp_path: Path) -> None:
    done = cli(
        "replay", str(LONG), "--json", "--store", str(tmp_path / "ccr.db"), env={"COMPACTOR_CCR_MAX_BYTES": "2000"}
    )
    assert done.returncode == 73
    report = json.loads(done.stdout)
    assert report["compactions"] == [] and report["failures"]
    assert all(f["error_id"] == "ccr_budget_exceeded" for f in report["failures"])
    assert b"ccr_budget_exceeded" in done.stderr and b"failed closed" in done.stderr
    assert report["totals"]["messages"] == len(read_transcript(LONG).messages) - sum(
        1 for m in read_transcript(LONG).messages if m.is_compact_summary
    )


@pytest.fixture(scope="module")
def long_output(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:  # type: ignore[type-arg]
    """``replay LONG --json --output compacted.jsonl``, run once for the tests that read what it wrote."""
    folder = tmp_path_factory.mktemp("output")
    out = folder / "compacted.jsonl"
    done = cli("replay", str(LONG), "--json", "--store", str(folder / "ccr.db"), "--output", str(out))
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout), out


def test_output_writes_claude_code_jsonl_with_boundaries(long_output: tuple[dict, Path]) -> None:  # type: ignore[type-arg]
    report, out = long_output
    written = read_transcript(out, strict=True)
    assert [(c.trigger, c.pre_tokens, c.post_tokens) for c in written.compactions] == [
        (c["trigger"], c["pre_tokens"], c["post_tokens"]) for c in report["compactions"]
    ]
    assert all(c.summary and "continues from an earlier conversation" in c.summary for c in written.compactions)


def test_the_output_holds_the_tail_and_the_attachments_after_each_boundary(
    long_output: tuple[dict, Path],  # type: ignore[type-arg]
) -> None:
    report, out = long_output
    written = read_transcript(out, strict=True)
    assert written.warnings == []
    assert any("tail" in [e["part"] for e in c["context"]] for c in report["compactions"])
    for recorded, c in zip(written.compactions, report["compactions"], strict=True):
        parts = [e["part"] for e in c["context"]]
        assert "attachment" in parts
        context = written.messages[recorded.message_index : recorded.message_index + len(parts)]
        assert [m.is_compact_summary for m in context] == [p == "summary" for p in parts]
        assert [m.is_meta for m in context] == [p in ("attachment", "index") for p in parts]
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({r["uuid"] for r in records if "uuid" in r}) == sum("uuid" in r for r in records)


@pytest.mark.parametrize("link", [False, True])
def test_an_output_that_is_the_input_exits_2_and_leaves_the_input_byte_identical(tmp_path: Path, link: bool) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LONG.read_bytes())
    output = session
    if link:
        output = tmp_path / "link.jsonl"
        output.symlink_to(session)
    before = session.read_bytes()
    done = cli("replay", str(session), "--store", str(tmp_path / "ccr.db"), "--output", str(output))
    assert done.returncode == 2
    assert b"output_refused" in done.stderr and b"overwrite" in done.stderr
    assert done.stdout == b""
    assert session.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl" or p.name.endswith(".tmp")) == sorted(
        ["s.jsonl"] + (["link.jsonl"] if link else [])
    )


def test_bad_input_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    missing = cli("replay", str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 66 and b"Traceback" not in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "a"}\n{not json\n')
    strict = cli("replay", str(bad), "--strict", "--store", str(tmp_path / "ccr.db"))
    assert strict.returncode == 65 and b"Traceback" not in strict.stderr
    lenient = cli("replay", str(bad), "--store", str(tmp_path / "ccr.db"))
    assert lenient.returncode == 0 and b"bad.jsonl:2" in lenient.stderr


def test_a_session_that_never_fills_the_context_says_so(tmp_path: Path) -> None:
    small = LONG.with_name("small.jsonl")
    done = cli("replay", str(small), "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    assert b"no compaction: the context peaked at" in done.stdout
    assert b"167,000-token threshold" in done.stdout


def test_a_session_file_whose_name_is_not_utf8_still_prints_valid_json(tmp_path: Path) -> None:
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/odd\xffname.jsonl"))
    odd.write_bytes(LONG.with_name("small.jsonl").read_bytes())
    done = cli("replay", str(odd), "--json", "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["session"].endswith("odd\udcffname.jsonl")


def test_an_html_page_that_would_replace_the_input_exits_2_and_leaves_the_input_byte_identical(tmp_path: Path) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LONG.read_bytes())
    done = cli("replay", str(session), "--store", str(tmp_path / "ccr.db"), "--html", str(tmp_path / "." / "s.jsonl"))
    assert done.returncode == 2
    assert done.stderr.startswith(b"compactor: output_refused: ") and b"overwrite" in done.stderr
    assert done.stdout == b""
    assert session.read_bytes() == LONG.read_bytes()


@pytest.mark.parametrize("flag", ["--output", "--html"])
def test_an_output_that_cannot_be_written_exits_73(tmp_path: Path, flag: str) -> None:
    session = tmp_path / "s.jsonl"
    session.write_bytes(LONG.read_bytes())
    not_a_folder = tmp_path / "plain-file"
    not_a_folder.write_text("x")
    done = cli("replay", str(session), "--store", str(tmp_path / "ccr.db"), flag, str(not_a_folder / "out"))
    assert done.returncode == 73, done.stderr
    assert done.stderr.startswith(b"compactor: output_write_failed: ") or done.stderr.startswith(
        b"compactor: transcript_write_failed: "
    )
    assert b"Traceback" not in done.stderr


def _garbage(path: Path) -> Path:
    path.write_bytes(b"plain text, not a database")
    return path


def _other_sqlite(path: Path) -> Path:
    from ccr import open_store

    open_store(path).close()  # a ccr store: an SQLite database, but not a memory database
    return path


@pytest.mark.parametrize(
    ("make", "code", "error_id"),
    [
        (lambda tmp: tmp / "missing" / "memory.db", 66, "input_not_found"),
        (lambda tmp: tmp, 65, "input_invalid"),
        (lambda tmp: _garbage(tmp / "garbage.db"), 65, "input_invalid"),
        (lambda tmp: _other_sqlite(tmp / "ccr-store.db"), 65, "input_invalid"),
    ],
    ids=["missing", "folder", "garbage", "another-sqlite-database"],
)
def test_a_memory_db_named_on_the_command_line_that_cannot_be_used_fails_before_the_replay(
    tmp_path: Path, make: object, code: int, error_id: str
) -> None:
    memory_db = make(tmp_path)  # type: ignore[operator]
    store = tmp_path / "replay-store.db"
    done = cli(
        "replay",
        str(LONG),
        "--json",
        "--store",
        str(store),
        "--memory-db",
        str(memory_db),
        env={"COMPACTOR_HOME": str(tmp_path / "home")},
    )
    assert done.returncode == code, done.stderr.decode()
    assert done.stderr.decode().startswith(f"compactor: {error_id}: ")
    assert str(memory_db) in done.stderr.decode()
    assert done.stdout == b""
    assert not store.exists()  # refused before the replay opened anything


def test_a_configured_memory_db_that_is_missing_stays_a_skipped_entry(tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text("[policy]\ncontext_window = 80000\n")
    missing = tmp_path / "missing" / "memory.db"
    done = cli(
        "replay",
        str(LONG),
        "--json",
        "--config",
        str(config),
        "--store",
        str(tmp_path / "ccr.db"),
        env={"COMPACTOR_HOME": str(tmp_path / "home"), "COMPACTOR_MEMORY_DB": str(missing)},
    )
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["compactions"]
    skipped = [s for c in report["compactions"] for s in c["skipped"] if s["type"] == "memory"]
    assert len(skipped) == len(report["compactions"])
    assert not missing.parent.exists()


TWO_SESSIONS = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "shapes" / "two_sessions.jsonl"


def test_replay_of_a_file_of_two_sessions_replays_the_one_named_by_session(tmp_path: Path) -> None:
    first, second = read_sessions(TWO_SESSIONS)
    for transcript in (first, second):
        done = cli(
            "replay",
            str(TWO_SESSIONS),
            "--session",
            str(transcript.session_id),
            "--json",
            "--store",
            str(tmp_path / "ccr.db"),
        )
        assert done.returncode == 0, done.stderr.decode()
        assert b"sessions" not in done.stderr
        report = json.loads(done.stdout)
        assert report["totals"]["messages"] == sum(not m.is_compact_summary for m in transcript.messages)


def test_replay_of_a_file_of_two_sessions_says_how_to_pick_another(tmp_path: Path) -> None:
    done = cli("replay", str(TWO_SESSIONS), "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    assert b"the file holds 2 sessions" in done.stderr and b"--session ID" in done.stderr


def test_replay_of_a_session_the_file_does_not_hold_names_those_it_does(tmp_path: Path) -> None:
    first, second = read_sessions(TWO_SESSIONS)
    done = cli("replay", str(TWO_SESSIONS), "--session", "no-such-session", "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 66 and done.stdout == b""
    message = done.stderr.decode()
    assert message.startswith("compactor: ") and len(message.strip().splitlines()) == 1
    assert str(first.session_id) in message and str(second.session_id) in message


def test_replay_of_a_real_session_with_dangling_links_warns_in_one_line(
    shared_transcripts: Path, tmp_path: Path
) -> None:
    session = shared_transcripts / "entire-2.1.29-1e0816ef.jsonl"
    done = cli("replay", str(session), "--json", "--store", str(tmp_path / "ccr.db"))
    assert done.returncode == 0, done.stderr.decode()
    warnings = [line for line in done.stderr.decode().splitlines() if line.startswith("compactor: warning:")]
    assert len(warnings) == 1 and "dangling_parent" in warnings[0] and "--verbose lists them" in warnings[0]
    verbose = cli("replay", str(session), "--json", "--verbose", "--store", str(tmp_path / "ccr.db"))
    listed = [line for line in verbose.stderr.decode().splitlines() if line.startswith("compactor: warning:")]
    assert len(listed) > 1 and all("is not in the file" in line for line in listed)
    assert verbose.stdout == done.stdout
