"""The old flat module paths still import, as the very modules at their new homes."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from compactor._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_module_at_its_new_path(old: str) -> None:
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])
    assert module.__spec__ is not None and module.__spec__.name == MOVED[old]


def test_a_submodule_of_a_moved_package_follows_it() -> None:
    import compactor.claude_code.transcript.reader as new
    import compactor.transcript.reader as old

    assert old is new


def test_the_readme_imports_of_the_old_layout_work_in_a_fresh_interpreter() -> None:
    code = (
        "from compactor.replay import replay\n"
        "from compactor.pipeline import compact\n"
        "from compactor.messages import Message\n"
        "import compactor.claude_code.replay as r, compactor.core.messages as m\n"
        "assert replay is r.replay and Message is m.Message\n"
        "import compactor\n"
        "assert compactor.replay is r\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unknown_name_is_still_an_import_error() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("compactor.no_such_module")
