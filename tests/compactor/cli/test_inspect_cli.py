"""``compactor inspect``: a real subprocess, real files, exit codes and stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from compactor.claude_code.transcript import read_transcript
from compactor.core.tokens import RoughCounter, usage_anchored_estimate

USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 3000, "output_tokens": 7}


def inspect(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compactor", "inspect", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def session(path: Path, *, extra_lines: list[str] | None = None) -> Path:
    records: list[dict[str, Any]] = [
        {"type": "user", "message": {"role": "user", "content": "read a.py"}},
        {
            "type": "assistant",
            "message": {
                "id": "m1",
                "role": "assistant",
                "usage": USAGE,
                "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/repo/a.py"}}],
            },
        },
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "     1\u2192x = 1"}],
            },
        },
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "manual", "preTokens": 3217},
        },
        {"type": "user", "isCompactSummary": True, "message": {"role": "user", "content": "Summary: read a.py"}},
        {
            "type": "assistant",
            "message": {"id": "m2", "role": "assistant", "usage": USAGE, "content": [{"type": "text", "text": "done"}]},
        },
    ]
    lines = []
    for i, record in enumerate(records, 1):
        record.update(
            {"uuid": f"u{i}", "sessionId": "sess-cli", "timestamp": f"2026-01-01T00:00:0{i}Z", "isSidechain": False}
        )
        if record.get("subtype") == "compact_boundary":
            record.update({"parentUuid": None, "logicalParentUuid": f"u{i - 1}"})
        else:
            record["parentUuid"] = f"u{i - 1}" if i > 1 else None
        lines.append(json.dumps(record))
    lines[2:2] = extra_lines or []
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_inspect_has_help() -> None:
    done = inspect("--help")
    assert done.returncode == 0
    assert "--strict" in done.stdout and "--counter" in done.stdout


def test_inspect_prints_messages_tool_calls_files_compactions_and_tokens(tmp_path: Path) -> None:
    done = inspect(str(session(tmp_path / "s.jsonl")))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = done.stdout
    assert "messages     5 (user 3, assistant 2)" in out
    assert "tool calls   1: Read 1" in out
    assert "files read   1\n  /repo/a.py" in out
    assert "compactions  1\n  line 4: manual, pre 3,217 tokens, summary 18 chars" in out
    assert "(tiktoken)" in out


def test_inspect_json_reports_the_usage_anchored_context(tmp_path: Path) -> None:
    path = session(tmp_path / "s.jsonl")
    done = inspect(str(path), "--json", "--counter", "rough")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["session_id"] == "sess-cli"
    assert summary["tool_calls"] == {"total": 1, "by_tool": {"Read": 1}}
    assert summary["files_read"] == ["/repo/a.py"]
    assert summary["compactions"] == [
        {"line": 4, "trigger": "manual", "pre_tokens": 3217, "post_tokens": None, "summary_chars": 18}
    ]
    transcript = read_transcript(path)
    expected = usage_anchored_estimate(transcript.messages[3:], RoughCounter())
    assert summary["tokens"]["counter"] == "rough"
    assert summary["tokens"]["context"] == expected == sum(USAGE.values())
    assert summary["warnings"] == 0


def test_bad_lines_are_warnings_on_stderr_and_the_summary_still_prints(tmp_path: Path) -> None:
    path = session(tmp_path / "s.jsonl", extra_lines=['{"type": "user", "mess', '{"type": "hologram"}'])
    done = inspect(str(path), "--json")
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        f"compactor: warning: {path}:3: malformed JSON at column 18 (Unterminated string starting at); skipped",
        f"compactor: warning: {path}:4: unknown entry type 'hologram'; kept as-is",
    ]
    summary = json.loads(done.stdout)
    assert summary["warnings"] == 2 and summary["messages"]["total"] == 5


def test_strict_turns_the_first_bad_line_into_exit_65(tmp_path: Path) -> None:
    path = session(tmp_path / "s.jsonl", extra_lines=["\xff not json"])
    done = inspect(str(path), "--strict")
    assert done.returncode == 65
    assert done.stdout == ""
    assert done.stderr.startswith(f"compactor: transcript_invalid: {path}:3: malformed JSON")
    assert "Traceback" not in done.stderr


def test_invalid_utf8_under_strict_is_exit_65_without_a_traceback(tmp_path: Path) -> None:
    path = session(tmp_path / "s.jsonl")
    path.write_bytes(path.read_bytes() + b'{"type": "user", "x": "\xc3\x28"}\n')
    done = inspect(str(path), "--strict")
    assert done.returncode == 65
    assert "not valid UTF-8" in done.stderr and "Traceback" not in done.stderr


def test_lone_surrogates_in_the_session_are_read_as_u_fffd_and_a_non_utf8_name_prints_escaped(tmp_path: Path) -> None:
    path = session(tmp_path / "s\udcff.jsonl")
    text = path.read_text(encoding="utf-8")
    text = text.replace('"sess-cli"', '"sess-\\ud800"').replace('"/repo/a.py"', '"/repo/\\udcffa.py"')
    path.write_text(text, encoding="utf-8")
    done = inspect(str(path), "--json", "--counter", "rough")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["path"] == str(path)  # the file's own name, not UTF-8, printed as its escape
    assert summary["session_id"] == "sess-\ufffd"
    assert summary["files_read"] == ["/repo/\ufffda.py"]
    assert "lone_surrogate" in done.stderr or "lone surrogate" in done.stderr
    plain = inspect(str(path), "--counter", "rough")
    assert plain.returncode == 0, plain.stderr
    assert "session      sess-\ufffd" in plain.stdout
    assert "  /repo/\ufffda.py" in plain.stdout


def test_a_missing_session_is_exit_66(tmp_path: Path) -> None:
    done = inspect(str(tmp_path / "absent.jsonl"))
    assert done.returncode == 66
    assert done.stdout == ""
    assert done.stderr.startswith("compactor: input_not_found: ")


def test_an_unknown_counter_is_a_usage_error(tmp_path: Path) -> None:
    done = inspect(str(session(tmp_path / "s.jsonl")), "--counter", "bytes")
    assert done.returncode == 2


def test_inspect_on_the_real_spotter_session_matches_its_recorded_facts(shared_transcripts: Path) -> None:
    done = inspect(str(shared_transcripts / "spotter-258c7280" / "session.jsonl"), "--json", "--counter", "rough")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["tool_calls"]["total"] == 186
    assert summary["tool_calls"]["by_tool"]["Read"] == 42
    assert summary["tool_calls"]["by_tool"]["Edit"] == 35
    assert summary["tool_calls"]["by_tool"]["Bash"] == 79
    assert [c["pre_tokens"] for c in summary["compactions"]] == [167_094]
    assert set(summary["sidechains"]) == {"a881341", "acompact-fffbd0"}


SHAPES = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "shapes"


def test_inspect_reports_a_fragment_with_the_context_its_first_request_carried() -> None:
    done = inspect(str(SHAPES / "fragment.jsonl"), "--json")
    assert done.returncode == 0, done.stderr
    fragment = json.loads(done.stdout)["fragment"]
    assert fragment["line"] == 1 and fragment["first_usage_tokens"] > 50_000
    assert "the session starts mid-way" in done.stderr
    text = inspect(str(SHAPES / "fragment.jsonl"), "--strict")
    assert text.returncode == 0
    assert (
        f"fragment     starts mid-session at line 1 (its parent is not in the file); its first request already carried {fragment['first_usage_tokens']:,} tokens"
        in text.stdout
    )


def test_inspect_strict_refuses_records_appended_twice_with_exit_65() -> None:
    done = inspect(str(SHAPES / "duplicated.jsonl"), "--strict")
    assert done.returncode == 65
    assert "already read at line" in done.stderr and done.stdout == ""
    lenient = inspect(str(SHAPES / "duplicated.jsonl"), "--json")
    assert lenient.returncode == 0 and json.loads(lenient.stdout)["warnings"] == 3


def _dangling_session(path: Path, *, missing: int) -> Path:
    """A session of user/assistant turns where ``missing`` records name a parent the file never wrote."""
    lines = []
    for i in range(1, 2 * missing + 3):
        role = "user" if i % 2 else "assistant"
        content: object = f"turn {i}" if role == "user" else [{"type": "text", "text": f"answer {i}"}]
        message: dict[str, Any] = {"role": role, "content": content}
        if role == "assistant":
            message.update({"id": f"m{i}", "usage": USAGE})
        parent = f"never-written-{i}" if i % 2 and i > 1 else (f"u{i - 1}" if i > 1 else None)
        lines.append(
            json.dumps(
                {
                    "type": role,
                    "message": message,
                    "uuid": f"u{i}",
                    "parentUuid": parent,
                    "sessionId": "sess-dangling",
                    "isSidechain": False,
                    "timestamp": f"2026-01-01T00:00:{i:02d}Z",
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_repeated_dangling_parent_links_are_one_warning_line_with_their_count(tmp_path: Path) -> None:
    path = _dangling_session(tmp_path / "s.jsonl", missing=4)
    done = inspect(str(path), "--json")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"compactor: warning: {path}: 4 shapes Claude Code writes, read as it meant (4 dangling_parent; --verbose lists them)"
    ]
    assert json.loads(done.stdout)["warnings"] == 4


def test_verbose_and_strict_print_each_dangling_parent_link(tmp_path: Path) -> None:
    path = _dangling_session(tmp_path / "s.jsonl", missing=4)
    for flag in ("--verbose", "--strict"):
        done = inspect(str(path), flag)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 4, flag
        assert all("parentUuid never-written-" in line and "is not in the file" in line for line in lines)


def test_a_repeated_bad_line_is_one_warning_naming_the_first_and_counting_the_rest(tmp_path: Path) -> None:
    path = session(tmp_path / "s.jsonl", extra_lines=['{"type": "hologram"}'] * 3)
    done = inspect(str(path))
    assert done.returncode == 0
    assert done.stderr.splitlines() == [
        (
            f"compactor: warning: {path}: 3 warnings of kind unknown_type, the first: line 3: unknown entry type "
            "'hologram'; kept as-is (2 more like it; --verbose lists each)"
        )
    ]
    assert len(inspect(str(path), "--verbose").stderr.splitlines()) == 3
