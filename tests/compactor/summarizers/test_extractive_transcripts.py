"""On real Claude Code sessions and the project's fixtures, the extractive summary keeps the facts.

Each session is replayed and compacted exactly where Claude Code compacted
(``--at recorded``); a session that never compacted is compacted once at its
end (measured as the pipeline measures). Every compaction point must show, in
the summary with the index that follows it: paths at least 98% kept, command
first lines at least 90%, typed user messages 100% (verbatim or by handle,
``compactor.engine.survival``); the typed messages in the summary itself; and a
summary message of at most 16,000 characters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from attachments import RecordedFiles
from ccr import open_store
from compactor.claude_code.replay import replay
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import Settings
from compactor.core.messages import Message
from compactor.core.session import SessionState
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult, split_tail
from compactor.engine.survival import Survival, fact_survival
from compactor.summarizers import ExtractiveSummarizer
from compactor.summarizers.prompts import typed

FIXTURE_SESSIONS = sorted((Path(__file__).resolve().parents[3] / "fixtures" / "sessions").glob("*.jsonl"))
MAX_SUMMARY_CHARS = 16_000


@dataclass
class Point:
    """One compaction point: the survival its report carries and the summary's length."""

    line: int | None
    survival: Survival
    summary_chars: int
    summary: str
    head: list[Message]
    tail: list[Message]
    user_messages_in_summary: float | None
    """The share of typed user messages the summary text itself keeps (without the index)."""


def compaction_points(path: Path, tmp_path: Path) -> list[Point]:
    """The recorded compaction points; for a session that never compacted, its end.

    At the end the head is what a manual compaction would summarize there;
    it is measured with the same summarizer and ``fact_survival`` the
    pipeline uses (the pipeline itself refuses to compact a session so small
    that compacting would not shrink it).
    """
    store = open_store(tmp_path / "ccr.db")
    results: list[CompactionResult] = []
    report = replay(
        path, settings=Settings(), store=store, at="recorded", on_compaction=lambda result, line: results.append(result)
    )
    assert not report.failures, [f.error for f in report.failures]
    # The stored head is the API shape only; the transcript's messages carry the flags (meta, ...).
    recorded = {m.api_json(): m for m in read_transcript(path, subagents=False).messages}
    points = []
    for result in results:
        if result.summary_message is not None:  # a later head opens with this summary: flagged as one
            recorded[result.summary_message.api_json()] = result.summary_message
        summary = result.summary_message
        assert result.report.survival is not None and summary is not None and isinstance(summary.content, str)
        jsonl = store.get(result.report.dropped[0].handle).decode()
        head = [recorded.get(line, Message.model_validate(json.loads(line))) for line in jsonl.split("\n")[:-1]]
        kept = sum(1 for entry in result.report.context if entry.part == "tail")
        points.append(
            Point(
                result.report.at_line,
                result.report.survival,
                len(summary.content),
                summary.content,
                head,
                result.messages[1 : 1 + kept],
                fact_survival(
                    head,
                    result.report.summary or "",
                    cwd=read_transcript(path, subagents=False).entries[0].record.get("cwd"),
                    stored={h.handle: store.get(h.handle) for h in result.report.dropped[1:] if h.handle},
                ).user_messages,
            )
        )
    if points:
        return points
    transcript = read_transcript(path, subagents=False)
    first = transcript.entries[0].record if transcript.entries else {}
    cwd = first.get("cwd")
    orch = Orchestrator(
        settings=Settings(),
        store=store,
        files=RecordedFiles(),
        state=SessionState(session_id=transcript.session_id, cwd=cwd),
    )
    for entry in transcript.entries:
        if entry.message is not None and not entry.message.is_compact_summary:
            orch.add_message(entry.message, tool_use_results=entry.structured_results() or None)
    head, _ = split_tail(orch.messages, Settings().pipeline.tail_tokens, orch.counter)
    summarizer = ExtractiveSummarizer()
    spans = summarizer.spans(head)
    summary = summarizer.summarize(head, spans=spans, cwd=cwd)
    stored = {s.handle: s.data for s in spans if s.kind != "head"}
    survival = fact_survival(head, f"{summary.text}\n{summary.index}", cwd=cwd, stored=stored)
    alone = fact_survival(head, summary.text, cwd=cwd, stored=stored).user_messages
    return [Point(None, survival, len(summary.text), summary.text, head, [], alone)]


def check(points: list[Point]) -> None:
    assert points, "the session has at least one compaction point"
    for point in points:
        survival = point.survival
        where = f"compaction at line {point.line}"
        assert survival.paths is None or survival.paths >= 0.98, (where, survival)
        assert survival.commands is None or survival.commands >= 0.90, (where, survival)
        assert survival.user_messages is None or survival.user_messages == 1.0, (where, survival)
        assert point.user_messages_in_summary in (None, 1.0), (where, "typed messages stand in the summary itself")
        assert point.summary_chars <= MAX_SUMMARY_CHARS, (where, point.summary_chars)


_WRAPPERS = ("<task-notification>", "<command-name>", "<local-command-stdout>", "<system-reminder>", "<bash-stdout>")


def section(summary: str, number: int) -> str:
    start = summary.index(f"\n{number}. ")
    end = summary.find(f"\n{number + 1}. ", start)
    return summary[start : end if end != -1 else len(summary)]


def test_real_sessions_name_the_latest_typed_request_of_head_and_tail_never_a_wrapper(
    shared_transcript: Path, tmp_path: Path
) -> None:
    for point in compaction_points(shared_transcript, tmp_path):
        goal, step = section(point.summary, 1), section(point.summary, 9)
        pending, work = section(point.summary, 7), section(point.summary, 8)
        for text in (goal, step, pending, work):
            assert not any(w in text for w in _WRAPPERS), text
        requests = [t for m in [*point.head, *point.tail] if (t := typed(m)) is not None and t.is_request]
        if requests:
            assert " ".join(requests[-1].text.split())[:100] in " ".join(goal.split()), (point.line, goal)


def test_real_sessions_keep_paths_commands_and_user_messages_in_a_short_summary(
    shared_transcript: Path, tmp_path: Path
) -> None:
    check(compaction_points(shared_transcript, tmp_path))


@pytest.mark.parametrize("session", FIXTURE_SESSIONS, ids=[p.name for p in FIXTURE_SESSIONS])
def test_fixture_sessions_keep_paths_commands_and_user_messages_in_a_short_summary(
    session: Path, tmp_path: Path
) -> None:
    check(compaction_points(session, tmp_path))


def test_the_fixture_sessions_are_there() -> None:
    assert len(FIXTURE_SESSIONS) >= 2
