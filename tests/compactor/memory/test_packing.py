"""Packing ranked memories into a budget: greedy, within the budget, one cut head at most."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.core.tokens import RoughCounter
from compactor.memory._packing import pack

COUNTER = RoughCounter()


def _stash_into(stashed: list[str]) -> Callable[[str], str]:
    def stash(text: str) -> str:
        stashed.append(text)
        return f"ccr_{len(stashed):032x}"

    return stash


texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3_000)


@settings(max_examples=150, deadline=None)
@given(st.lists(texts, min_size=1, max_size=8), st.integers(min_value=1, max_value=600), st.integers(1, 6))
def test_hits_never_exceed_the_budget_or_the_limit(candidates: list[str], budget: int, limit: int) -> None:
    stashed: list[str] = []
    ranked = [(f"mem_{i:016x}", 10.0 - i, text) for i, text in enumerate(candidates)]
    hits = pack(ranked, limit=limit, budget=budget, counter=COUNTER, stash=_stash_into(stashed))
    assert len(hits) <= limit
    assert sum(h.tokens_added for h in hits) <= budget
    assert all(h.tokens_added == COUNTER.count_text(h.text) for h in hits)
    cut = [h for h in hits if h.recovery_handle is not None]
    assert len(cut) <= 1 and len(stashed) == len(cut)
    if cut:
        (only,) = hits
        assert only.id == ranked[0][0] and ranked[0][2].startswith(only.text) and stashed == [ranked[0][2]]
    ids = [h.id for h in hits]
    assert ids == sorted(ids)  # rank order kept


def test_unlimited_takes_every_hit_whole() -> None:
    ranked = [(f"mem_{i:016x}", 1.0, "x" * 10_000) for i in range(3)]
    hits = pack(ranked, limit=5, budget=None, counter=COUNTER, stash=_stash_into([]))
    assert [h.text for h in hits] == ["x" * 10_000] * 3


def test_a_later_oversized_hit_is_skipped_not_cut() -> None:
    ranked = [("mem_a", 3.0, "small one"), ("mem_b", 2.0, "y" * 4_000), ("mem_c", 1.0, "tiny")]
    stashed: list[str] = []
    hits = pack(ranked, limit=5, budget=50, counter=COUNTER, stash=_stash_into(stashed))
    assert [h.id for h in hits] == ["mem_a", "mem_c"] and stashed == []


@settings(max_examples=150, deadline=None)
@given(
    st.lists(texts, min_size=1, max_size=8),
    st.integers(min_value=1, max_value=600),
    st.integers(1, 6),
    st.integers(min_value=1, max_value=300),
)
def test_with_a_cap_per_hit_every_long_hit_is_a_head_with_its_handle(
    candidates: list[str], budget: int, limit: int, hit_tokens: int
) -> None:
    stashed: list[str] = []
    ranked = [(f"mem_{i:016x}", 10.0 - i, text) for i, text in enumerate(candidates)]
    hits = pack(ranked, limit=limit, budget=budget, counter=COUNTER, stash=_stash_into(stashed), hit_tokens=hit_tokens)
    assert len(hits) <= limit
    assert sum(h.tokens_added for h in hits) <= budget
    whole = dict((mid, text) for mid, _, text in ranked)
    for hit in hits:
        assert hit.tokens_added == COUNTER.count_text(hit.text) <= max(min(hit_tokens, budget), 0)
        if hit.recovery_handle is None:
            assert hit.text == whole[hit.id]
        else:
            assert whole[hit.id].startswith(hit.text) and hit.text != whole[hit.id]
    assert stashed == [whole[h.id] for h in hits if h.recovery_handle is not None]


def test_a_long_later_hit_is_cut_to_the_cap_when_a_cap_is_given() -> None:
    ranked = [("mem_a", 3.0, "small one"), ("mem_b", 2.0, "y\n" * 400), ("mem_c", 1.0, "tiny")]
    stashed: list[str] = []
    hits = pack(ranked, limit=5, budget=200, counter=COUNTER, stash=_stash_into(stashed), hit_tokens=50)
    assert [h.id for h in hits] == ["mem_a", "mem_b", "mem_c"]
    assert hits[1].recovery_handle is not None and 0 < hits[1].tokens_added <= 50 and stashed == ["y\n" * 400]
