"""compactor.claude_code.transcript's public surface: one entry point per job, and nothing private leaks."""

from __future__ import annotations

import pkgutil

import compactor.claude_code.transcript as transcript


def test_all_lists_exactly_the_public_names_sorted() -> None:
    public = {name for name in vars(transcript) if not name.startswith("_")}
    modules = {info.name for info in pkgutil.iter_modules(transcript.__path__)}
    assert sorted(transcript.__all__) == transcript.__all__
    assert set(transcript.__all__) == public - modules - {"annotations"}


def test_one_entry_point_per_job_is_exported() -> None:
    jobs = {"read_transcript", "read_sessions", "write_transcript", "compaction_entries", "StateBuilder", "file_effect"}
    assert jobs <= set(transcript.__all__)
    assert all(callable(getattr(transcript, name)) for name in jobs)


def test_every_public_module_lists_sorted_names_that_the_package_exports() -> None:
    for info in pkgutil.iter_modules(transcript.__path__):
        if info.name.startswith("_"):
            continue
        module = getattr(transcript, info.name)
        names = module.__all__
        assert names == sorted(names), info.name
        assert set(names) <= set(transcript.__all__), info.name
