"""build_attachments: every kind in Claude Code's order, as meta reminders, without touching the state."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import ccr
from attachments import AttachmentSet, Budgets, DiskFiles, build_attachments
from ccr.batch import StoreBatch
from compactor.core.session import BackgroundTask, InvokedSkill, Plan, ReadFileEntry, SessionState
from compactor.core.tokens import RoughCounter, TiktokenCounter


def full_state(tmp_cwd: str) -> SessionState:
    state = SessionState(
        cwd=tmp_cwd,
        plan=Plan(path=f"{tmp_cwd}/.claude/plans/plan.md", content="1. do it\n"),
        permission_mode="plan",
        tasks={"a1": BackgroundTask(id="a1", description="search the code")},
        deferred_tools=["WebFetch"],
        agent_types=["general-purpose"],
        mcp_instructions={"gh": "Use gh."},
    )
    state.invoke_skill(InvokedSkill(name="review", path="/s/review/SKILL.md", content="Review well.\n", invoked_at=1.0))
    return state


def test_attachments_come_in_claude_codes_order(
    write_file: Callable[..., ReadFileEntry], counter: TiktokenCounter, store: ccr.Store
) -> None:
    entry = write_file("src/a.py", "a = 1\n", at=1.0)
    cwd = entry.path.rsplit("/src/", 1)[0]
    state = full_state(cwd)
    result = build_attachments(
        {entry.path: entry}, state, [], budgets=Budgets(), counter=counter, store=store, files=DiskFiles()
    )
    assert [a.type for a in result.attachments] == [
        "file",
        "task_status",
        "plan_file",
        "plan_mode",
        "skill",
        "deferred_tools_delta",
        "agent_listing_delta",
        "mcp_instructions_delta",
    ]
    assert [e.type for e in result.entries] == [a.type for a in result.attachments]
    for message in result.messages:
        text = message.text()
        assert message.role == "user" and message.is_meta
        assert text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")
    assert result.tokens == sum(counter.count_text(m.text()) for m in result.messages)
    assert result.skipped == []


def test_building_does_not_change_the_state(
    write_file: Callable[..., ReadFileEntry], counter: TiktokenCounter, store: ccr.Store
) -> None:
    entry = write_file("a.py", "a = 1\n", at=1.0)
    state = full_state("/somewhere")
    before = state.model_dump()
    build_attachments(
        {entry.path: entry}, state, [], budgets=Budgets(), counter=counter, store=store, files=DiskFiles()
    )
    assert state.model_dump() == before


def test_the_budgets_are_in_the_given_counter(write_file: Callable[..., ReadFileEntry], store: ccr.Store) -> None:
    entry = write_file("a.txt", "word " * 4_000 + "\n" + "more\n" * 100, at=1.0)
    rough = RoughCounter()
    result = build_attachments(
        {entry.path: entry},
        SessionState(),
        [],
        budgets=Budgets(file_tokens=1_000),
        counter=rough,
        store=store,
        files=DiskFiles(),
    )
    [attachment] = result.attachments
    assert attachment.tokens == rough.count_text(attachment.message.text()) <= 1_000


def test_an_empty_session_has_no_attachments(counter: TiktokenCounter, store: ccr.Store) -> None:
    assert (
        build_attachments({}, SessionState(), [], budgets=Budgets(), counter=counter, store=store, files=DiskFiles())
        == AttachmentSet()
    )


class CountingStore:
    """The batch seam over a real store: counts the ``put_many`` calls (one transaction each)."""

    def __init__(self, store: ccr.Store) -> None:
        self.store = store
        self.batches: list[int] = []

    def put_many(self, items: Sequence[ccr.PutRequest]) -> list[str]:
        self.batches.append(len(items))
        return self.store.put_many(items)


def test_every_cut_tail_of_one_build_is_stored_in_one_transaction_under_the_handle_it_names(
    write_file: Callable[..., ReadFileEntry], store: ccr.Store
) -> None:
    rough = RoughCounter()
    entries = [write_file(f"f{n}.txt", f"line {n} " * 3_000 + "\n" + "more\n" * 300, at=float(n)) for n in range(3)]
    state = SessionState()
    state.invoke_skill(InvokedSkill(name="big", path="/s/big/SKILL.md", content="step\n" * 4_000, invoked_at=1.0))
    counting = CountingStore(store)
    result = build_attachments(
        {e.path: e for e in entries},
        state,
        [],
        budgets=Budgets(file_tokens=1_000),
        counter=rough,
        store=counting,
        files=DiskFiles(),
    )
    handles = [e.handle for e in result.entries if e.handle is not None]
    assert len(handles) == 4 and counting.batches == [4]
    assert all(store.contains(h) for h in handles)


def test_a_store_that_refuses_the_tails_fails_the_build_and_keeps_none_of_them(
    write_file: Callable[..., ReadFileEntry], tmp_path: Path
) -> None:
    entries = [write_file(f"f{n}.txt", f"line {n} " * 3_000 + "\n", at=float(n)) for n in range(2)]
    small = ccr.open_store(tmp_path / "small.db", max_bytes=25_000)  # one tail fits, not both
    with pytest.raises(ccr.BudgetExceeded):
        build_attachments(
            {e.path: e for e in entries},
            SessionState(),
            [],
            budgets=Budgets(file_tokens=1_000),
            counter=RoughCounter(),
            store=small,
            files=DiskFiles(),
        )
    assert small.stats().entries == 0


def test_a_batch_given_as_the_store_collects_the_tails_for_its_owner_to_store(
    write_file: Callable[..., ReadFileEntry], store: ccr.Store
) -> None:
    entries = [write_file(f"f{n}.txt", f"line {n} " * 3_000 + "\n" + "more\n" * 300, at=float(n)) for n in range(2)]
    batch = StoreBatch()
    result = build_attachments(
        {e.path: e for e in entries},
        SessionState(),
        [],
        budgets=Budgets(file_tokens=1_000),
        counter=RoughCounter(),
        store=batch,
        files=DiskFiles(),
    )
    handles = [e.handle for e in result.entries if e.handle is not None]
    assert len(handles) == 2 and batch.handles == handles
    assert store.stats().entries == 0
    counting = CountingStore(store)
    batch.store_in(counting)
    assert counting.batches == [2] and all(store.contains(h) for h in handles)
