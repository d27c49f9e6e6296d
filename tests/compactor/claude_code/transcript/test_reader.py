"""The transcript reader and writer: chains, merged answers, sidechains, bad input, round trips."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccr.errors import OutputRefused
from compactor.claude_code.transcript import (
    ReadWarning,
    Transcript,
    boundary_entry,
    iter_records,
    read_transcript,
    replace_lone_surrogates,
    write_transcript,
)
from compactor.core.errors import TranscriptError, TranscriptNotFound
from compactor.core.ledger import SessionLedger
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from compactor.core.session import SessionState
from compactor.core.tokens import RoughCounter, usage_anchored_estimate
from compactor.summarizers.ledger import merge_messages
from compactor.summarizers.prompts import queued

# -- a small session log builder ------------------------------------------------


class Log:
    """Builds Claude Code-shaped records; ``parent`` defaults to the previous record."""

    def __init__(self, session_id: str = "sess-1") -> None:
        self.session_id = session_id
        self.records: list[dict[str, Any]] = []
        self.last: str | None = None

    def add(self, record: dict[str, Any], *, parent: str | bool | None = True) -> str:
        uuid = f"u{len(self.records) + 1}"
        base: dict[str, Any] = {
            "parentUuid": self.last if parent is True else (parent or None),
            "isSidechain": False,
            "sessionId": self.session_id,
            "cwd": "/repo",
            "uuid": uuid,
            "timestamp": f"2026-01-01T00:{len(self.records) // 60:02d}:{len(self.records) % 60:02d}.000Z",
        }
        base.update(record)
        self.records.append(base)
        if base.get("uuid") is not None:
            self.last = base["uuid"]
        return uuid

    def user(self, content: Any, *, parent: str | bool | None = True, **extra: Any) -> str:
        return self.add({"type": "user", "message": {"role": "user", "content": content}, **extra}, parent=parent)

    def assistant(
        self,
        blocks: list[dict[str, Any]],
        *,
        mid: str,
        usage: dict[str, int] | None = None,
        parent: str | bool | None = True,
        **extra: Any,
    ) -> list[str]:
        """One record per block, as Claude Code streams an answer."""
        ids = []
        for i, block in enumerate(blocks):
            body: dict[str, Any] = {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": "m-1",
                "content": [block],
            }
            if usage is not None:
                body["usage"] = usage
            ids.append(self.add({"type": "assistant", "message": body, **extra}, parent=parent if i == 0 else True))
        return ids

    def result(
        self,
        tool_use_id: str,
        content: Any,
        *,
        tur: Any = None,
        is_error: bool = False,
        parent: str | bool | None = True,
    ) -> str:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
        if is_error:
            block["is_error"] = True
        extra = {} if tur is None else {"toolUseResult": tur}
        return self.user([block], parent=parent, **extra)

    def boundary(self, trigger: str, pre: int, post: int | None = None) -> str:
        meta: dict[str, Any] = {"trigger": trigger, "preTokens": pre}
        if post is not None:
            meta["postTokens"] = post
        logical = self.last
        return self.add(
            {
                "type": "system",
                "subtype": "compact_boundary",
                "content": "Conversation compacted",
                "logicalParentUuid": logical,
                "compactMetadata": meta,
            },
            parent=None,
        )

    def write(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records), encoding="utf-8")
        return path


def tool_use(tid: str, name: str, **inputs: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inputs}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


USAGE = {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 5}


def simple_session() -> Log:
    log = Log()
    log.user("hello")
    log.assistant([text("looking"), tool_use("t1", "Read", file_path="/repo/a.py")], mid="m1", usage=USAGE)
    log.result(
        "t1",
        "     1\u2192x = 1\n     2\u2192",
        tur={
            "type": "text",
            "file": {"filePath": "/repo/a.py", "content": "x = 1\n", "numLines": 2, "startLine": 1, "totalLines": 2},
        },
    )
    log.assistant([text("done")], mid="m2", usage=USAGE)
    return log


def same_model(a: Transcript, b: Transcript) -> bool:
    """Equal but for the file they were read from (which the path and every warning name)."""
    warnings = [w.model_copy(update={"file": b.path}) for w in a.warnings]
    return a.model_copy(update={"path": b.path, "warnings": warnings}) == b.model_copy(
        update={"warnings": [w.model_copy(update={"file": b.path}) for w in b.warnings]}
    )


# -- the main chain ----------------------------------------------------------------


def test_a_streamed_answer_stored_one_block_per_record_becomes_one_message(tmp_path: Path) -> None:
    t = read_transcript(simple_session().write(tmp_path / "s.jsonl"))
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]
    answer = t.messages[1]
    assert [b.type for b in answer.blocks()] == ["text", "tool_use"]
    assert answer.message_id == "m1" and answer.model == "m-1"
    assert answer.usage == Usage(**USAGE)
    assert t.entries[1].lines == [2, 3] and t.entries[1].line == 2
    assert answer.uuid == "u2" and answer.timestamp == "2026-01-01T00:00:01.000Z"
    assert t.session_id == "sess-1" and t.warnings == []


def test_the_main_chain_follows_parent_uuid_and_leaves_an_abandoned_branch_off_it(tmp_path: Path) -> None:
    log = Log()
    first = log.user("start")
    answer = log.assistant([text("ok")], mid="m1")[0]
    log.user("abandoned question")
    log.assistant([text("abandoned answer")], mid="m2")
    log.user("second try", parent=answer)
    log.assistant([text("final")], mid="m3")
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert [m.text() for m in t.messages] == ["start", "ok", "second try", "final"]
    assert [e.line for e in t.off_chain] == [3, 4]
    assert t.messages[0].uuid == first


def test_the_chain_crosses_a_compaction_boundary_through_its_logical_parent(tmp_path: Path) -> None:
    log = Log()
    log.user("old work")
    log.assistant([text("old answer")], mid="m1", usage=USAGE)
    log.boundary("auto", 167_094, 30_000)
    log.user("This session is being continued from a previous conversation.", isCompactSummary=True)
    log.user("next request")
    log.assistant([text("new answer")], mid="m2")
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert [m.text() for m in t.messages] == [
        "old work",
        "old answer",
        "This session is being continued from a previous conversation.",
        "next request",
        "new answer",
    ]
    assert [e.kind for e in t.entries] == ["message", "message", "compact_boundary", "message", "message", "message"]
    (c,) = t.compactions
    assert (c.trigger, c.pre_tokens, c.post_tokens, c.line) == ("auto", 167_094, 30_000, 3)
    assert c.message_index == 2 and c.entry_index == 2
    assert c.summary == "This session is being continued from a previous conversation."
    assert c.summary_line == 4
    assert t.messages[2].is_compact_summary


def test_parallel_tool_results_stored_on_sibling_branches_stay_in_the_chain(tmp_path: Path) -> None:
    log = Log()
    log.user("go")
    first, second = log.assistant([tool_use("a", "Bash", command="ls"), tool_use("b", "Bash", command="pwd")], mid="m1")
    log.add({"type": "progress", "data": {"type": "hook_progress"}}, parent=second)
    log.result("a", "file", parent=first)
    log.result("b", "/repo", parent=second)
    log.assistant([text("both done")], mid="m2")
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert t.warnings == []
    roles = [(m.role, [b.type for b in m.blocks()]) for m in t.messages]
    assert roles == [
        ("user", ["text"]),
        ("assistant", ["tool_use", "tool_use"]),
        ("user", ["tool_result"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert [c.id for c in t.tool_uses()] == ["a", "b"]


def test_inline_sidechains_are_kept_apart_and_keyed_by_agent(tmp_path: Path) -> None:
    log = Log()
    log.user("main question")
    log.assistant([tool_use("t1", "Task", description="look", prompt="look around")], mid="m1")
    root = log.add(
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content": "look around"}}, parent=None
    )
    log.add(
        {
            "type": "assistant",
            "isSidechain": True,
            "message": {"id": "s1", "role": "assistant", "content": [text("seen")]},
        },
        parent=root,
    )
    log.add(
        {"type": "user", "isSidechain": True, "agentId": "a42", "message": {"role": "user", "content": "other agent"}},
        parent=None,
    )
    log.result("t1", "looked", parent="u2")
    log.assistant([text("thanks")], mid="m2")
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert [m.text() for m in t.messages][-1] == "thanks"
    assert len(t.messages) == 4
    assert [m.text() for m in t.sidechains[root]] == ["look around", "seen"]
    assert [m.text() for m in t.sidechains["a42"]] == ["other agent"]


def test_subagent_files_beside_the_session_are_read_as_sidechains(tmp_path: Path) -> None:
    path = simple_session().write(tmp_path / "sess-1.jsonl")
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    sub = Log()
    sub.user("sub task", isSidechain=True, agentId="abc")
    sub.assistant([text("sub answer")], mid="s1", isSidechain=True, agentId="abc")
    sub.write(folder / "agent-abc.jsonl")
    other = Log(session_id="someone-else")
    other.user("not ours", isSidechain=True)
    other.write(folder / "agent-zzz.jsonl")
    t = read_transcript(path)
    assert list(t.sidechains) == ["abc"]
    assert [m.text() for m in t.sidechains["abc"]] == ["sub task", "sub answer"]
    assert t.sidechains["abc"][0].agent_id == "abc"
    assert t.messages[0].text() == "hello"
    assert read_transcript(path, subagents=False).sidechains == {}


def test_an_unreadable_subagent_file_is_a_warning_and_the_session_is_still_read(tmp_path: Path) -> None:
    path = simple_session().write(tmp_path / "sess-1.jsonl")
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    (folder / "agent-gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    (folder / "agent-dir.jsonl").mkdir()
    seen: list[ReadWarning] = []
    t = read_transcript(path, warn=seen.append)
    assert t.messages[0].text() == "hello"
    assert t.sidechains == {}
    assert [(w.file, w.line, w.kind) for w in t.warnings] == [
        (str(folder / "agent-dir.jsonl"), None, "unreadable_file"),
        (str(folder / "agent-gone.jsonl"), None, "unreadable_file"),
    ]
    assert seen == t.warnings
    with pytest.raises(TranscriptError) as raised:
        read_transcript(path, strict=True)
    assert not isinstance(raised.value, TranscriptNotFound)
    assert "agent-dir.jsonl" in str(raised.value)


def test_bad_lines_in_another_sessions_subagent_file_are_not_reported(tmp_path: Path) -> None:
    path = simple_session().write(tmp_path / "sess-1.jsonl")
    folder = tmp_path / "sess-1" / "subagents"
    folder.mkdir(parents=True)
    other = Log(session_id="someone-else")
    other.user("not ours", isSidechain=True)
    other.write(folder / "agent-zzz.jsonl")
    with (folder / "agent-zzz.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"type": "user", "mess\n')
    seen: list[ReadWarning] = []
    t = read_transcript(path, warn=seen.append)
    assert t.sidechains == {} and t.warnings == [] and seen == []
    assert read_transcript(path, strict=True).sidechains == {}


def test_an_unknown_entry_type_is_kept_as_is_with_a_warning(tmp_path: Path) -> None:
    log = simple_session()
    odd = {"type": "hologram", "payload": [1, 2, 3]}
    log.records.insert(2, odd)
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert t.unknown == [odd]
    assert [(w.line, w.kind) for w in t.warnings] == [(3, "unknown_type")]
    assert len(t.messages) == 4


# -- bad input -------------------------------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _with_bad_line(tmp_path: Path, bad: bytes, *, at: int = 2, last: bool = False) -> Path:
    lines = _lines(simple_session().write(tmp_path / "s.jsonl"))
    if last:
        lines.append(bad)
    else:
        lines.insert(at, bad)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(lines))
    return path


BAD_LINES = {
    "malformed_json": (b'{"type": "user", "message": \n', False),
    "invalid_utf8": (b'{"type": "user", "note": "\xff\xfe"}\n', False),
    "not_an_object": (b"[1, 2, 3]\n", False),
    "truncated_line": (b'{"type": "assistant", "message": {"id": "m9", "con', True),
}


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_a_bad_line_is_a_warning_naming_file_and_line_and_the_rest_is_read(tmp_path: Path, kind: str) -> None:
    bad, last = BAD_LINES[kind]
    path = _with_bad_line(tmp_path, bad, last=last)
    seen: list[ReadWarning] = []
    t = read_transcript(path, warn=seen.append)
    line = 6 if last else 3
    assert [(w.kind, w.line) for w in t.warnings] == [(kind, line)]
    assert seen == t.warnings
    assert str(seen[0]).startswith(f"{path}:{line}: ")
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]


@pytest.mark.parametrize("kind", sorted(BAD_LINES))
def test_strict_mode_raises_on_the_first_bad_line(tmp_path: Path, kind: str) -> None:
    bad, last = BAD_LINES[kind]
    path = _with_bad_line(tmp_path, bad, last=last)
    with pytest.raises(TranscriptError, match=f"{path.name}:{6 if last else 3}: "):
        read_transcript(path, strict=True)


def test_a_50_mb_line_is_skipped_with_a_warning_and_the_rest_is_read(tmp_path: Path) -> None:
    huge = b'{"type": "user", "message": {"role": "user", "content": "' + b"x" * (50 * 1024 * 1024) + b'"}}\n'
    path = _with_bad_line(tmp_path, huge)
    t = read_transcript(path)
    assert [(w.kind, w.line) for w in t.warnings] == [("line_too_long", 3)]
    assert [m.role for m in t.messages] == ["user", "assistant", "user", "assistant"]
    with pytest.raises(TranscriptError, match="exceeds"):
        read_transcript(path, strict=True)


def test_a_line_just_under_the_limit_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    record = json.dumps({"type": "summary", "summary": "x" * 100}).encode() + b"\n"
    path.write_bytes(record)
    assert [r.line for r in iter_records(path, max_line_bytes=len(record) - 1)] == [1]
    assert list(iter_records(path, max_line_bytes=len(record) - 2)) == []


def test_lines_only_json_reads_are_read_as_json_reads_them(tmp_path: Path) -> None:
    """The fast parser refuses a lone surrogate escape and deep nesting; ``json`` still reads them
    (the surrogate as U+FFFD, a shape that strict lets through)."""
    lines = [
        b'{"text": "half a pair: \\ud800"}',
        b'{"deep": ' + b"[" * 300 + b"]" * 300 + b"}",
        b'{"n": NaN, "big": 123456789012345678901, "tiny": 1e-400, "huge": 1e400}',
    ]
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    got = [r.data for r in iter_records(path, strict=True)]
    expected = [replace_lone_surrogates(json.loads(line))[0] for line in lines]
    assert expected[0] == {"text": "half a pair: \ufffd"}
    assert json.dumps(got) == json.dumps(expected)  # NaN compares unequal to itself; its dump does not


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**21), 10**21) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=200, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    value=st.dictionaries(st.text(max_size=8), _JSON_VALUES, max_size=5),
    cut=st.integers(0, 200),
    junk=st.binary(max_size=3).filter(lambda b: b"\n" not in b and b"\r" not in b),  # one line stays one line
)
def test_every_line_is_read_and_reported_as_json_reads_it(
    tmp_path: Path, value: dict[str, Any], cut: int, junk: bytes
) -> None:
    """Whole, cut and spoiled lines: the records are ``json``'s, and so is each line's fault."""
    whole = json.dumps(value, ensure_ascii=cut % 2 == 0).encode()
    spoiled = whole[:cut] + junk + whole[cut:]
    path = tmp_path / "s.jsonl"
    path.write_bytes(whole + b"\n" + spoiled + b"\n")
    warnings: list[Any] = []
    got = [(r.line, r.data) for r in iter_records(path, warn=warnings.append)]
    expected: list[tuple[int, Any]] = [(1, json.loads(whole))]
    try:
        data, _ = replace_lone_surrogates(json.loads(spoiled.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        assert [w.line for w in warnings] == [2] or not spoiled.strip()
    else:
        if isinstance(data, dict):
            expected.append((2, data))
        else:
            assert [(w.line, w.kind) for w in warnings] == [(2, "not_an_object")]
    assert got == expected


def test_a_tool_result_without_its_tool_use_is_a_warning(tmp_path: Path) -> None:
    log = simple_session()
    log.result("nobody-asked", "surprise")
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert [(w.kind, w.line) for w in t.warnings] == [("orphan_tool_result", 6)]
    assert "nobody-asked" in t.warnings[0].message
    assert len(t.messages) == 5
    with pytest.raises(TranscriptError, match="nobody-asked"):
        read_transcript(tmp_path / "s.jsonl", strict=True)


def test_a_message_that_does_not_fit_the_model_is_kept_raw_with_a_warning(tmp_path: Path) -> None:
    log = simple_session()
    log.user([{"type": "text"}])  # a text block without text
    t = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert [(w.kind, w.line) for w in t.warnings] == [("bad_message", 6)]
    assert t.entries[-1].message is None and t.entries[-1].kind == "message"
    assert len(t.messages) == 4


def test_a_missing_file_is_not_found_with_exit_code_66(tmp_path: Path) -> None:
    with pytest.raises(TranscriptNotFound) as caught:
        read_transcript(tmp_path / "absent.jsonl")
    assert caught.value.exit_code == 66 and caught.value.error_id == "input_not_found"


def test_iter_records_numbers_lines_from_one_and_skips_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \r\n{"b": 2}\r\n{"c": 3}')
    assert [(r.line, r.data) for r in iter_records(path)] == [(1, {"a": 1}), (4, {"b": 2}), (5, {"c": 3})]


# -- writing -----------------------------------------------------------------------------


def test_read_write_read_gives_the_same_model_for_a_hand_made_session(tmp_path: Path) -> None:
    log = Log()
    log.user("start")
    answer = log.assistant(
        [text("a"), {"type": "thinking", "thinking": "hm", "signature": "sig"}, tool_use("t1", "Bash", command="ls")],
        mid="m1",
        usage=USAGE,
    )
    log.add({"type": "progress", "data": {"x": 1}})
    log.result("t1", [text("out"), {"type": "image", "source": {"type": "base64", "data": "AA"}}])
    log.user("abandoned", parent=answer[0])
    log.add({"type": "file-history-snapshot", "messageId": "u1", "snapshot": {}, "uuid": None})
    log.boundary("manual", 1234)
    log.user("summary text", isCompactSummary=True)
    log.assistant([{"type": "server_tool_use", "id": "s1", "name": "web", "input": {}}], mid="m2", usage=USAGE)
    path = log.write(tmp_path / "s.jsonl")
    first = read_transcript(path)
    write_transcript(first, tmp_path / "out.jsonl")
    second = read_transcript(tmp_path / "out.jsonl")
    assert same_model(second, first)
    original = [json.loads(line) for line in _lines(path)]
    written = [json.loads(line) for line in _lines(tmp_path / "out.jsonl")]
    assert written == original


def test_a_failed_write_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    source = read_transcript(simple_session().write(tmp_path / "s.jsonl"))
    target = tmp_path / "out" / "s.jsonl"
    target.mkdir(parents=True)
    with pytest.raises(OutputRefused, match="a folder, not a regular file"):  # the output rule of ccr.files
        write_transcript(source, target)
    assert [p.name for p in target.parent.iterdir()] == ["s.jsonl"]
    assert target.is_dir() and list(target.iterdir()) == []


def test_writing_an_edited_transcript_writes_the_edit(tmp_path: Path) -> None:
    t = read_transcript(simple_session().write(tmp_path / "s.jsonl"))
    t.entries[0].message = t.messages[0].model_copy(update={"content": "hello again"})
    write_transcript(t, tmp_path / "out.jsonl")
    assert read_transcript(tmp_path / "out.jsonl").messages[0].text() == "hello again"


def test_writing_messages_and_a_boundary_makes_a_readable_chain(tmp_path: Path) -> None:
    messages = [
        Message(role="user", content="before"),
        Message(
            role="assistant",
            content=[TextBlock(text="ok"), ToolUseBlock(id="t1", name="Bash", input={"command": "ls"})],
            message_id="m1",
            model="m-1",
            usage=Usage(input_tokens=5, output_tokens=1),
        ),
        Message(role="user", content=[ToolResultBlock(tool_use_id="t1", content="a.py")]),
    ]
    after = [Message(role="user", content="summary", is_compact_summary=True), Message(role="user", content="next")]
    path = tmp_path / "new.jsonl"
    write_transcript([*messages, boundary_entry("auto", 167_000, 20_000), *after], path, session_id="s9", cwd="/w")
    t = read_transcript(path)
    assert t.warnings == [] and t.session_id == "s9"
    assert [m.model_copy(update={"uuid": None}) for m in t.messages] == [*messages, *after]
    (c,) = t.compactions
    assert (c.trigger, c.pre_tokens, c.post_tokens, c.summary) == ("auto", 167_000, 20_000, "summary")
    write_transcript(
        [*messages, boundary_entry("auto", 167_000, 20_000), *after],
        tmp_path / "again.jsonl",
        session_id="s9",
        cwd="/w",
    )
    assert (tmp_path / "again.jsonl").read_bytes() == path.read_bytes()


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(contents=st.lists(_texts, min_size=1, max_size=6))
def test_written_messages_read_back_unchanged(tmp_path: Path, contents: list[str]) -> None:
    messages = [
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=c if i % 2 == 0 else [TextBlock(text=c)],
            message_id=None if i % 2 == 0 else f"m{i}",
        )
        for i, c in enumerate(contents)
    ]
    path = tmp_path / "prop.jsonl"
    write_transcript(messages, path)
    back = read_transcript(path)
    assert [m.model_copy(update={"uuid": None}) for m in back.messages] == messages
    write_transcript(back, tmp_path / "prop2.jsonl")
    assert same_model(read_transcript(tmp_path / "prop2.jsonl"), back)


# -- the real transcripts --------------------------------------------------------------------


def _plain_tool_uses(path: Path) -> Iterator[dict[str, Any]]:
    """tool_use blocks of every non-sidechain assistant record, once per tool_use id.

    Claude Code writes each content block of a streamed answer as its own
    record and parallel calls as sibling branches; every such record belongs
    to the conversation, so this plain count over the file is what the main
    chain must hold.
    """
    seen: set[str] = set()
    with path.open("rb") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("type") != "assistant" or record.get("isSidechain"):
                continue
            for block in record["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_use" and block["id"] not in seen:
                    seen.add(block["id"])
                    yield block


def test_a_real_transcript_reads_without_warnings_and_its_tool_counts_match_the_json(shared_transcript: Path) -> None:
    t = read_transcript(shared_transcript, strict=True)
    plain = list(_plain_tool_uses(shared_transcript))
    calls = t.tool_uses()
    assert len(calls) == len(plain) > 0
    assert sum(c.name == "Read" for c in calls) == sum(b["name"] == "Read" for b in plain)
    assert {c.id for c in calls} == {b["id"] for b in plain}


def test_a_real_transcript_reads_back_the_same_after_writing(shared_transcript: Path, tmp_path: Path) -> None:
    first = read_transcript(shared_transcript)
    out = tmp_path / "copy.jsonl"
    write_transcript(first, out)
    second = read_transcript(out)
    assert second.subagents.keys() == first.subagents.keys()
    assert same_model(second.model_copy(update={"subagents": {}}), first.model_copy(update={"subagents": {}}))
    for agent, sub in first.subagents.items():
        assert same_model(second.subagents[agent], sub)
    with shared_transcript.open("rb") as a, out.open("rb") as b:
        assert [json.loads(x) for x in a] == [json.loads(y) for y in b]


RECORDED = {"spotter-258c7280/session.jsonl": [167_094], "slopometry-v2.0.65.jsonl": [155_317]}


def test_recorded_compactions_are_found_with_their_pre_tokens(shared_transcripts: Path) -> None:
    for name, pre_tokens in RECORDED.items():
        t = read_transcript(shared_transcripts / name)
        assert [c.pre_tokens for c in t.compactions] == pre_tokens
        assert all(c.trigger == "auto" and c.summary for c in t.compactions)


def test_the_usage_anchored_estimate_before_each_recorded_compaction_is_within_2_percent(
    shared_transcripts: Path,
) -> None:
    checked = 0
    for name in RECORDED:
        t = read_transcript(shared_transcripts / name)
        for c in t.compactions:
            assert c.pre_tokens is not None
            estimate = usage_anchored_estimate(t.messages[: c.message_index], RoughCounter())
            assert abs(estimate - c.pre_tokens) <= 0.02 * c.pre_tokens, (name, estimate, c.pre_tokens)
            checked += 1
    assert checked == 2


def test_the_spotter_session_keeps_its_subagents_apart(shared_transcripts: Path) -> None:
    t = read_transcript(shared_transcripts / "spotter-258c7280" / "session.jsonl")
    assert set(t.sidechains) == {"a881341", "acompact-fffbd0"}
    assert all(m.agent_id is None for m in t.messages)
    assert "summary" in t.sidechains["acompact-fffbd0"][0].text()


# -- shapes Claude Code writes itself ----------------------------------------------------


def test_a_record_whose_parent_was_never_written_links_to_the_record_before_it(tmp_path: Path) -> None:
    log = Log()
    log.user("first question")
    log.assistant([text("first answer")], mid="m1", usage=USAGE)
    log.add({"type": "progress", "data": {"type": "hook_progress"}}, parent="never-written")
    log.user("second question")
    log.assistant([text("second answer")], mid="m2", usage=USAGE)
    t = read_transcript(log.write(tmp_path / "s.jsonl"), strict=True)
    assert [m.text() for m in t.messages] == ["first question", "first answer", "second question", "second answer"]
    assert [(w.kind, w.line) for w in t.warnings] == [("dangling_parent", 3)]
    assert t.fragment is None


def test_a_boundary_whose_logical_parent_was_never_written_keeps_the_conversation_before_it(tmp_path: Path) -> None:
    log = Log()
    log.user("before")
    log.assistant([text("answer before")], mid="m1", usage=USAGE)
    log.boundary("auto", 170_000)
    log.records[-1]["logicalParentUuid"] = "never-written"
    log.user("summary of before", isCompactSummary=True)
    log.user("after")
    t = read_transcript(log.write(tmp_path / "s.jsonl"), strict=True)
    assert [m.text() for m in t.messages] == ["before", "answer before", "summary of before", "after"]
    assert [w.kind for w in t.warnings] == ["dangling_logical_parent"]
    assert [(c.message_index, c.pre_tokens, c.summary) for c in t.compactions] == [(2, 170_000, "summary of before")]


def test_a_file_whose_first_parent_is_elsewhere_is_a_fragment_with_its_first_usage(tmp_path: Path) -> None:
    log = Log()
    log.user("carry on", parent="in-an-earlier-file")
    log.assistant([text("carrying on")], mid="m1", usage=USAGE)
    t = read_transcript(log.write(tmp_path / "s.jsonl"), strict=True)
    assert t.fragment is not None
    assert (t.fragment.line, t.fragment.parent_uuid, t.fragment.first_usage_line) == (1, "in-an-earlier-file", 2)
    assert t.fragment.first_usage_tokens == sum(USAGE.values())
    assert [w.kind for w in t.warnings] == ["fragment"]


def test_reading_without_the_state_gives_the_same_chain_and_an_empty_state(tmp_path: Path) -> None:
    path = simple_session().write(tmp_path / "s.jsonl")
    full, bare = read_transcript(path), read_transcript(path, state=False)
    assert bare.entries == full.entries and bare.messages == full.messages
    assert full.state.read_files and bare.state == SessionState()


def test_reading_leaves_the_cycle_collector_as_it_found_it(tmp_path: Path) -> None:
    import gc

    path = simple_session().write(tmp_path / "s.jsonl")
    assert gc.isenabled()
    read_transcript(path)
    assert gc.isenabled()
    (tmp_path / "bad.jsonl").write_text('{"type": "user", "message": ', encoding="utf-8")
    with pytest.raises(TranscriptError):
        read_transcript(tmp_path / "bad.jsonl", strict=True)
    assert gc.isenabled()
    gc.disable()
    try:
        read_transcript(path)
        assert not gc.isenabled()  # a caller's choice to keep it off is kept
    finally:
        gc.enable()


def test_without_subagents_inline_sidechains_are_not_read_but_kept_off_the_chain(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    main = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "sessionId": "s",
        "message": {"role": "user", "content": "hi"},
    }
    side = {
        "type": "user",
        "uuid": "x1",
        "parentUuid": None,
        "isSidechain": True,
        "agentId": "a1",
        "sessionId": "s",
        "message": {"role": "user", "content": "sub task"},
    }
    path.write_text("\n".join(json.dumps(r) for r in (main, side)) + "\n", encoding="utf-8")
    assert [m.text() for m in read_transcript(path).sidechains["a1"]] == ["sub task"]
    lean = read_transcript(path, subagents=False)
    assert lean.sidechains == {}
    assert [e.records[0]["uuid"] for e in lean.off_chain] == ["x1"]
    assert [m.text() for m in lean.messages] == ["hi"]


# -- messages the user queued while the agent worked -------------------------------


def queue(log: Log, operation: str, content: str | None = None) -> None:
    record: dict[str, Any] = {"type": "queue-operation", "operation": operation, "sessionId": log.session_id}
    if content is not None:
        record["content"] = content
    log.records.append(record)


def test_a_message_queued_while_a_call_ran_reaches_the_model_with_that_calls_results(tmp_path: Path) -> None:
    log = Log()
    log.user("Implement the epic")
    log.assistant([tool_use("t1", "Bash", command="mix test")], mid="m1")
    queue(log, "enqueue", "<task-notification>\n<task-id>b1</task-id>\n</task-notification>")
    queue(log, "enqueue", "new tasks were added, tackle them too")
    queue(log, "remove")
    log.result("t1", "5 tests, 0 failures")
    log.assistant([text("On to the new tasks.")], mid="m2")
    path = log.write(tmp_path / "s.jsonl")
    transcript = read_transcript(path)
    results, delivered = transcript.messages[2:4]
    assert results.tool_results() and queued(delivered) == ["new tasks were added, tackle them too"]
    assert transcript.messages[1].tool_uses(), "it comes after the call's results: the pair stays together"
    ledger = merge_messages(SessionLedger(), transcript.messages)
    assert [m.text for m in ledger.user_messages] == ["Implement the epic", "new tasks were added, tackle them too"]
    assert ledger.current_request == "new tasks were added, tackle them too"


def test_a_queued_message_put_back_into_the_input_box_is_not_delivered(tmp_path: Path) -> None:
    log = simple_session()
    queue(log, "enqueue", "actually, stop")
    queue(log, "popAll")
    log.user("hello again")
    transcript = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert not any(queued(m) for m in transcript.messages)


def test_a_transcript_written_back_keeps_claude_codes_lines_without_the_delivered_text(tmp_path: Path) -> None:
    log = Log()
    log.user("go")
    log.assistant([tool_use("t1", "Bash", command="ls")], mid="m1")
    queue(log, "enqueue", "and check the README")
    log.result("t1", "a b")
    queue(log, "remove")
    log.assistant([text("ok")], mid="m2")
    path = log.write(tmp_path / "s.jsonl")
    transcript = read_transcript(path)
    assert any(queued(m) for m in transcript.messages)
    out = tmp_path / "out.jsonl"
    write_transcript(transcript, out)
    assert [json.loads(line) for line in out.read_text().splitlines()] == log.records


def test_a_queued_message_taken_as_the_next_prompt_is_not_delivered_twice(tmp_path: Path) -> None:
    log = simple_session()
    queue(log, "enqueue", "we also have merge conflicts")
    queue(log, "dequeue")
    log.user("we also have merge conflicts")
    transcript = read_transcript(log.write(tmp_path / "s.jsonl"))
    assert not any(queued(m) for m in transcript.messages)
    assert [m.text() for m in transcript.messages].count("we also have merge conflicts") == 1
