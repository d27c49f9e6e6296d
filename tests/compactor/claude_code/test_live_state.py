"""The live state: Claude Code's context estimate and the ledger's facts, folded as the transcript grows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ccr import open_store
from compactor.claude_code.compaction_gauge import figures, limits_for
from compactor.claude_code.live_state import (
    LiveState,
    advance,
    live_state_path,
    load_live_state,
    rough_tokens,
    save_live_state,
)
from compactor.claude_code.replay import replay
from compactor.core.config import Settings
from compactor.core.messages import Message
from compactor.core.tokens import RoughCounter
from compactor.engine.pipeline import CompactionResult
from compactor.summarizers.ledger import tail_view

NO_DEDUP = {"dedup": {"enabled": False}, "masking": {"enabled": False}}


def _write(path: Path, records: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _user(uuid: str, content: Any) -> dict[str, Any]:
    return {"type": "user", "uuid": uuid, "message": {"role": "user", "content": content}}


def _answer(uuid: str, message_id: str, content: Any, total: int) -> dict[str, Any]:
    usage = {"input_tokens": total - 10, "output_tokens": 10}
    return {
        "type": "assistant",
        "uuid": uuid,
        "message": {"role": "assistant", "id": message_id, "model": "claude-x", "content": content, "usage": usage},
    }


@pytest.mark.parametrize(
    "content",
    [
        "plain words ✓ and an emoji 😀",
        [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "é"}}],
        [{"type": "tool_result", "tool_use_id": "t", "content": "     1\t{\n     2\t}"}],
        [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x" * 9}]}],
        [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}],
        [{"type": "thinking", "thinking": "why", "signature": "s"}],
    ],
)
def test_rough_tokens_are_the_rough_counters(content: Any) -> None:
    role = (
        "assistant" if isinstance(content, list) and content[0]["type"] in ("tool_use", "text", "thinking") else "user"
    )
    message = Message.model_validate({"role": role, "content": content})
    assert rough_tokens(content) == RoughCounter().count_message(message)


def test_a_streamed_answer_anchors_on_its_last_usage_and_counts_newer_messages(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    result = [{"type": "tool_result", "tool_use_id": "a", "content": "r" * 400}]
    _write(
        transcript,
        [
            _user("u1", "hello there"),
            _answer("a1", "m1", [{"type": "text", "text": "x"}], 1_000),
            _user("u2", result),
            _answer(
                "a2", "m1", [{"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": "ls\nx"}}], 1_200
            ),
            _user("u2", result),  # appended twice: counted once
        ],
    )
    state = advance(None, transcript)
    assert state.tokens == 1_200 + 100
    assert state.answers == 1 and state.commands == {"ls": 1} and state.messages == {"hello there": 1}


def test_only_whole_new_lines_are_read_and_a_replaced_file_starts_over(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _write(transcript, [_user("u1", "first request")])
    state = advance(None, transcript)
    size = transcript.stat().st_size
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(_user("u2", "second")) + "\n" + '{"type": "user", "uuid": "u3", "mess')
    state = advance(state, transcript)
    assert state.offset > size and state.lines == 2 and set(state.messages) == {"first request", "second"}
    _write(transcript, [_user("v1", "another session")])  # shorter: replaced
    state = advance(state, transcript)
    assert set(state.messages) == {"another session"} and state.lines == 1


def test_the_saved_state_comes_back_and_a_broken_one_is_ignored(tmp_path: Path) -> None:
    transcript = tmp_path / "t.jsonl"
    _write(transcript, [_user("u1", "go"), _answer("a1", "m1", [{"type": "text", "text": "ok"}], 500)])
    path = live_state_path("session-1", {"COMPACTOR_HOME": str(tmp_path / "home")})
    assert path.parent.name == "statusline"
    state = advance(None, transcript)
    save_live_state(state, path)
    assert os.stat(path).st_mode & 0o777 == 0o600
    again = load_live_state(path)
    assert again is not None and again.to_json() == state.to_json()
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left
    path.write_text('{"version": 999}', encoding="utf-8")
    assert load_live_state(path) is None
    assert live_state_path("../x", {"COMPACTOR_HOME": "h"}).name != "../x.json"


def replay_reference(path: Path, folder: Path) -> list[tuple[int, int, int, int, int]]:
    """At each recorded compaction: its line, the ledger a compaction there keeps (head and tail), and
    the replay's context then. The replay's store is made in ``folder`` (the test's own, never the
    transcript's, which tests running at the same time read)."""
    seen: list[tuple[int, int, int, int, int]] = []

    def keep(result: CompactionResult, line: int) -> None:
        view = tail_view(result.state.ledger, result.messages)
        seen.append((line, len(view.paths), len(view.commands), len(view.user_messages), result.report.pre_tokens))

    with open_store(folder / "ccr.db") as store:
        replay(
            path,
            settings=Settings.model_validate(NO_DEDUP),
            store=store,
            at="recorded",
            counter=RoughCounter(),
            on_compaction=keep,
        )
    return seen


def test_at_every_recorded_compaction_the_state_agrees_with_the_replay(shared_transcript: Path, tmp_path: Path) -> None:
    copy = tmp_path / "session.jsonl"
    lines = shared_transcript.read_bytes().splitlines(keepends=True)
    copy.write_bytes(b"")
    reference = replay_reference(shared_transcript, tmp_path)
    recorded = {}
    for number, raw in enumerate(lines, 1):
        record = json.loads(raw)
        if record.get("subtype") == "compact_boundary":
            recorded[number] = record["compactMetadata"]
    if not recorded:
        pytest.skip("no recorded compaction")
    state: LiveState | None = None
    before: dict[int, LiveState] = {}
    with copy.open("ab") as handle:
        for number, raw in enumerate(lines, 1):
            if number in recorded:  # the status line's run just before the compaction, from its saved state
                before[number] = LiveState.from_json(json.loads(json.dumps(advance(state, copy).to_json())))
            handle.write(raw)
            handle.flush()
            state = advance(state, copy)  # a run after every record, as Claude Code writes them
    assert [line for line, *_ in reference] == sorted(recorded)
    first = True
    for line, paths, commands, messages, pre_tokens in reference:
        at = before[line]
        assert (len(at.paths), len(at.commands), len(at.messages)) == (paths, commands, messages)
        if first:  # until the first compaction the replay's estimate is Claude Code's own
            assert at.tokens == pre_tokens
        first = False
        meta = recorded[line]
        assert abs(at.tokens - meta["preTokens"]) <= 0.01 * meta["preTokens"]
        limits = limits_for(200_000, client=at.client, environ={})
        if meta["trigger"] == "auto":
            assert figures(at, limits).used >= 0.95


def test_before_any_compaction_the_estimate_is_the_replays_at_that_record(
    shared_transcript: Path, tmp_path: Path
) -> None:
    lines = shared_transcript.read_bytes().splitlines(keepends=True)
    end = next((n for n, raw in enumerate(lines) if b'"compact_boundary"' in raw), len(lines))
    checked = 0
    for cut in sorted({end // 3, (2 * end) // 3, end}):
        if cut == 0:
            continue
        prefix = tmp_path / f"prefix-{cut}.jsonl"
        prefix.write_bytes(b"".join(lines[:cut]))
        with open_store(tmp_path / f"ccr-{cut}.db") as store:
            report = replay(
                prefix, settings=Settings.model_validate(NO_DEDUP), store=store, at="recorded", counter=RoughCounter()
            )
        assert advance(None, prefix).tokens == report.totals.final_tokens
        checked += 1
    assert checked
