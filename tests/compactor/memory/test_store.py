"""The memory store's rules, on a real SQLite file: remember, recall, supersede, history, forget."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from ccr import HandleNotFound, open_store
from compactor.core.tokens import TiktokenCounter
from compactor.memory import (
    MAX_TEXT_BYTES,
    AlreadyStored,
    BrokenChain,
    InvalidRequest,
    InvalidText,
    MemoryDB,
    MemoryNotFound,
    NotCurrent,
    SupersededText,
    TextTooLarge,
    memory_id,
    open_memory,
)
from compactor.memory._schema import MIGRATIONS
from compactor.memory.errors import MemoryConfigError, NotAStore, StoreError, UnsafeStorePath
from compactor.memory.store import DEFAULT_HIT_TOKENS, default_memory_path

COUNTER = TiktokenCounter()

PAYMENTS = "The payments service retries failed charges three times, then marks the invoice unpaid"
DEPLOYS = "Deploys go through the staging cluster first; production needs a green canary"
LINTER = "The linter config lives in pyproject.toml; ruff replaced flake8 in March"


def test_an_id_is_mem_and_the_first_8_bytes_of_the_texts_sha256() -> None:
    assert memory_id(PAYMENTS) == "mem_" + hashlib.sha256(PAYMENTS.encode()).hexdigest()[:16]


def test_remembering_the_same_text_twice_is_one_memory_that_keeps_its_first_created_at(db: MemoryDB) -> None:
    first = db.remember(PAYMENTS)
    again = db.remember(PAYMENTS)
    assert first.created and not again.created
    assert again.id == first.id == memory_id(PAYMENTS)
    assert again.created_at == first.created_at == db.get(first.id).created_at
    assert len(db.history(first.id)) == 1


@pytest.mark.parametrize("text", ["", "   ", "\n\t \r\n"])
def test_empty_or_whitespace_text_is_refused(db: MemoryDB, text: str) -> None:
    with pytest.raises(InvalidText) as caught:
        db.remember(text)
    assert caught.value.exit_code == 65


def test_text_over_256_kib_is_refused_and_256_kib_exactly_is_kept(db: MemoryDB) -> None:
    exactly = "é" * (MAX_TEXT_BYTES // 2)
    assert len(exactly.encode()) == MAX_TEXT_BYTES
    assert db.remember(exactly).created
    with pytest.raises(TextTooLarge) as caught:
        db.remember(exactly + "x")
    assert (caught.value.error_id, caught.value.exit_code) == ("memory_too_large", 65)


def test_text_that_is_not_utf8_is_refused(db: MemoryDB) -> None:
    with pytest.raises(InvalidText):
        db.remember("half a pair \ud800")


def test_text_stored_only_as_a_superseded_version_is_refused_and_says_so(db: MemoryDB) -> None:
    old = db.remember(DEPLOYS).id
    new = db.supersede(old, DEPLOYS + " (and a manual approval)").id
    with pytest.raises(SupersededText) as caught:
        db.remember(DEPLOYS)
    assert new in str(caught.value) and caught.value.exit_code == 65
    assert [v.id for v in db.history(old)] == [old, new]


def test_remember_many_stores_all_or_nothing(db: MemoryDB) -> None:
    with pytest.raises(InvalidText):
        db.remember_many([PAYMENTS, " "])
    assert db.recall("payments") == []
    done = db.remember_many([PAYMENTS, DEPLOYS, PAYMENTS])
    assert [d.id for d in done] == [memory_id(PAYMENTS), memory_id(DEPLOYS), memory_id(PAYMENTS)]
    assert [d.created for d in done] == [True, True, True]


# -- recall ---------------------------------------------------------------------------------


def test_recall_ranks_the_matching_memory_first_with_an_inferred_token_count(db: MemoryDB) -> None:
    db.remember_many([PAYMENTS, DEPLOYS, LINTER])
    hits = db.recall("why did the invoice payments fail")
    assert [h.id for h in hits] == [memory_id(PAYMENTS)]
    hit = hits[0]
    assert hit.text == PAYMENTS
    assert hit.tokens_added == COUNTER.count_text(PAYMENTS)
    assert hit.basis == "inferred" and hit.recovery_handle is None
    assert hit.score >= 0.1


def test_an_off_topic_query_recalls_nothing(db: MemoryDB) -> None:
    db.remember_many([PAYMENTS, DEPLOYS, LINTER])
    assert db.recall("kubernetes helm chart values") == []
    assert db.recall("the and of it") == []


def test_a_question_recalls_by_its_content_words_not_by_where_or_what(db: MemoryDB) -> None:
    key = "The deploy key lives in vault under ops/deploy"
    coffee = "where to find the good coffee near the office"
    db.remember_many([key, coffee, "what the linter checks"])
    assert [h.text for h in db.recall("where is the deploy key")] == [key]
    assert db.recall("where is it") == [] and db.recall("what") == []


def test_a_database_indexed_with_other_stop_words_is_reindexed_when_opened(db_path: Path, ccr_path: Path) -> None:
    coffee = "where to find the good coffee near the office"
    with open_memory(db_path, recovery=ccr_path) as db:
        db.remember(coffee)
    # As the previous version left it: "where" indexed as a term, "office" indexed as nothing.
    _corrupt(db_path, "UPDATE postings SET term = 'where' WHERE term = 'office'")
    _corrupt(db_path, "UPDATE recall_index SET stop_words = ''")
    with pytest.raises(StoreError, match="reindex"):
        open_memory(db_path, recovery=ccr_path, readonly=True)
    with open_memory(db_path, recovery=ccr_path) as db:
        assert [h.text for h in db.recall("office")] == [coffee]
        assert db.recall("where") == []
    with open_memory(db_path, recovery=ccr_path, readonly=True) as reader:
        assert [h.text for h in reader.recall("coffee office")] == [coffee]


def test_hits_below_the_threshold_are_dropped(db: MemoryDB) -> None:
    db.remember_many([PAYMENTS, DEPLOYS])
    score = db.recall("payments")[0].score
    assert db.recall("payments", threshold=score + 1e-9) == []
    assert len(db.recall("payments", threshold=score)) == 1


def test_equal_scores_are_ordered_by_id(db: MemoryDB) -> None:
    texts = [f"cache warmup note {word}" for word in ("alpha", "beta", "gamma", "delta")]
    db.remember_many(texts)
    hits = db.recall("cache warmup")
    assert len({h.score for h in hits}) == 1
    assert [h.id for h in hits] == sorted(memory_id(t) for t in texts)


def test_limit_caps_the_number_of_hits(db: MemoryDB) -> None:
    db.remember_many([f"retry policy note number {i}" for i in range(8)])
    assert len(db.recall("retry policy")) == 5
    assert len(db.recall("retry policy", limit=2)) == 2
    for bad in (0, -1, True):
        with pytest.raises(InvalidRequest):
            db.recall("retry", limit=bad)


def test_a_later_hit_that_does_not_fit_is_passed_over_for_a_smaller_one(db: MemoryDB) -> None:
    best = "deploy rollback deploy rollback steps"
    middle = "deploy rollback " + " ".join(f"step{i}" for i in range(200))
    small = "deploy notes"
    db.remember_many([best, middle, small])
    ranked = [h.text for h in db.recall("deploy rollback", token_budget=0)]
    assert ranked == [best, middle, small]
    budget = COUNTER.count_text(best) + COUNTER.count_text(small)
    assert [h.text for h in db.recall("deploy rollback", token_budget=budget)] == [best, small]


def test_an_oversized_first_hit_is_one_head_within_the_budget_whose_handle_recovers_the_exact_bytes(
    db: MemoryDB, ccr_path: Path
) -> None:
    lines = [f"payments ledger entry {i}: refund 😀 of {i * 7} cents, café ünïcode\n" for i in range(3_000)]
    big = "".join(lines)[: MAX_TEXT_BYTES // 2]
    assert len(big.encode()) <= MAX_TEXT_BYTES
    db.remember(big)
    db.remember("payments ledger summary")
    hits = db.recall("payments ledger refund", token_budget=500)
    assert len(hits) == 1
    head = hits[0]
    assert head.id == memory_id(big)
    assert big.startswith(head.text) and 0 < len(head.text) < len(big)
    assert head.tokens_added == COUNTER.count_text(head.text) <= 500
    assert head.recovery_handle is not None
    assert db.recover(head.recovery_handle) == big.encode("utf-8")
    with open_store(ccr_path) as store:
        assert store.get(head.recovery_handle) == big.encode("utf-8")


def test_a_long_hit_is_compressed_to_its_head_plus_a_handle_and_leaves_room_for_the_others(
    db: MemoryDB, ccr_path: Path
) -> None:
    long = "".join(f"rollout step {i}: drain node {i}, then cordon it and wait for the pods\n" for i in range(80))
    short = "rollout freeze on Fridays after 15:00"
    db.remember_many([long, short])
    assert 1_000 < COUNTER.count_text(long) < 1_900  # fits the 2,000 budget whole, but not the 500 of one hit
    hits = {h.id: h for h in db.recall("rollout")}
    assert set(hits) == {memory_id(long), memory_id(short)}
    head = hits[memory_id(long)]
    assert long.startswith(head.text) and head.text.endswith("\n")  # whole lines
    assert 0 < head.tokens_added == COUNTER.count_text(head.text) <= DEFAULT_HIT_TOKENS
    assert head.recovery_handle is not None and db.recover(head.recovery_handle) == long.encode()
    assert hits[memory_id(short)].text == short and hits[memory_id(short)].recovery_handle is None
    (whole,) = [h for h in db.recall("rollout", token_budget=0) if h.id == memory_id(long)]
    assert whole.text == long and whole.recovery_handle is None
    assert {h.text for h in db.recall("rollout", hit_tokens=None)} == {long, short}
    for bad in (0, -3, True, 2.5):
        with pytest.raises(InvalidRequest):
            db.recall("rollout", hit_tokens=bad)  # type: ignore[arg-type]


def test_budget_zero_is_unlimited_and_a_negative_budget_is_refused(db: MemoryDB) -> None:
    big = "payments " + " ".join(f"entry{i}" for i in range(5_000))
    db.remember(big)
    whole = db.recall("payments", token_budget=0)
    assert [h.text for h in whole] == [big] and whole[0].recovery_handle is None
    assert db.recall("payments")[0].recovery_handle is not None  # the default budget is 2,000
    with pytest.raises(InvalidRequest) as caught:
        db.recall("payments", token_budget=-1)
    assert caught.value.exit_code == 2


def test_an_empty_query_is_a_usage_error(db: MemoryDB) -> None:
    with pytest.raises(InvalidRequest):
        db.recall("  ")


def test_recover_of_an_unknown_handle_says_not_found(db: MemoryDB) -> None:
    with pytest.raises(HandleNotFound):
        db.recover("ccr_" + "0" * 32)


# -- supersede and history -------------------------------------------------------------------


def test_supersede_then_history_gives_the_chain_oldest_first_from_any_version(db: MemoryDB) -> None:
    v1 = db.remember("The API rate limit is 100 requests per minute").id
    v2 = db.supersede(v1, "The API rate limit is 500 requests per minute").id
    v3 = db.supersede(v2, "The API rate limit is 1000 requests per minute, burst 50").id
    for any_version in (v1, v2, v3):
        chain = db.history(any_version)
        assert [m.id for m in chain] == [v1, v2, v3]
    first, middle, last = db.history(v2)
    assert (first.supersedes, first.superseded_by) == (None, v2)
    assert (middle.supersedes, middle.superseded_by) == (v1, v3)
    assert (last.supersedes, last.superseded_by, last.valid_until) == (v2, None, None)
    assert first.valid_until == middle.valid_from and middle.valid_until == last.valid_from


def test_only_the_current_version_is_recalled(db: MemoryDB) -> None:
    old = db.remember("The API rate limit is 100 requests per minute").id
    new = db.supersede(old, "The API rate limit is 500 requests per minute").id
    assert [h.id for h in db.recall("API rate limit")] == [new]


def test_supersede_refuses_a_version_that_is_no_longer_current(db: MemoryDB) -> None:
    old = db.remember(DEPLOYS).id
    db.supersede(old, DEPLOYS + " v2")
    with pytest.raises(NotCurrent):
        db.supersede(old, DEPLOYS + " v3")


def test_supersede_refuses_the_same_text_and_text_already_stored(db: MemoryDB) -> None:
    old = db.remember(DEPLOYS).id
    db.remember(LINTER)
    with pytest.raises(AlreadyStored):
        db.supersede(old, DEPLOYS)
    with pytest.raises(AlreadyStored):
        db.supersede(old, LINTER)
    assert db.get(old).current


def test_supersede_of_an_unknown_or_malformed_id(db: MemoryDB) -> None:
    with pytest.raises(MemoryNotFound) as caught:
        db.supersede("mem_" + "0" * 16, "x")
    assert caught.value.exit_code == 66
    with pytest.raises(InvalidRequest):
        db.supersede("nope", "x")


def test_supersede_with_text_that_may_not_be_remembered_changes_nothing(db: MemoryDB) -> None:
    old = db.remember(DEPLOYS).id
    with pytest.raises(TextTooLarge):
        db.supersede(old, "x" * (MAX_TEXT_BYTES + 1))
    assert db.get(old).current and [h.id for h in db.recall("deploys staging")] == [old]


def _corrupt(path: Path, sql: str, *params: object) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def test_a_broken_chain_is_an_error_never_a_partial_answer(db: MemoryDB, db_path: Path) -> None:
    v1 = db.remember("version one of the fact").id
    v2 = db.supersede(v1, "version two of the fact").id
    _corrupt(db_path, "UPDATE memories SET supersedes = ? WHERE id = ?", "mem_" + "f" * 16, v2)
    with pytest.raises(BrokenChain) as caught:
        db.history(v2)
    assert caught.value.exit_code == 65
    with pytest.raises(BrokenChain):
        db.history(v1)  # v1 says v2 supersedes it, v2 disagrees


def test_a_cycle_is_an_error(db: MemoryDB, db_path: Path) -> None:
    v1 = db.remember("version one of the fact").id
    v2 = db.supersede(v1, "version two of the fact").id
    _corrupt(db_path, "UPDATE memories SET supersedes = ?, superseded_by = ? WHERE id = ?", v2, v2, v1)
    _corrupt(db_path, "UPDATE memories SET superseded_by = ? WHERE id = ?", v1, v2)
    with pytest.raises(BrokenChain, match="loops"):
        db.history(v1)


def test_history_of_an_unknown_id_is_not_found(db: MemoryDB) -> None:
    with pytest.raises(MemoryNotFound):
        db.history("mem_" + "1" * 16)


# -- forget ---------------------------------------------------------------------------------------


def test_forgetting_a_middle_version_links_its_neighbours(db: MemoryDB) -> None:
    v1 = db.remember("rate limit 100").id
    v2 = db.supersede(v1, "rate limit 500").id
    v3 = db.supersede(v2, "rate limit 1000").id
    assert db.forget(v2) is True
    chain = db.history(v3)
    assert [m.id for m in chain] == [v1, v3]
    assert chain[0].superseded_by == v3 and chain[1].supersedes == v1


def test_forgetting_the_current_version_does_not_revive_the_old_one(db: MemoryDB) -> None:
    v1 = db.remember("rate limit 100").id
    v2 = db.supersede(v1, "rate limit 500").id
    assert db.forget(v2)
    assert db.recall("rate limit") == []
    old = db.get(v1)
    assert not old.current and old.superseded_by is None
    assert [m.id for m in db.history(v1)] == [v1]
    with pytest.raises(SupersededText):
        db.remember("rate limit 100")


def test_forgetting_the_first_version_keeps_the_rest(db: MemoryDB) -> None:
    v1 = db.remember("rate limit 100").id
    v2 = db.supersede(v1, "rate limit 500").id
    assert db.forget(v1)
    assert [m.id for m in db.history(v2)] == [v2] and db.get(v2).supersedes is None
    assert [h.id for h in db.recall("rate limit")] == [v2]


def test_forgetting_an_unknown_id_answers_false(db: MemoryDB) -> None:
    assert db.forget("mem_" + "2" * 16) is False
    with pytest.raises(InvalidRequest):
        db.forget("mem_XYZ")


def test_a_forgotten_memory_is_not_recalled_and_may_be_remembered_again(db: MemoryDB) -> None:
    mid = db.remember(PAYMENTS).id
    assert db.forget(mid)
    assert db.recall("payments invoice") == []
    assert db.remember(PAYMENTS).created


# -- the file ---------------------------------------------------------------------------------------


def test_the_file_is_private_in_a_private_folder_and_survives_reopening(db_path: Path, ccr_path: Path) -> None:
    with open_memory(db_path, recovery=ccr_path) as db:
        mid = db.remember(PAYMENTS).id
    assert stat.S_IMODE(db_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(db_path.parent.stat().st_mode) == 0o700
    with open_memory(db_path, recovery=ccr_path) as again:
        assert again.get(mid).text == PAYMENTS
        conn = sqlite3.connect(db_path)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == MIGRATIONS[-1].version
        conn.close()


def test_a_symlinked_database_path_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    link.symlink_to(real)
    with pytest.raises(UnsafeStorePath):
        open_memory(link)
    assert not real.exists()


def test_another_programs_database_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    before = other.read_bytes()
    with pytest.raises(NotAStore):
        open_memory(other)
    assert other.read_bytes() == before
    text_file = tmp_path / "notes.txt"
    text_file.write_text("not a database")
    with pytest.raises(NotAStore):
        open_memory(text_file)


def test_the_default_path_is_the_env_file_else_memory_db_in_compactor_home(tmp_path: Path) -> None:
    home = {"COMPACTOR_HOME": str(tmp_path)}
    assert default_memory_path(home) == tmp_path / "memory.db"
    assert default_memory_path({**home, "COMPACTOR_MEMORY_DB": str(tmp_path / "x.db")}) == tmp_path / "x.db"
    with pytest.raises(MemoryConfigError):
        default_memory_path({"COMPACTOR_MEMORY_DB": " "})


def test_open_memory_without_a_path_uses_compactor_home(compactor_home: Path) -> None:
    with open_memory() as db:
        db.remember(PAYMENTS)
    assert (compactor_home / "memory.db").is_file()


def test_a_closed_database_refuses_calls(db_path: Path) -> None:
    db = open_memory(db_path)
    db.close()
    with pytest.raises(Exception) as caught:
        db.remember(PAYMENTS)
    assert getattr(caught.value, "error_id", None) == "store_error"


def test_a_hit_handle_lands_in_the_default_recovery_store_when_none_is_given(
    db_path: Path, compactor_home: Path
) -> None:
    big = "ledger " + " ".join(f"row{i}" for i in range(4_000))
    with open_memory(db_path) as db:
        db.remember(big)
        (hit,) = db.recall("ledger", token_budget=50)
    assert hit.recovery_handle is not None
    with open_store(compactor_home / "ccr.db") as store:
        assert store.get(hit.recovery_handle) == big.encode()
    assert os.path.exists(compactor_home / "ccr.db")


def test_a_database_from_a_newer_version_is_refused(db_path: Path) -> None:
    open_memory(db_path).close()
    _corrupt(db_path, "INSERT INTO schema_migrations VALUES (99, 'from the future', 'now')")
    with pytest.raises(Exception) as caught:
        open_memory(db_path)
    assert getattr(caught.value, "error_id", None) == "store_error" and "newer" in str(caught.value)


def test_reopening_applies_no_migration_twice(db_path: Path) -> None:
    for _ in range(3):
        open_memory(db_path).close()
    conn = sqlite3.connect(db_path)
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len(MIGRATIONS)
    conn.close()


@pytest.mark.parametrize("threshold", [-0.1, float("nan"), float("inf"), True])
def test_a_bad_threshold_is_a_usage_error(db: MemoryDB, threshold: float) -> None:
    with pytest.raises(InvalidRequest):
        db.recall("anything", threshold=threshold)


def edit_on_disk(db: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (same length) in the database file and its log, as an editor would."""
    assert len(old) == len(new)
    for path in db.parent.glob(db.name + "*"):
        data = path.read_bytes()
        path.write_bytes(data.replace(old, new))


VAULT = "key in vault alpha-zzzzzzzz"
EDITS = {
    "a letter": (b"zzzzzzzz", b"zzzzQzzz"),
    "a byte that is not UTF-8": (b"alpha-zz", b"alpha-\xffz"),
    "the first byte": (b"key in v", b"Key in v"),
    "a space": (b"in vault", b"in\x00vault"),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_a_memory_edited_on_disk_is_never_given_out_as_intact(tmp_path: Path, edit: str) -> None:
    from compactor.memory import DamagedMemory

    db_path = tmp_path / "m.db"
    with open_memory(db_path, recovery=":memory:") as db:
        damaged = db.remember(VAULT).id
        other = db.remember("vault key rotation is monthly").id
        old = db.remember("the vault moved to beta").id
        newer = db.supersede(old, "the vault moved to gamma").id
    edit_on_disk(db_path, *EDITS[edit])
    for readonly in (True, False):
        with open_memory(db_path, recovery=":memory:", readonly=readonly) as db:
            hits = db.recall("vault key alpha", token_budget=0)
            assert damaged not in [h.id for h in hits] and other in [h.id for h in hits]
            assert db.damaged == {damaged}
            for call in (lambda: db.get(damaged), lambda: db.history(damaged)):
                with pytest.raises(DamagedMemory, match=f"memory {damaged} is damaged") as refused:
                    call()
                assert refused.value.ids == [damaged] and refused.value.exit_code == 65
            assert [m.id for m in db.history(newer)] == [old, newer]  # the rest reads as before
    with open_memory(db_path, recovery=":memory:") as db:
        assert db.forget(damaged) is True
        assert db.remember(VAULT).created is True  # stored anew, whole
        assert next(h.id for h in db.recall("vault alpha")) == damaged
        assert db.damaged == set()


def test_a_superseded_version_edited_on_disk_breaks_its_history_loudly(tmp_path: Path) -> None:
    from compactor.memory import DamagedMemory

    db_path = tmp_path / "m.db"
    with open_memory(db_path, recovery=":memory:") as db:
        old = db.remember("deploys go through staging-one").id
        new = db.supersede(old, "deploys go through staging-two").id
    edit_on_disk(db_path, b"staging-one", b"staging-0ne")
    with open_memory(db_path, recovery=":memory:", readonly=True) as db:
        with pytest.raises(DamagedMemory, match=old):
            db.history(new)
        assert db.get(new).text == "deploys go through staging-two"
