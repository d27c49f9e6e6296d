"""Hostile input through the real command lines: every case ends in the work done or one clear line.

Lone surrogate escapes, integers too long to read, files that are not
transcripts, CR-only line endings, parent links that loop, names too long
for the file system, undo after ``ccr rm``, and a restore onto the file the
stored lines came from. Each runs ``compactor`` (and ``ccr``) as a
subprocess with its own ``COMPACTOR_HOME``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ccr import handle_for

ROOT = Path(__file__).resolve().parents[3]
LONG = ROOT / "fixtures" / "sessions" / "long.jsonl"
SMALL = ROOT / "fixtures" / "sessions" / "small.jsonl"
TIMEOUT_S = 300


def run(*argv: str | Path, home: Path, program: str = "compactor") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", program, *map(str, argv)],
        capture_output=True,
        timeout=TIMEOUT_S,
        env={**os.environ, "COMPACTOR_HOME": str(home)},
        cwd=ROOT,
        check=False,
    )


def one_error_line(done: subprocess.CompletedProcess[bytes], error_id: str, code: int) -> str:
    """The command failed with ``code`` and said so in one ``compactor: error_id: ...`` line, no traceback."""
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == code, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("compactor: warning: ")]
    assert len(lines) == 1 and lines[0].startswith(f"compactor: {error_id}: "), err
    return lines[0]


@pytest.fixture(scope="module")
def long_replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``compactor replay fixtures/sessions/long.jsonl --output o.jsonl``, run once: its home (the
    store the compactions went to) and the compacted session it wrote."""
    root = tmp_path_factory.mktemp("long-replayed")
    done = run("replay", LONG, "--output", root / "o.jsonl", home=root / "home")
    assert done.returncode == 0, done.stderr
    return root / "home", root / "o.jsonl"


@pytest.fixture
def replayed(long_replayed: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """A copy of ``long_replayed`` in the test's folder, the test's own to change: (home, o.jsonl)."""
    home, out = long_replayed
    shutil.copytree(home, tmp_path / "home")
    shutil.copyfile(out, tmp_path / "o.jsonl")
    return tmp_path / "home", tmp_path / "o.jsonl"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


def with_surrogates(tmp_path: Path, escapes: list[str]) -> Path:
    """The long fixture with each escape put at the start of a typed user message's text (escaped, as JSON holds it)."""
    lines = LONG.read_bytes().splitlines(keepends=True)
    out: list[bytes] = []
    left = list(escapes)
    for line in lines:
        data = json.loads(line)
        message = data.get("message") if data.get("type") == "user" else None
        if left and isinstance(message, dict) and isinstance(message.get("content"), str):
            message["content"] = json.loads(f'"{left.pop(0)}"') + " " + message["content"]
            line = (json.dumps(data) + "\n").encode()  # ensure_ascii: the surrogate stays a \\ud800 escape
        out.append(line)
    assert not left, "the fixture has fewer typed user messages than escapes"
    path = tmp_path / "surrogates.jsonl"
    path.write_bytes(b"".join(out))
    return path


@pytest.mark.parametrize(
    "escapes",
    [["\\ud800"], ["\\udfff"], ["\\ud83d", "\\ude00 cut emoji", "\\udbff\\udbff"]],
    ids=["high", "low", "several"],
)
def test_a_lone_surrogate_is_read_as_text_and_the_replay_compacts_storing_the_file_byte_exact(
    escapes: list[str], tmp_path: Path
) -> None:
    transcript = with_surrogates(tmp_path, escapes)
    out = tmp_path / "out.jsonl"
    done = run("replay", transcript, "--json", "--output", out, home=tmp_path / "home")
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "Traceback" not in err
    assert (
        ("lone surrogate" in err and "U+FFFD" in err) if len(escapes) == 1 else f"{len(escapes)} lone_surrogate" in err
    )
    report = json.loads(done.stdout)
    assert len(report["compactions"]) > 0 and all(c["ok"] for c in report["compactions"])
    # The stored transcript lines hold the escapes exactly as the file did.
    listed = run("restore", out, "--list", "--json", home=tmp_path / "home")
    assert listed.returncode == 0, listed.stderr
    first = json.loads(listed.stdout)[0]
    stored = run("get", first["handle"], home=tmp_path / "home", program="ccr")
    assert stored.returncode == 0
    assert stored.stdout == b"".join(transcript.read_bytes().splitlines(keepends=True)[: first["last_line"]])
    assert escapes[0].encode() in transcript.read_bytes()


def test_a_lone_surrogate_escape_inside_a_key_and_a_tool_result_is_read_too(tmp_path: Path) -> None:
    lines = SMALL.read_bytes().splitlines(keepends=True)
    spoiled = []
    for line in lines:
        data = json.loads(line)
        if data.get("type") == "user":
            data["\udc80key"] = "value \udc80"
        spoiled.append((json.dumps(data) + "\n").encode())
    path = tmp_path / "keys.jsonl"
    path.write_bytes(b"".join(spoiled))
    for command in ("inspect", "replay"):
        done = run(command, path, "--strict", home=tmp_path / "home")
        assert done.returncode == 0, done.stderr
        assert b"Traceback" not in done.stderr and b"lone_surrogate" in done.stderr


@pytest.mark.parametrize("digits", [22, 4_000, 4_301, 5_000, 100_000])
def test_an_integer_too_long_to_read_skips_its_line_with_a_warning(digits: int, tmp_path: Path) -> None:
    """Over 4,300 digits ``int()`` refuses; far fewer already overflow the floats that usage meets later."""
    big = b'{"type":"assistant","uuid":"zz","message":{"role":"assistant","content":[],"usage":{"input_tokens":'
    line = big + b"9" * digits + b"}}}\n"
    path = tmp_path / "big.jsonl"
    path.write_bytes(SMALL.read_bytes() + line)
    for command in ("inspect", "replay"):
        done = run(command, path, home=tmp_path / "home")
        err = done.stderr.decode()
        assert done.returncode == 0, err
        assert "Traceback" not in err and "integer of more than" in err
    strict = run("inspect", path, "--strict", home=tmp_path / "home")
    assert "digits" in one_error_line(strict, "transcript_invalid", 65)


def test_a_file_of_nothing_but_a_long_integer_is_not_a_transcript(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(b'{"type":"assistant","usage":' + b"1" * 5000 + b"}\n")
    assert "integer" in one_error_line(run("replay", path, home=tmp_path / "home"), "not_a_transcript", 65)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.jsonl", b""),
        ("blank.jsonl", b"\n\n   \n"),
        ("report.json", json.dumps({"session": "s", "compactions": [], "totals": {}}).encode()),
        ("random.jsonl", bytes(range(256)) * 40),
        ("array.jsonl", b"[1, 2, 3]\n[4]\n"),
        ("other.jsonl", b'{"type":"not-claude","uuid":"x"}\n{"kind":"log"}\n'),
        ("gzip.jsonl.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 64),
    ],
)
def test_a_file_that_is_not_a_transcript_is_a_clear_error_not_no_compaction(
    name: str, content: bytes, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    for command in ("replay", "inspect"):
        line = one_error_line(run(command, path, home=tmp_path / "home"), "not_a_transcript", 65)
        assert name in line and "not a Claude Code transcript" in line
    assert not (tmp_path / "home" / "ccr.db").exists()  # no store was made for it


def test_cr_only_line_endings_are_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "mac.jsonl"
    path.write_bytes(SMALL.read_bytes().replace(b"\n", b"\r"))
    done = run("inspect", path, home=tmp_path / "home")
    line = one_error_line(done, "not_a_transcript", 65)
    assert "CR alone" in line and "truncated" not in done.stderr.decode()


def test_every_record_its_own_parent_is_read_in_file_order_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "loops.jsonl"
    kept = []
    for data in records(SMALL):
        if isinstance(data.get("uuid"), str):
            data["parentUuid"] = data["uuid"]
        kept.append(json.dumps(data) + "\n")
    path.write_text("".join(kept))
    honest = run("inspect", SMALL, "--json", home=tmp_path / "home")
    looped = run("inspect", path, "--json", home=tmp_path / "home")
    assert looped.returncode == 0, looped.stderr
    assert b"parent_cycle" in looped.stderr and b"a loop" in looped.stderr
    assert json.loads(looped.stdout)["messages"] == json.loads(honest.stdout)["messages"]
    strict = run("inspect", path, "--strict", home=tmp_path / "home")
    assert "a loop" in one_error_line(strict, "transcript_invalid", 65)


def test_parents_that_loop_between_two_records_are_broken_too(tmp_path: Path) -> None:
    rows = [r for r in records(SMALL)]
    chain = [r for r in rows if isinstance(r.get("uuid"), str) and r.get("type") in ("user", "assistant")]
    assert len(chain) >= 4
    chain[1]["parentUuid"] = chain[-1]["uuid"]  # the second record names the last: a loop through all
    path = tmp_path / "ring.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run("inspect", path, "--json", home=tmp_path / "home")
    assert done.returncode == 0 and b"a loop" in done.stderr
    honest = run("inspect", SMALL, "--json", home=tmp_path / "home")
    assert json.loads(done.stdout)["messages"] == json.loads(honest.stdout)["messages"]


@pytest.mark.parametrize("length", [256, 300, 5_000])
def test_a_name_too_long_for_the_file_system_is_one_line_not_a_traceback(
    length: int, tmp_path: Path, replayed: tuple[Path, Path]
) -> None:
    home, out = replayed  # what `replay LONG --output o.jsonl` wrote, with its store
    name = "x" * length
    one_error_line(run("restore", name, "--list", home=home), "input_not_found", 66)
    one_error_line(run("restore", name + ".jsonl", "--list", home=home), "input_not_found", 66)
    one_error_line(run("restore", str(tmp_path / name), "--list", home=home), "input_not_found", 66)
    line = one_error_line(run("restore", out, "--output", tmp_path / name, home=home), "transcript_write_failed", 73)
    assert "too long" in line.lower()
    space = tmp_path / "space.toml"
    space.write_text('[params]\n"attachments.max_files" = [3]\n')
    tuned = run("tune", SMALL, "--space", space, "--out", tmp_path / name, home=home)
    assert tuned.returncode == 73, tuned.stderr
    assert b"Traceback" not in tuned.stderr and b"too long" in tuned.stderr.lower()
    assert tuned.stderr.startswith(b"compactor: output_write_failed: ") and tuned.stderr.count(b"\n") == 1


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null"])
def test_restore_of_a_device_says_it_is_not_a_regular_file(device: str, tmp_path: Path) -> None:
    line = one_error_line(run("restore", device, "--list", home=tmp_path / "home"), "input_unreadable", 65)
    assert "not a regular file" in line and "no such" not in line


def test_restore_lists_only_compactions_whose_stored_lines_are_still_there(
    tmp_path: Path, replayed: tuple[Path, Path]
) -> None:
    home, out = replayed  # what `replay LONG --output o.jsonl` wrote, with its store
    listed = json.loads(run("restore", out, "--list", "--json", home=home).stdout)
    assert len(listed) >= 2, listed
    removed = run("rm", listed[1]["handle"], home=home, program="ccr")
    assert removed.returncode == 0, removed.stderr
    after = run("restore", out, "--list", "--json", home=home)
    assert after.returncode == 0 and [r["compaction"] for r in json.loads(after.stdout)] == [1]
    table = run("restore", out, "--list", home=home).stdout.decode()
    assert "cannot be undone" in table and "ccr rm" in table
    ok = run("restore", out, "--before", "1", "--output", tmp_path / "back1.jsonl", home=home)
    assert ok.returncode == 0, ok.stderr
    line = one_error_line(
        run("restore", out, "--before", "2", "--output", tmp_path / "b.jsonl", home=home), "input_not_found", 66
    )
    assert "no longer in the store" in line and not (tmp_path / "b.jsonl").exists()
    one_error_line(run("restore", out, "--output", tmp_path / "b.jsonl", home=home), "input_not_found", 66)
    run("rm", listed[0]["handle"], home=home, program="ccr")
    none = run("restore", out, "--list", "--json", home=home)
    assert none.returncode == 0 and json.loads(none.stdout) == []
    one_error_line(
        run("restore", out, "--before", "1", "--output", tmp_path / "b.jsonl", home=home), "input_not_found", 66
    )


def test_restore_never_writes_onto_the_transcript_the_lines_came_from(tmp_path: Path) -> None:
    home = tmp_path / "home"
    original = tmp_path / "session.jsonl"
    shutil.copyfile(LONG, original)
    copy = tmp_path / "copy-of-session.jsonl"
    shutil.copyfile(LONG, copy)
    out = tmp_path / "o.jsonl"
    assert run("replay", original, "--output", out, home=home).returncode == 0
    before = original.read_bytes()
    for target in (original, copy, out):
        for extra in ([], ["--before", "1"]):
            done = run("restore", out, *extra, "--output", target, home=home)
            one_error_line(done, "output_refused", 2)
    link = tmp_path / "link.jsonl"
    link.symlink_to(original)
    one_error_line(run("restore", out, "--output", link, home=home), "output_refused", 2)
    assert original.read_bytes() == before == copy.read_bytes()
    fresh = tmp_path / "restored.jsonl"
    assert run("restore", out, "--output", fresh, home=home).returncode == 0
    assert handle_for(fresh.read_bytes()[:100]) != ""  # written, and not onto the original


def test_an_unknown_flag_shows_the_usage_of_the_command_it_was_given_to(tmp_path: Path) -> None:
    for argv, usage in (
        (["replay", "--no-such-flag", str(SMALL)], b"usage: compactor replay "),
        (["restore", "x", "--no-such-flag"], b"usage: compactor restore "),
        (["plugin", "path", "--no-such-flag"], b"usage: compactor plugin path "),
        (["memory", "recall", "q", "--no-such-flag"], b"usage: compactor memory recall "),
    ):
        done = run(*argv, home=tmp_path / "home")
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(usage), done.stderr
        assert done.stderr.rstrip().endswith(b"compactor: usage_error: unrecognized arguments: --no-such-flag")
    ccr = run("get", "ccr_" + "0" * 32, "--no-such-flag", home=tmp_path / "home", program="ccr")
    assert ccr.returncode == 2 and ccr.stderr.startswith(b"usage: ccr get ")
    assert b"ccr: usage_error: unrecognized arguments" in ccr.stderr


def test_plugin_without_an_action_prints_its_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "plugin"], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: compactor plugin") and "path" in done.stdout
    assert done.stderr == ""


def test_the_undo_hint_names_a_plugin_folder_that_works_outside_a_checkout(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    shutil.copyfile(SMALL, plain)
    done = run("restore", plain, "--list", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "nothing to undo" in text
    assert "--plugin-dir plugin" not in text and "compactor plugin path" in text


@pytest.mark.parametrize("command", ["tokens", "show", "replay", "inspect", "restore"])
def test_an_input_that_cannot_be_read_is_input_unreadable_and_a_missing_one_input_not_found(
    command: str, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    extra = ["--list"] if command == "restore" else []
    for unreadable in (tmp_path, Path("/dev/zero")):
        one_error_line(run(command, unreadable, *extra, home=home), "input_unreadable", 65)
    for missing in (tmp_path / "absent.jsonl", tmp_path / ("z" * 400), tmp_path / "no-folder" / "x.jsonl"):
        one_error_line(run(command, missing, *extra, home=home), "input_not_found", 66)


def test_long_runs_of_digits_inside_text_are_only_text(tmp_path: Path) -> None:
    rows = records(SMALL)
    for data in rows:
        if data.get("type") == "user" and isinstance(data["message"].get("content"), str):
            data["message"]["content"] += ' order 123456789012345678901234567890 and {"n": 99999999999999999999999}'
    path = tmp_path / "digits.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    done = run("inspect", path, "--strict", "--json", home=tmp_path / "home")
    assert done.returncode == 0 and b"integer" not in done.stderr, done.stderr
    honest = run("inspect", SMALL, "--json", home=tmp_path / "home")
    assert json.loads(done.stdout)["messages"] == json.loads(honest.stdout)["messages"]
