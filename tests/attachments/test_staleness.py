"""Staleness: a read file changed on disk is marked, so the next restoration says so."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from attachments import StalenessWatcher, WatchError, mark_stale
from compactor.core.session import ReadFileEntry, SessionState

WAIT = 30.0
"""Upper bound for the watcher to report; the test goes on as soon as it does."""


def read(state: SessionState, path: Path) -> None:
    state.record_read(ReadFileEntry(path=str(path), content=path.read_text(), timestamp=1.0))


def test_only_files_whose_content_differs_are_marked(tmp_path: Path) -> None:
    same, changed, gone = (tmp_path / n for n in ("same.py", "changed.py", "gone.py"))
    for p in (same, changed, gone):
        p.write_text(f"{p.name}\n")
    state = SessionState()
    for p in (same, changed, gone):
        read(state, p)
    changed.write_text("different\n")
    gone.unlink()
    marked = mark_stale(state, [str(same), str(changed), str(gone), str(tmp_path / "unread.py")])
    assert marked == [str(changed), str(gone)]
    assert [e.stale for e in state.read_files.values()] == [False, True, True]


def test_relative_entries_match_absolute_changes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    state = SessionState(cwd=str(tmp_path))
    state.record_read(ReadFileEntry(path="a.py", content="a\n", timestamp=1.0))
    (tmp_path / "a.py").write_text("b\n")
    assert mark_stale(state, [str(tmp_path / "a.py")]) == ["a.py"]


def test_a_recorded_path_the_file_system_cannot_name_does_not_stop_marking(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("a\n")
    state = SessionState(cwd=str(tmp_path))
    state.record_read(ReadFileEntry(path="bad\x00name.py", content="x\n", timestamp=1.0))
    state.record_read(ReadFileEntry(path="a.py", content="a\n", timestamp=2.0))
    (tmp_path / "a.py").write_text("b\n")
    assert mark_stale(state, [str(tmp_path / "a.py"), "bad\x00name.py"]) == ["a.py"]
    assert StalenessWatcher(state).paths == [str(tmp_path.resolve())]


def test_a_single_root_given_alone_is_watched_as_one_folder(tmp_path: Path) -> None:
    assert StalenessWatcher(SessionState(), roots=str(tmp_path)).paths == [str(tmp_path)]
    assert StalenessWatcher(SessionState(), roots=tmp_path).paths == [str(tmp_path)]


def test_the_watcher_marks_a_file_edited_on_disk(tmp_path: Path) -> None:
    target = tmp_path / "watched.py"
    target.write_text("before\n")
    state = SessionState()
    read(state, target)
    marked = threading.Event()
    with StalenessWatcher(state, on_stale=lambda keys: marked.set(), debounce_ms=50) as watcher:
        assert watcher.paths == [str(tmp_path.resolve())]
        target.write_text("after\n")
        assert marked.wait(WAIT), f"no change seen (error: {watcher.error})"
    assert state.read_files[str(target)].stale


def test_the_watcher_with_roots_sees_nested_folders(tmp_path: Path) -> None:
    nested = tmp_path / "pkg" / "mod.py"
    nested.parent.mkdir()
    nested.write_text("x\n")
    state = SessionState()
    read(state, nested)
    marked = threading.Event()
    with StalenessWatcher(state, roots=[tmp_path], on_stale=lambda keys: marked.set(), debounce_ms=50):
        nested.write_text("y\n")
        assert marked.wait(WAIT)
    assert state.read_files[str(nested)].stale


def test_nothing_to_watch_is_an_error() -> None:
    with pytest.raises(WatchError):
        StalenessWatcher(SessionState()).start()
