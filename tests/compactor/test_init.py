"""The compactor package's public surface is deliberate."""

from __future__ import annotations

import subprocess
import sys

import compactor


def test_all_is_sorted_and_lists_exactly_the_lazy_exports() -> None:
    assert compactor.__all__ == sorted(compactor.__all__)
    assert set(compactor.__all__) == set(compactor._EXPORTS)


def test_no_export_is_shadowed_by_a_submodule_of_the_same_name() -> None:
    import compactor.claude_code.replay

    assert not set(compactor.__all__) & {
        p.stem for p in __import__("pathlib").Path(compactor.__file__).parent.glob("*.py")
    }


def test_every_exported_name_resolves_to_its_defining_module() -> None:
    for name in compactor.__all__:
        value = getattr(compactor, name)
        assert getattr(sys.modules[compactor._EXPORTS[name]], name) is value


def test_the_other_packages_import_first_without_a_cycle() -> None:
    for package in ("ccr", "attachments", "skills"):
        done = subprocess.run(
            [sys.executable, "-c", f"import {package}, compactor; compactor.Orchestrator"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
