"""Re-read coverage: of the files read before and again after, the share the attachments restored."""

from __future__ import annotations

import pytest

from attachments import reread_coverage


def test_the_fraction_counts_only_files_read_again() -> None:
    assert reread_coverage(["a", "b", "x"], ["a", "b", "c", "d"], ["a", "c", "e"]) == pytest.approx(0.5)


def test_all_or_nothing() -> None:
    assert reread_coverage(["a"], ["a"], ["a"]) == 1.0
    assert reread_coverage([], ["a"], ["a"]) == 0.0


def test_nothing_read_again_gives_none() -> None:
    assert reread_coverage(["a"], ["a", "b"], ["c"]) is None
    assert reread_coverage([], [], []) is None


def test_duplicates_do_not_skew_the_fraction() -> None:
    assert reread_coverage(["a", "a"], ["a", "a", "b"], ["b", "a", "b"]) == pytest.approx(0.5)
