"""The tuning cache: keyed by session content, settings and version; whole entries or none."""

from __future__ import annotations

from pathlib import Path

from compactor.config import Settings
from compactor.tune import ResultCache, SessionResult, cache_key, default_cache_dir
from compactor.tune.metrics import Metrics


def result() -> SessionResult:
    return SessionResult(
        trial_id="t", session="s.jsonl", session_hash="h", metrics={"recorded": Metrics(compactions=2)}, wall_seconds=1.5
    )


def test_a_result_comes_back_as_it_was_put(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    cache.put("ab" * 32, result())
    assert cache.get("ab" * 32) == result()
    assert cache.get("cd" * 32) is None


def test_a_damaged_entry_reads_as_absent(tmp_path: Path) -> None:
    cache = ResultCache(tmp_path)
    cache.put("ab" * 32, result())
    (tmp_path / "ab" / f"{'ab' * 32}.json").write_text("{not json", encoding="utf-8")
    assert cache.get("ab" * 32) is None


def test_the_key_changes_with_the_session_the_settings_and_the_version() -> None:
    base = Settings().model_dump_json()
    other = Settings.model_validate({"attachments": {"max_files": 3}}).model_dump_json()
    key = cache_key("h1", base, "0.1.0")
    assert key == cache_key("h1", base, "0.1.0")
    assert len({key, cache_key("h2", base, "0.1.0"), cache_key("h1", other, "0.1.0"), cache_key("h1", base, "0.2.0")}) == 4


def test_the_cache_lives_under_compactor_home(compactor_home: Path) -> None:
    assert default_cache_dir() == compactor_home / "tune"
