"""File attachments: exclusions, recency, re-reading, cutting with CCR tails, and the budgets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccr
from attachments import (
    Attachment,
    Budgets,
    DiskFiles,
    FileSource,
    RecordedFiles,
    TailNotStored,
    build_file_attachments,
)
from attachments.selection import FileSelection
from compactor.core.messages import Message, ToolUseBlock
from compactor.core.session import Plan, ReadFileEntry, SessionState
from compactor.core.tokens import TiktokenCounter
from compactor.engine.report import SkippedEntry

WriteFile = Callable[..., ReadFileEntry]


def lines(n: int, word: str = "value") -> str:
    return "".join(f"{word} {i} = compute({i}, {i * 7})\n" for i in range(n))


def text_of_tokens(counter: TiktokenCounter, tokens: int) -> str:
    """A multi-line text whose token count is exactly ``tokens``."""
    text = ""
    i = 0
    while counter.count_text(text) < tokens:
        text += f"item {i}\n"
        i += 1
    while counter.count_text(text) > tokens:
        text = text[:-1]
    assert counter.count_text(text) == tokens
    return text


def build(
    snapshot: dict[str, ReadFileEntry],
    state: SessionState | None = None,
    tail: list[Message] | None = None,
    *,
    budgets: Budgets | None = None,
    counter: TiktokenCounter,
    store: ccr.Store,
    files: FileSource | None = None,
    cwd: str | None = None,
) -> tuple[list[Attachment], list[SkippedEntry]]:
    return build_file_attachments(
        snapshot,
        state or SessionState(),
        tail or [],
        budgets=_claude_codes_rule(budgets or Budgets()),
        counter=counter,
        store=store,
        files=files or DiskFiles(),
        cwd=cwd,
    )


def _claude_codes_rule(budgets: Budgets) -> Budgets:
    """These tests pin Claude Code's rule (recent, 5 files of 5,000 tokens; the default is 12 of 1,500)
    except for what they set themselves."""
    card: dict[str, object] = {"max_files": 5, "file_tokens": 5_000, "selection": FileSelection(strategy="recent")}
    return budgets.model_copy(update={k: v for k, v in card.items() if k not in budgets.model_fields_set})


def reasons(skipped: list[SkippedEntry]) -> dict[str | None, str]:
    return {s.path: s.reason.split(":", 1)[0] for s in skipped}


def test_the_sixth_most_recent_file_is_excluded(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entries = [write_file(f"f{i}.py", f"x = {i}\n", at=float(i)) for i in range(6)]
    attached, skipped = build({e.path: e for e in entries}, counter=counter, store=store)
    assert [a.entries[0].path for a in attached] == [entries[i].path for i in (5, 4, 3, 2, 1)]
    assert reasons(skipped) == {entries[0].path: "beyond_max_files"}


def test_a_file_of_5001_tokens_is_cut_to_5000_with_a_resolvable_tail(
    tmp_path: Path, counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    content = text_of_tokens(counter, 5_001)
    path = tmp_path / "big.txt"
    path.write_bytes(content.encode("utf-8"))
    entry = ReadFileEntry(path=str(path), content=content, timestamp=1.0)
    attached, skipped = build({entry.path: entry}, counter=counter, store=store)
    assert skipped == []
    [attachment] = attached
    [report] = attachment.entries
    text = attachment.message.text()
    assert counter.count_text(text) == attachment.tokens == report.tokens <= 5_000
    assert report.truncated and report.handle is not None
    assert ccr.marker(report.handle) in text
    head = shown_content(text)
    assert (head.encode("utf-8") + store.get(report.handle)) == path.read_bytes()
    assert head.endswith("\n")


def test_a_file_that_fits_is_shown_whole_without_a_handle(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    entry = write_file("small.py", lines(20), at=1.0)
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store)
    assert shown_content(attachment.message.text()) == lines(20)
    assert attachment.entries[0].handle is None and not attachment.entries[0].truncated
    assert "<<ccr:" not in attachment.message.text()
    assert store.stats().entries == 0


def test_a_file_over_the_running_total_is_skipped_and_later_files_are_still_checked(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    """Claude Code's budget filter keeps checking after a miss: a small file after a big one still fits."""
    big = [write_file(f"big{i}.py", lines(400, f"b{i}"), at=10.0 - i) for i in range(3)]
    tiny = write_file("tiny.py", "x = 1\n", at=1.0)
    budgets = Budgets(file_tokens=3_000, files_total=7_000)
    snapshot = {e.path: e for e in [*big, tiny]}
    attached, skipped = build(snapshot, counter=counter, store=store, budgets=budgets)
    assert [a.entries[0].path for a in attached] == [big[0].path, big[1].path, tiny.path]
    assert sum(a.tokens for a in attached) <= 7_000
    assert reasons(skipped) == {big[2].path: "over_total_budget"}
    assert store.stats().entries == 2, "a rejected candidate leaves no tail behind"


def test_each_exclusion_rule_names_its_reason(
    tmp_path: Path, write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    plan = write_file("notes/plan.md", "# plan\n", at=9.0)
    other_plan = write_file(".claude/plans/old.md", "# old plan\n", at=8.0)
    memory = write_file("CLAUDE.md", "Be nice.\n", at=7.0)
    rule = write_file(".claude/rules/style.md", "Tabs.\n", at=6.0)
    listed_memory = write_file("docs/AGENT_NOTES.md", "notes\n", at=5.5)
    in_tail = write_file("src/app.py", "app = 1\n", at=5.0)
    kept = write_file("src/lib.py", "lib = 1\n", at=4.0)
    state = SessionState(
        cwd=str(tmp_path),
        plan=Plan(path=plan.path, content="# plan\n"),
        memory_paths=["docs/AGENT_NOTES.md"],
    )
    tail = [Message(role="assistant", content=[ToolUseBlock(id="t1", name="Read", input={"file_path": "src/app.py"})])]
    snapshot = {e.path: e for e in [plan, other_plan, memory, rule, listed_memory, in_tail, kept]}
    attached, skipped = build(snapshot, state, tail, counter=counter, store=store)
    assert [a.entries[0].path for a in attached] == [kept.path]
    assert reasons(skipped) == {
        plan.path: "plan_file",
        other_plan.path: "plan_file",
        memory.path: "memory_file",
        rule.path: "memory_file",
        listed_memory.path: "memory_file",
        in_tail.path: "read_in_tail",
    }


def test_excluded_files_do_not_use_up_the_five_slots(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    memory = write_file("CLAUDE.md", "m\n", at=100.0)
    entries = [write_file(f"f{i}.py", f"x = {i}\n", at=float(i)) for i in range(5)]
    attached, _ = build({e.path: e for e in [memory, *entries]}, counter=counter, store=store)
    assert len(attached) == 5


def test_a_deleted_file_is_skipped_and_named(write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store) -> None:
    gone = write_file("gone.py", "x = 1\n", at=2.0)
    kept = write_file("kept.py", "y = 2\n", at=1.0)
    Path(gone.path).unlink()
    attached, skipped = build({gone.path: gone, kept.path: kept}, counter=counter, store=store)
    assert [a.entries[0].path for a in attached] == [kept.path]
    assert reasons(skipped) == {gone.path: "unavailable"}


def test_a_changed_file_is_re_read_and_the_change_is_noted(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    changed = write_file("changed.py", "new = 2\n", at=2.0, seen="old = 1\n")
    same = write_file("same.py", "same = 1\n", at=1.0)
    [first, second], _ = build({changed.path: changed, same.path: same}, counter=counter, store=store)
    assert shown_content(first.message.text()) == "new = 2\n"
    assert "has changed since it was read" in first.message.text()
    assert "has changed" not in second.message.text()


def test_a_stale_entry_is_reported_as_changed(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entry = write_file("s.py", "s = 1\n", at=1.0).model_copy(update={"stale": True})
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store)
    assert "has changed since it was read" in attachment.message.text()


def test_a_partial_read_is_restored_as_the_same_lines_and_compared_as_a_slice(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    full = write_file("p.py", "a\nb\nc\nd\ne\n", at=1.0)
    entry = full.model_copy(update={"content": "b\nc\n", "offset": 2, "limit": 2})
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store)
    text = attachment.message.text()
    assert shown_content(text) == "b\nc\n"
    assert "lines 2 to 3" in text and "has changed" not in text
    Path(entry.path).write_text("a\nB\nc\nd\ne\n")
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store)
    assert shown_content(attachment.message.text()) == "B\nc\n"
    assert "has changed" in attachment.message.text()


def test_every_message_is_a_meta_user_system_reminder(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entry = write_file("m.py", "m = 1\n", at=1.0)
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store)
    message = attachment.message
    assert message.role == "user" and message.is_meta
    text = message.text()
    assert text.startswith("<system-reminder>\n") and text.endswith("\n</system-reminder>")
    assert f'<file-content path="{entry.path}">' in text and text.count(entry.path) == 1, "the path once"
    assert "You read this file before the compaction" in text


def test_a_replay_serves_recorded_content_and_says_so(
    counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    recorded = RecordedFiles()
    recorded.record_read("/repo/a.py", "a = 1\nb = 2\n")
    recorded.apply_edit("/repo/a.py", "b = 2", "b = 3")
    entry = ReadFileEntry(path="/repo/a.py", content="a = 1\nb = 2\n", timestamp=1.0)
    missing = ReadFileEntry(path="/repo/never-shown.py", content="?", timestamp=0.5)
    [attachment], skipped = build(
        {entry.path: entry, missing.path: missing}, counter=counter, store=store, files=recorded
    )
    text = attachment.message.text()
    assert shown_content(text) == "a = 1\nb = 3\n"
    assert "replay of a recorded session" in text and "has changed" in text and text.count("replay") == 1
    assert [(s.path, s.reason) for s in skipped] == [
        (missing.path, "unavailable: deleted or not readable in the recorded session")
    ]


def test_a_replay_says_so_once_in_the_first_file_it_restores(counter: TiktokenCounter, store: ccr.Store) -> None:
    recorded = RecordedFiles()
    entries = []
    for n in range(3):
        recorded.record_read(f"/repo/m{n}.py", f"m = {n}\n")
        entries.append(ReadFileEntry(path=f"/repo/m{n}.py", content=f"m = {n}\n", timestamp=float(n)))
    attached, _ = build({e.path: e for e in entries}, counter=counter, store=store, files=recorded)
    texts = [a.message.text() for a in attached]
    assert len(texts) == 3 and "replay of a recorded session" in texts[0]
    assert not any("replay" in t for t in texts[1:]), "said once, not once per file"


def test_a_refusing_store_fails_closed(write_file: WriteFile, counter: TiktokenCounter) -> None:
    entry = write_file("big.py", lines(2_000), at=1.0)
    tiny_store = ccr.open_store(":memory:", max_bytes=16)
    with pytest.raises(ccr.BudgetExceeded):
        build({entry.path: entry}, counter=counter, store=tiny_store)


def test_a_budget_smaller_than_the_notes_skips_the_file(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store
) -> None:
    entry = write_file("x.py", lines(50), at=1.0)
    attached, skipped = build({entry.path: entry}, counter=counter, store=store, budgets=Budgets(file_tokens=10))
    assert attached == [] and reasons(skipped) == {entry.path: "over_item_budget"}


def test_a_single_huge_line_is_cut_inside_the_line(
    write_file: WriteFile, counter: TiktokenCounter, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    content = "var a=" + ",".join(str(i) for i in range(20_000)) + ";"
    entry = write_file("min.js", content, at=1.0)
    [attachment], _ = build({entry.path: entry}, counter=counter, store=store, budgets=Budgets(file_tokens=500))
    report = attachment.entries[0]
    assert attachment.tokens <= 500 and report.handle is not None
    head = shown_content(attachment.message.text()).removesuffix("\n")
    assert head and head + store.get(report.handle).decode() == content


_file_contents = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=80), min_size=0, max_size=60
).map(lambda rows: "\n".join(rows))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    contents=st.lists(_file_contents, min_size=1, max_size=8),
    max_files=st.integers(1, 6),
    file_tokens=st.integers(1, 600),
    files_total=st.integers(1, 1_500),
)
def test_no_input_yields_file_attachments_over_budget(
    tmp_path_factory: pytest.TempPathFactory,
    counter: TiktokenCounter,
    shown_content: Callable[[str], str],
    contents: list[str],
    max_files: int,
    file_tokens: int,
    files_total: int,
) -> None:
    folder = tmp_path_factory.mktemp("files")
    snapshot: dict[str, ReadFileEntry] = {}
    for i, content in enumerate(contents):
        path = folder / f"f{i}.txt"
        path.write_bytes(content.encode("utf-8"))
        snapshot[str(path)] = ReadFileEntry(path=str(path), content=content, timestamp=float(i))
    budgets = Budgets(max_files=max_files, file_tokens=file_tokens, files_total=files_total)
    store = ccr.open_store(":memory:")
    attached, skipped = build(snapshot, counter=counter, store=store, budgets=budgets)
    assert len(attached) <= max_files
    assert sum(counter.count_text(a.message.text()) for a in attached) <= files_total
    for attachment in attached:
        [report] = attachment.entries
        assert counter.count_text(attachment.message.text()) == report.tokens <= file_tokens
        if report.truncated:
            assert report.handle is not None and store.contains(report.handle)
            original = Path(report.path or "").read_bytes()
            head, tail = shown_content(attachment.message.text()), store.get(report.handle)
            assert original in (head.encode() + tail, head.removesuffix("\n").encode() + tail)
    named = {a.entries[0].path for a in attached} | {s.path for s in skipped}
    assert named == set(snapshot)


class MarkerSensitiveCounter:
    """Counts characters / 4, plus a surcharge for every marker that is not the search stand-in.

    It makes the real handle "tokenize" longer than the stand-in named while
    searching, which real tokenizers do now and then by a token or two.
    """

    name = "marker-sensitive"

    def __init__(self, surcharge: int, costly: str = "") -> None:
        self.surcharge = surcharge
        self.costly = costly

    def count_text(self, text: str) -> int:
        stand_in = ccr.handle_for(b"")
        extra = 0
        for handle in ccr.find_handles(text):
            if handle != stand_in:
                extra += self.surcharge
            if self.costly and handle == self.costly:
                extra += 10 * self.surcharge
        return -(-len(text) // 4) + extra

    def count_message(self, message: Message) -> int:
        return self.count_text(message.text())


def test_a_real_handle_longer_than_the_stand_in_is_searched_again(
    write_file: WriteFile, store: ccr.Store, shown_content: Callable[[str], str]
) -> None:
    entry = write_file("long.py", lines(500), at=1.0)
    counter = MarkerSensitiveCounter(surcharge=40)
    [attachment], _ = build_file_attachments(
        {entry.path: entry},
        SessionState(),
        [],
        budgets=Budgets(file_tokens=800),
        counter=counter,
        store=store,
        files=DiskFiles(),
    )
    [report] = attachment.entries
    assert report.handle is not None and report.tokens <= 800
    assert counter.count_text(attachment.message.text()) == report.tokens
    head = shown_content(attachment.message.text())
    assert head.encode() + store.get(report.handle) == lines(500).encode()


class RenamingStore:
    """A store seam that keeps the bytes but answers with a handle of its own choosing."""

    def __init__(self, handle: str) -> None:
        self.handle = handle
        self.puts: list[bytes] = []

    def put(self, data: bytes, **_: object) -> str:
        self.puts.append(data)
        return self.handle


def test_a_store_handle_that_no_longer_fits_raises_instead_of_going_over_budget(write_file: WriteFile) -> None:
    odd = "ccr_" + "f" * 32
    entry = write_file("long.py", lines(500), at=1.0)
    with pytest.raises(TailNotStored):
        build_file_attachments(
            {entry.path: entry},
            SessionState(),
            [],
            budgets=Budgets(file_tokens=800),
            counter=MarkerSensitiveCounter(surcharge=5, costly=odd),
            store=RenamingStore(odd),
            files=DiskFiles(),
        )


def test_a_cut_tail_is_stored_under_its_session_so_gc_by_session_finds_it(
    tmp_path: Path, counter: TiktokenCounter, store: ccr.Store
) -> None:
    content = text_of_tokens(counter, 6_000)
    path = tmp_path / "big.txt"
    path.write_bytes(content.encode("utf-8"))
    entry = ReadFileEntry(path=str(path), content=content, timestamp=1.0)
    [attachment], _ = build({entry.path: entry}, SessionState(session_id="s-1"), counter=counter, store=store)
    handle = attachment.entries[0].handle
    assert handle is not None
    metadata = store.record(handle).metadata or {}
    assert metadata["kind"] == "file_tail" and metadata["session_id"] == "s-1" and metadata["path"] == str(path)
