"""`compactor restore`: undo compactions, byte for byte, as real subprocesses."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from compactor.claude_code.transcript import read_transcript

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"
SESSION_ID = "0c081f08-c5e9-43d8-a49c-e2fcd96bf7a8"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compactor", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )


def lines_of(path: Path, last: int) -> bytes:
    return b"".join(path.read_bytes().splitlines(keepends=True)[:last])


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:  # type: ignore[type-arg]
    folder = tmp_path_factory.mktemp("restore")
    store, output = folder / "ccr.db", folder / "replayed.jsonl"
    done = cli("replay", str(LONG), "--json", "--store", str(store), "--output", str(output))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), store, output


def test_each_compaction_stores_the_transcript_lines_since_the_previous_one(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, _, _ = replayed
    segments = [c["transcript"] for c in report["compactions"]]
    assert len(segments) >= 2 and segments[0]["first_line"] == 1
    for previous, current in itertools.pairwise(segments):
        assert current["first_line"] == previous["last_line"] + 1


def test_restore_gives_back_the_original_lines_before_each_compaction(
    replayed: tuple[dict, Path, Path], tmp_path: Path
) -> None:  # type: ignore[type-arg]
    report, store, output = replayed
    for n, compaction in enumerate(report["compactions"], start=1):
        restored = tmp_path / f"before-{n}.jsonl"
        done = cli("restore", str(output), "--before", str(n), "--output", str(restored), "--store", str(store))
        assert done.returncode == 0, done.stderr
        assert restored.read_bytes() == lines_of(LONG, compaction["transcript"]["last_line"])
        assert f"before compaction {n}" in done.stderr and done.stdout == ""


def test_by_default_restore_undoes_the_last_compaction_and_the_file_reads_as_a_session(
    replayed: tuple[dict, Path, Path],
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    report, store, output = replayed
    restored = tmp_path / "restored.jsonl"
    done = cli("restore", str(output), "--output", str(restored), "--store", str(store))
    assert done.returncode == 0, done.stderr
    last = report["compactions"][-1]["transcript"]["last_line"]
    assert restored.read_bytes() == lines_of(LONG, last)
    original = read_transcript(LONG)
    again = read_transcript(restored)
    kept = [e.message for e in original.entries if e.message is not None and max(e.lines or [e.line]) <= last]
    assert [m for m in (e.message for e in again.entries) if m is not None] == kept


def test_list_names_every_compaction_that_can_be_undone(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, store, output = replayed
    done = cli("restore", str(output), "--list", "--json", "--store", str(store))
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["handle"] for r in rows] == [c["transcript"]["handle"] for c in report["compactions"]]


def test_list_is_a_table_for_people_by_default(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, store, output = replayed
    done = cli("restore", str(output), "--list", "--store", str(store))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    n = len(report["compactions"])
    assert lines[0].startswith(f"{n} compactions of {output} can be undone")
    assert lines[2].split() == ["compaction", "lines", "size", "stored", "as"]
    for number, (line, c) in enumerate(zip(lines[3 : 3 + n], report["compactions"], strict=True), start=1):
        segment = c["transcript"]
        assert line.split()[0] == str(number) and line.split()[-1] == segment["handle"]
        assert f"{segment['first_line']:,}-{segment['last_line']:,}" in line
    assert (
        lines[-1] == f"undo compaction N and everything after it: compactor restore {output} --before N --output FILE"
    )


def test_list_of_a_session_whose_compactions_no_one_stored_says_why_and_how_undo_becomes_possible() -> None:
    done = cli("restore", str(LONG), "--list")
    assert done.returncode == 0, done.stderr
    recorded = len(read_transcript(LONG).compactions)
    assert recorded > 0
    assert done.stdout.startswith(
        f"nothing to undo: {LONG} holds {recorded} compactions, but none had its lines stored before it happened.\n"
    )
    assert '--plugin-dir "$(compactor plugin path)"' in done.stdout and "--output FILE" in done.stdout
    assert json.loads(cli("restore", str(LONG), "--list", "--json").stdout) == []


def test_list_of_a_session_with_no_compaction_says_so(tmp_path: Path) -> None:
    small = LONG.parent / "small.jsonl"
    done = cli("restore", str(small), "--list")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"nothing to undo: {small} holds no compaction.\n")


@pytest.mark.parametrize(
    ("extra", "code", "error_id"),
    [
        (["--before", "9"], 2, "usage_error"),
        (["--before", "0"], 2, "usage_error"),
        ([], 2, "usage_error"),  # no --output
    ],
)
def test_restore_refuses_a_request_it_cannot_answer(
    replayed: tuple[dict, Path, Path],
    tmp_path: Path,
    extra: list[str],
    code: int,
    error_id: str,  # type: ignore[type-arg]
) -> None:
    _, store, output = replayed
    args = ["restore", str(output), "--store", str(store), *extra]
    if extra:
        args += ["--output", str(tmp_path / "r.jsonl")]
    done = cli(*args)
    assert done.returncode == code and error_id in done.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_restore_never_overwrites_its_source(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    _, store, output = replayed
    before = output.read_bytes()
    done = cli("restore", str(output), "--output", str(output), "--store", str(store))
    assert done.returncode == 2
    assert output.read_bytes() == before


def test_an_unknown_session_or_a_missing_file_is_not_found(tmp_path: Path) -> None:
    assert cli("restore", "no-such-session", "--output", str(tmp_path / "r.jsonl")).returncode == 66
    assert cli("restore", str(tmp_path / "missing.jsonl"), "--output", str(tmp_path / "r.jsonl")).returncode == 66


def test_a_store_that_lost_a_segment_says_so(replayed: tuple[dict, Path, Path], tmp_path: Path) -> None:  # type: ignore[type-arg]
    _, _, output = replayed
    done = cli("restore", str(output), "--output", str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "empty.db"))
    assert done.returncode == 66 and "Traceback" not in done.stderr
    assert not (tmp_path / "r.jsonl").exists()


def test_claude_codes_own_compactions_are_undone_from_what_the_pre_compact_hook_stored(tmp_path: Path) -> None:
    """The hook runs before each compaction as the transcript grows; restore by session id gives each state back."""
    session = tmp_path / "project" / "session.jsonl"
    session.parent.mkdir()
    lines = LONG.read_bytes().splitlines(keepends=True)
    cuts = [e.line - 1 for e in read_transcript(LONG).entries if e.kind == "compact_boundary"]
    assert len(cuts) == 2
    payload = {
        "session_id": SESSION_ID,
        "transcript_path": str(session),
        "cwd": str(session.parent),
        "hook_event_name": "PreCompact",
        "trigger": "auto",
        "custom_instructions": None,
    }
    for cut in cuts:
        session.write_bytes(b"".join(lines[:cut]))  # the file as it stood when Claude Code compacted
        done = cli("hook", "pre-compact", stdin=json.dumps(payload))
        assert done.returncode == 0 and done.stdout, done.stderr
    session.write_bytes(b"".join(lines))
    for n, cut in enumerate(cuts, start=1):
        restored = tmp_path / f"restored-{n}.jsonl"
        done = cli("restore", SESSION_ID, "--before", str(n), "--output", str(restored))
        assert done.returncode == 0, done.stderr
        assert restored.read_bytes() == b"".join(lines[:cut])
    moved = tmp_path / "moved.jsonl"
    shutil.copyfile(session, moved)
    done = cli("restore", str(moved), "--before", "1", "--output", str(tmp_path / "via-file.jsonl"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "via-file.jsonl").read_bytes() == b"".join(lines[: cuts[0]])


def test_restore_help_names_its_argument_as_the_synopsis_does() -> None:
    done = cli("restore", "--help")
    assert done.returncode == 0
    assert "SOURCE" not in done.stdout
    assert done.stdout.count("SESSION_ID|TRANSCRIPT") >= 3  # usage, description, argument
    assert "--json" in done.stdout
