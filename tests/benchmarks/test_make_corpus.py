"""make_corpus: tagged replicas that are sessions of their own, with nothing to share between copies."""

from __future__ import annotations

from pathlib import Path

import make_corpus  # from benchmarks/ (conftest.py)
import pytest

from ccr import open_store
from compactor.claude_code.replay import replay_transcript
from compactor.claude_code.transcript import Transcript, read_transcript
from compactor.core.config import Settings
from compactor.core.tokens import block_texts

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "fixtures" / "sessions" / "long.jsonl"


def texts(transcript: Transcript) -> set[str]:
    """Every text a counter would count in the session's messages."""
    return {
        text
        for entry in transcript.entries
        if entry.message is not None
        for text in block_texts(entry.message)[0]
        if text
    }


def recorded_compactions(transcript: Transcript) -> int:
    store = open_store(":memory:")
    try:
        return replay_transcript(transcript, settings=Settings(), store=store, at="recorded").totals.compactions
    finally:
        store.close()


def test_each_copy_is_a_session_of_its_own_with_the_originals_shape_and_no_text_of_another_copy(
    tmp_path: Path,
) -> None:
    copies = make_corpus.make_corpus(tmp_path / "corpus", 2, sources=[LONG])
    original = read_transcript(LONG, subagents=False, state=False)
    first, second = (read_transcript(p, subagents=False, state=False) for p in copies)
    assert len({original.session_id, first.session_id, second.session_id}) == 3
    for copy in (first, second):
        assert len(copy.entries) == len(original.entries)
        assert len(copy.compactions) == len(original.compactions)
    assert texts(first) and not texts(first) & texts(second)
    assert recorded_compactions(first) == recorded_compactions(original) > 0


def test_a_corpus_inside_the_repository_is_refused() -> None:
    with pytest.raises(ValueError, match="inside the repository"):
        make_corpus.make_corpus(ROOT / "benchmarks" / "corpus", 1, sources=[LONG])
    assert not (ROOT / "benchmarks" / "corpus").exists()
