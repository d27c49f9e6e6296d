"""File selection strategies: recent is Claude Code's order; activity ranks by reads, edits, recency and the summary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

import ccr
from attachments import Budgets, DiskFiles, build_file_attachments
from attachments.selection import (
    FileActivity,
    FileSelection,
    file_activity,
    newest_first,
    rank_files,
)
from compactor.claude_code.replay import replay
from compactor.core.config import load_settings
from compactor.core.messages import Message, ToolUseBlock
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.tokens import TiktokenCounter
from compactor.summarizers import make_summarizer
from compactor.tune.metrics import Metrics, replay_metrics

WriteFile = Callable[..., ReadFileEntry]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def call(name: str, path: str, n: int) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=f"t{n}", name=name, input={"file_path": path})])


def entry(path: str, at: float) -> ReadFileEntry:
    return ReadFileEntry(path=path, content="x\n", timestamp=at)


def test_recent_orders_newest_read_first_whatever_the_activity() -> None:
    entries = [entry("/r/a.py", 1), entry("/r/b.py", 3), entry("/r/c.py", 2)]
    activity = {"/r/a.py": FileActivity(reads=9, edits=9)}
    ranked = rank_files(entries, FileSelection(strategy="recent"), activity=activity)
    assert [e.path for e in ranked] == ["/r/b.py", "/r/c.py", "/r/a.py"]


def test_reads_the_clock_does_not_separate_are_ordered_by_their_position() -> None:
    entries = [entry(f"/r/f{i}.py", 0.0) for i in range(10)]
    for strategy in ("recent", "activity"):
        ranked = rank_files(entries, FileSelection(strategy=strategy), activity={})
        assert [e.path for e in ranked][:5] == [f"/r/f{i}.py" for i in (9, 8, 7, 6, 5)], strategy


def test_a_read_again_moves_to_the_newest_position_in_the_session_state() -> None:
    state = SessionState()
    for name in ("a", "b", "c"):
        state.record_read(entry(f"/r/{name}.py", 0.0))
    state.record_read(entry("/r/a.py", 0.0))
    assert [e.path for e in newest_first(state.read_files.values())] == ["/r/a.py", "/r/c.py", "/r/b.py"]


def test_activity_puts_an_often_edited_file_before_a_newer_glance() -> None:
    entries = [entry("/r/core.py", 1), entry("/r/glance.py", 5)]
    activity = {"/r/core.py": FileActivity(reads=3, edits=2), "/r/glance.py": FileActivity(reads=1)}
    ranked = rank_files(entries, FileSelection(strategy="activity"), activity=activity)
    assert [e.path for e in ranked] == ["/r/core.py", "/r/glance.py"]


def test_activity_without_signals_keeps_claude_codes_order() -> None:
    entries = [entry(f"/r/f{i}.py", float(i)) for i in range(6)]
    ranked = rank_files(entries, FileSelection(strategy="activity"), activity={})
    assert [e.path for e in ranked] == [f"/r/f{i}.py" for i in (5, 4, 3, 2, 1, 0)]


def test_a_file_the_current_work_names_moves_up() -> None:
    entries = [entry("/r/old_module.py", 1), entry("/r/new.py", 2)]
    plain = rank_files(entries, FileSelection(), activity={})
    named = rank_files(entries, FileSelection(), activity={}, current_work="- fixing old_module.py's parser")
    assert plain[0].path == "/r/new.py"
    assert named[0].path == "/r/old_module.py"


def test_a_file_name_inside_a_longer_name_does_not_count_as_named() -> None:
    entries = [entry("/r/util.py", 1), entry("/r/new.py", 2)]
    ranked = rank_files(entries, FileSelection(), activity={}, current_work="editing myutil.py.bak")
    assert ranked[0].path == "/r/new.py"


def test_file_activity_counts_reads_and_every_kind_of_edit_per_normalized_path() -> None:
    history = [
        call("Read", "src/a.py", 1),
        call("Read", "/repo/src/a.py", 2),
        call("Edit", "/repo/src/a.py", 3),
        call("Write", "/repo/src/b.py", 4),
        call("MultiEdit", "/repo/src/b.py", 5),
        call("Bash", "/repo/src/a.py", 6),
    ]
    found = file_activity(history, cwd="/repo")
    assert found == {
        "/repo/src/a.py": FileActivity(reads=2, edits=1, last_touch=5),  # the Bash call names it last
        "/repo/src/b.py": FileActivity(reads=0, edits=2, last_touch=4),
    }


def test_a_file_a_later_command_names_counts_as_touched_then() -> None:
    history = [
        call("Read", "/r/old.py", 1),
        call("Read", "/r/new.py", 2),
        Message(role="assistant", content=[ToolUseBlock(id="t3", name="Bash", input={"command": "pytest old.py -x"})]),
    ]
    entries = [entry("/r/old.py", 1), entry("/r/new.py", 2)]
    ranked = rank_files(entries, FileSelection(edit_weight=0, tail_weight=0), activity=file_activity(history))
    assert [e.path for e in ranked] == ["/r/old.py", "/r/new.py"]


def test_the_strategy_and_weights_are_settings_and_recent_stays_selectable() -> None:
    settings = load_settings(None, env={}, overrides={"attachments.selection.strategy": "recent"})
    assert settings.attachments.selection.strategy == "recent"
    assert load_settings(None, env={}).attachments.selection.strategy == "activity"
    with pytest.raises(ValidationError):
        FileSelection(strategy="random")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        FileSelection(edit_weight=-1)


def test_slots_of_files_the_tail_holds_go_to_the_next_candidates(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entries = [write_file(f"f{i}.py", f"x = {i}\n", at=float(i)) for i in range(4)]
    tail = [call("Read", entries[3].path, 9)]
    history = [call("Edit", entries[0].path, 1), call("Edit", entries[0].path, 2)]
    attached, skipped = build_file_attachments(
        {e.path: e for e in entries},
        SessionState(),
        tail,
        budgets=Budgets(selection=FileSelection(max_files=2)),
        counter=counter,
        store=store,
        files=DiskFiles(),
        history=history,
    )
    assert [a.entries[0].path for a in attached] == [entries[0].path, entries[2].path]
    reasons = {s.path: s.reason.split(":", 1)[0] for s in skipped}
    assert reasons == {entries[3].path: "read_in_tail", entries[1].path: "beyond_max_files"}


def test_recent_ignores_the_history_in_the_file_builder(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entries = [write_file(f"f{i}.py", f"x = {i}\n", at=float(i)) for i in range(3)]
    history = [call("Edit", entries[0].path, 1)]
    attached, _ = build_file_attachments(
        {e.path: e for e in entries},
        SessionState(),
        [],
        budgets=Budgets(max_files=2, selection=FileSelection(strategy="recent")),
        counter=counter,
        store=store,
        files=DiskFiles(),
        history=history,
    )
    assert [a.entries[0].path for a in attached] == [entries[2].path, entries[1].path]


def test_the_default_restores_twelve_files_of_1500_and_the_card_is_one_preset_away(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    big = "".join(f"line {i} = value({i})\n" for i in range(3_000))
    entries = [write_file(f"f{i}.py", big, at=float(i)) for i in range(14)]
    snapshot = {e.path: e for e in entries}

    def attach(budgets: Budgets) -> list[int]:
        attached, _ = build_file_attachments(
            snapshot, SessionState(), [], budgets=budgets, counter=counter, store=store, files=DiskFiles()
        )
        return [a.tokens for a in attached]

    default = load_settings(None, env={}).attachments
    assert default.selection.strategy == "activity"
    own = attach(default)
    assert len(own) == 12 and 1_000 < max(own) <= 1_500 and sum(own) <= 18_000, "12 files, 1,500 each"
    assert len(attach(Budgets(max_files=3))) == 3, "activity follows [attachments] max_files"
    assert max(attach(Budgets(file_tokens=800))) <= 800
    assert max(attach(Budgets(selection=FileSelection(file_tokens=9_000)))) <= 1_500, "never a larger cut"
    assert len(attach(Budgets(selection=FileSelection(max_files=2)))) == 2, "activity's own count"
    card = load_settings(EXAMPLES / "claude-code-card.toml", env={}).attachments
    assert (card.max_files, card.file_tokens, card.files_total) == (5, 5_000, 50_000)
    carded = attach(card)
    assert len(carded) == 5 and 2_000 < max(carded) <= 5_000, "the card: 5 files, 5K each"
    recent = attach(card.model_copy(update={"selection": FileSelection(strategy="recent")}))
    assert len(recent) == 5 and 2_000 < max(recent) <= 5_000


def test_the_default_count_constants_are_the_budgets_defaults_and_skills_keep_the_cards() -> None:
    from attachments.selection import DEFAULT_ACTIVITY_FILE_TOKENS, DEFAULT_ACTIVITY_FILES

    assert (Budgets().max_files, Budgets().file_tokens) == (DEFAULT_ACTIVITY_FILES, DEFAULT_ACTIVITY_FILE_TOKENS)
    assert (Budgets().max_files, Budgets().file_tokens, Budgets().files_total) == (12, 1_500, 50_000)
    assert (Budgets().skill_tokens, Budgets().skills_total) == (5_000, 25_000)


def _pooled(paths: list[Path], strategy: str, file: Path | None = None) -> Metrics:
    # The strategies are compared under the attachment budgets alone (no shared ceiling, the default).
    overrides: dict[str, object] = {"attachments.selection.strategy": strategy}
    settings = load_settings(file, env={}, overrides=overrides)
    parts = []
    for path in paths:
        store = ccr.open_store(":memory:")
        report = replay(path, settings=settings, store=store, at="recorded", summarizer=make_summarizer(settings))
        parts.append(replay_metrics(report, store))
    return Metrics.combine(parts)


def test_on_the_shared_real_sessions_the_default_restores_what_the_cards_budgets_miss(
    shared_transcripts: Path,
) -> None:
    """At Claude Code's own compaction points, with no shared context budget: under the card's budgets
    (5 files of 5,000) activity restores more re-read files than recent, and the default (12 files of
    1,500) restores nearly all of them with about the tokens recent spends.
    """
    card = EXAMPLES / "claude-code-card.toml"
    paths = sorted(p for p in shared_transcripts.rglob("*.jsonl") if "subagents" not in p.parts)
    recent = _pooled(paths, "recent", card)
    carded = _pooled(paths, "activity", card)
    default = _pooled(paths, "activity")
    assert carded.compactions == recent.compactions == default.compactions > 0 and carded.reread_files > 0
    assert recent.reread_coverage_beyond_tail is not None and carded.reread_coverage_beyond_tail is not None
    assert carded.reread_coverage_beyond_tail >= 0.65 > 0.5 > recent.reread_coverage_beyond_tail
    assert carded.reread_coverage_with_tail is not None and carded.reread_coverage_with_tail >= 0.65
    assert default.reread_coverage_with_tail is not None and default.reread_coverage_with_tail >= 0.9
    assert recent.attachment_tokens is not None and default.attachment_tokens is not None
    assert default.attachment_tokens <= 1.05 * recent.attachment_tokens
    for name, m in (("recent, card", recent), ("activity, card", carded), ("default", default)):
        print(  # the figures the docs quote, for whoever reruns this with -s
            f"{name}: {m.reread_restored}/{m.reread_files - m.reread_in_tail} beyond tail, "
            f"{m.reread_coverage_with_tail:.0%} with tail, {m.attachment_tokens:,.0f} tokens"
        )
