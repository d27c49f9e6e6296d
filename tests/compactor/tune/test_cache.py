"""The tuning cache: keyed by session content, settings and version; whole entries or none."""

from __future__ import annotations

from pathlib import Path

from compactor.core.config import Settings
from compactor.tune import ResultCache, SessionResult, cache_key, default_cache_dir
from compactor.tune.metrics import Metrics


def result() -> SessionResult:
    return SessionResult(
        trial_id="t",
        session="s.jsonl",
        session_hash="h",
        metrics={"recorded": Metrics(compactions=2)},
        wall_seconds=1.5,
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
    assert (
        len({key, cache_key("h2", base, "0.1.0"), cache_key("h1", other, "0.1.0"), cache_key("h1", base, "0.2.0")}) == 4
    )


def test_the_cache_lives_under_compactor_home(compactor_home: Path) -> None:
    assert default_cache_dir() == compactor_home / "tune"


def test_the_version_in_every_key_changes_with_the_code_not_only_the_release() -> None:
    from importlib.metadata import version

    from ccr.distribution import DISTRIBUTION
    from compactor.tune import project_version

    release, _, digest = project_version().partition("+")
    assert release == version(DISTRIBUTION) and len(digest) == 16
    assert project_version() == project_version()


def test_the_code_digest_covers_the_packages_the_project_installs_and_no_other() -> None:
    import tomllib

    from compactor.tune.cache import _PACKAGES

    pyproject = tomllib.loads((Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8"))
    installed = [pattern.rstrip("*") for pattern in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]]
    assert sorted(_PACKAGES) == sorted(installed)


def test_changing_a_module_or_a_template_changes_the_code_digest(tmp_path: Path) -> None:
    from compactor.tune.cache import code_digest

    package = tmp_path / "pkg"
    (package / "templates").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "templates" / "t.j2").write_text("hello\n")
    (package / "notes.txt").write_text("ignored\n")
    before = code_digest([package])
    (package / "notes.txt").write_text("still ignored\n")
    assert code_digest([package]) == before
    (package / "templates" / "t.j2").write_text("hello!\n")
    changed = code_digest([package])
    assert changed != before
    (package / "a.py").write_text("x = 2\n")
    assert code_digest([package]) not in (before, changed)
