"""The package's public surface is deliberate, and loaded lazily."""

from __future__ import annotations

import subprocess
import sys

from compactor import memory


def test_all_is_sorted_and_every_name_resolves() -> None:
    assert sorted(memory.__all__) == memory.__all__
    for name in memory.__all__:
        assert getattr(memory, name) is not None


def test_the_exported_names_are_exactly_all() -> None:
    assert set(dir(memory)) >= set(memory.__all__)
    assert set(memory._EXPORTS) == set(memory.__all__)


def test_importing_the_package_loads_nothing_heavy() -> None:
    probe = "import sys, compactor.memory; print(sorted(m for m in ('pydantic', 'sqlite3', 'compactor.memory.store') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]"
