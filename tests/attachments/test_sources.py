"""File sources: the disk now, or what a recorded session read and wrote."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attachments import DiskFiles, FileSource, RecordedFiles, slice_lines


def test_disk_files_read_utf8_and_answer_none_when_missing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"caf\xc3\xa9\r\nbad \xff\n")
    files = DiskFiles()
    assert files.read(str(tmp_path / "a.txt")) == "café\r\nbad \ufffd\n"
    assert files.read(str(tmp_path / "missing.txt")) is None
    assert files.read(str(tmp_path)) is None
    assert isinstance(files, FileSource) and files.origin == "disk"


def test_disk_files_take_relative_paths_from_their_root(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text("m\n")
    assert DiskFiles(tmp_path).read("src/m.py") == "m\n"
    assert DiskFiles(tmp_path).read_slice("src/m.py", 1, 1) == "m\n"


def test_slice_lines_is_one_based_like_the_read_tool() -> None:
    text = "1\n2\n3\n4\n"
    assert slice_lines(text, 2, 2) == "2\n3\n"
    assert slice_lines(text, None, None) == text
    assert slice_lines(text, 0, 1) == "1\n"
    assert slice_lines(text, 9, 3) == ""


def test_writes_and_edits_are_replayed_in_order() -> None:
    files = RecordedFiles()
    assert files.origin == "recorded" and isinstance(files, FileSource)
    files.record_write("/r/a.py", "x = 1\ny = 1\n")
    assert files.apply_edit("/r/a.py", "= 1", "= 2", replace_all=True)
    assert files.read("/r/a.py") == "x = 2\ny = 2\n"
    assert files.apply_edit("/r/a.py", "y = 2\n", "y = 2\nz = 3\n")
    assert files.read("/r/a.py") == "x = 2\ny = 2\nz = 3\n"
    assert files.read_slice("/r/a.py", 3, 5) == "z = 3\n"


def test_an_edit_that_does_not_apply_forgets_the_file() -> None:
    files = RecordedFiles()
    files.record_read("/r/a.py", "a\n")
    assert not files.apply_edit("/r/a.py", "nowhere", "x")
    assert files.read("/r/a.py") is None and "/r/a.py" not in files


def test_an_edit_of_an_unseen_file_is_ignored() -> None:
    files = RecordedFiles()
    assert not files.apply_edit("/r/unseen.py", "a", "b")
    assert files.read("/r/unseen.py") is None


def test_a_partial_read_serves_its_lines_but_not_the_whole_file() -> None:
    files = RecordedFiles()
    files.record_read("/r/big.py", "l10\nl11\nl12", offset=10)
    assert files.read("/r/big.py") is None
    assert files.read_slice("/r/big.py", 10, 3) == "l10\nl11\nl12\n"
    assert files.read_slice("/r/big.py", 11, None) == "l11\nl12\n"
    assert files.read_slice("/r/big.py", 9, 2) is None
    assert files.read_slice("/r/big.py", 1, None) is None


def test_partial_reads_that_cover_the_file_make_it_whole() -> None:
    files = RecordedFiles()
    files.record_read("/r/f.py", "a\nb", total_lines=4)
    assert files.read("/r/f.py") is None
    files.record_read("/r/f.py", "c\nd", offset=3, total_lines=4)
    assert files.read("/r/f.py") == "a\nb\nc\nd"


def test_edits_apply_to_partially_known_files_and_shift_later_lines() -> None:
    files = RecordedFiles()
    files.record_read("/r/p.py", "one\ntwo\n", offset=5)
    files.record_read("/r/p.py", "nine\n", offset=9)
    assert files.apply_edit("/r/p.py", "two\n", "two\nthree\n")
    assert files.read_slice("/r/p.py", 5, 3) == "one\ntwo\nthree\n"
    assert files.read_slice("/r/p.py", 10, 1) == "nine\n"


def test_forget_drops_a_file() -> None:
    files = RecordedFiles()
    files.record_write("/r/a", "a")
    files.forget("/r/a")
    assert files.read("/r/a") is None


def test_an_edit_carrying_the_original_file_makes_a_partly_known_file_whole() -> None:
    files = RecordedFiles()
    files.record_read("/r/m.py", "b = 2\n", offset=2)
    assert files.read("/r/m.py") is None
    assert files.apply_edit("/r/m.py", "b = 2", "b = 3", original="a = 1\nb = 2\nc = 3\n")
    assert files.read("/r/m.py") == "a = 1\nb = 3\nc = 3\n"


def test_disk_files_answer_none_for_a_path_the_file_system_cannot_name() -> None:
    files = DiskFiles()
    assert files.read("bad\x00name.py") is None
    assert files.read_slice("bad\x00name.py", 1, 2) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_disk_files_do_not_block_on_a_named_pipe(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert DiskFiles().read(str(pipe)) is None


def test_disk_files_refuse_folders_and_devices(tmp_path: Path) -> None:
    files = DiskFiles()
    assert files.read(str(tmp_path)) is None
    assert files.read(os.devnull) is None


def test_a_read_cut_short_by_its_limit_is_not_taken_for_the_whole_file() -> None:
    files = RecordedFiles()
    files.record_read("/r/long.py", "1\n2\n3", limit=3)
    assert files.read("/r/long.py") is None
    assert files.read_slice("/r/long.py", 1, 3) == "1\n2\n3\n"
    files.record_read("/r/short.py", "1\n2\n", limit=10)
    assert files.read("/r/short.py") == "1\n2\n"


def test_a_partial_reread_of_a_whole_file_keeps_it_whole_and_a_changed_one_changes_its_lines() -> None:
    files = RecordedFiles()
    files.record_read("a.py", "one\ntwo\nthree\nfour\n")
    files.record_read("a.py", "two\nthree", offset=2, total_lines=5)  # as shown: the same lines
    assert files.read("a.py") == "one\ntwo\nthree\nfour\n"
    files.record_read("a.py", "TWO\nthree", offset=2, total_lines=5)  # the file changed since
    assert files.read("a.py") == "one\nTWO\nthree\nfour\n"
    files.record_read("a.py", "one\nTWO", offset=1, total_lines=3)  # and it is shorter now
    assert files.read("a.py") == "one\nTWO\nthree\n"
