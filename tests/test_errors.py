"""One hierarchy of errors: every error a package raises on purpose is a ``compactor.CompactorError``.

The root and the concepts several packages share are defined once, in
``ccr.root_errors``; a package that raises a shared concept (ccr's
``InputNotFound``, the memory store's ``StoreError``) re-exports that very
class, so catching the concept catches every package's, and the concept has
one ``error_id``. Classes of a package's own concepts (ccr's ``DiskFull``,
memory's ``MemoryNotFound``) derive from the concept they are a case of.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import compactor
from ccr import root_errors

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ccr", "skills", "attachments", "compactor")
ERROR_MODULES = (
    "ccr.root_errors",
    "ccr.errors",
    "skills.errors",
    "attachments.errors",
    "compactor.core.errors",
    "compactor.memory.errors",
)


def _classes() -> list[type[BaseException]]:
    found: dict[int, type[BaseException]] = {}
    for name in ERROR_MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if inspect.isclass(value) and issubclass(value, BaseException):
                found[id(value)] = value
    return list(found.values())


def test_every_error_of_every_package_is_the_one_compactor_error() -> None:
    assert compactor.CompactorError is root_errors.CompactorError
    for cls in _classes():
        assert issubclass(cls, compactor.CompactorError), cls


def _every_module() -> list[str]:
    """Every module of the four packages that imports here (``__main__`` would run a command line)."""
    names: list[str] = []
    for package in PACKAGES:
        for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                importlib.import_module(info.name)
            except ModuleNotFoundError as exc:  # an optional integration whose library is not installed
                if (exc.name or "").split(".")[0] in PACKAGES:
                    raise
                continue
            names.append(info.name)
    return names


def test_no_two_error_classes_of_the_packages_share_a_name() -> None:
    by_name: dict[str, dict[int, type[BaseException]]] = {}
    for name in _every_module():
        for value in vars(importlib.import_module(name)).values():
            ours = inspect.isclass(value) and value.__module__.split(".")[0] in PACKAGES
            if ours and issubclass(value, BaseException):
                by_name.setdefault(value.__name__, {})[id(value)] = value
    shared = {name: classes for name, classes in by_name.items() if len(classes) > 1}
    assert not shared, {name: sorted(c.__module__ for c in classes.values()) for name, classes in shared.items()}


def test_each_shared_concept_is_defined_once_and_re_exported_as_itself() -> None:
    definitions: dict[str, list[str]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef):
                    definitions.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    for name in root_errors.__all__:
        if isinstance(getattr(root_errors, name), type):
            assert definitions.get(name) == ["ccr/root_errors.py"], (name, definitions.get(name))
    from ccr import errors as ccr_errors
    from compactor.memory import errors as memory_errors

    for module in (ccr_errors, memory_errors):
        for name in set(module.__all__) & set(root_errors.__all__):
            assert getattr(module, name) is getattr(root_errors, name), (module.__name__, name)
    assert ccr_errors.OutputWriteFailed is root_errors.OutputWriteError


def test_a_package_class_of_its_own_concept_derives_from_the_shared_one() -> None:
    from ccr import errors as ccr_errors
    from compactor.memory import errors as memory_errors

    assert issubclass(ccr_errors.DiskFull, root_errors.StoreError) and issubclass(
        ccr_errors.DiskFull, ccr_errors.CCRError
    )
    assert issubclass(ccr_errors.CorruptRecord, root_errors.StoreError)
    assert issubclass(ccr_errors.UnknownObjectType, root_errors.InvalidRequest)
    assert issubclass(ccr_errors.ArchiveInvalid, root_errors.InputError)
    assert issubclass(memory_errors.TextTooLarge, memory_errors.MemoriesError)


def test_compactor_re_exports_the_shared_classes_not_copies() -> None:
    from compactor.core import errors

    for name in root_errors.__all__:
        value = getattr(root_errors, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            assert getattr(errors, name) is value, name


def test_two_classes_share_an_error_id_only_when_one_derives_from_the_other() -> None:
    by_id: dict[str, list[type[BaseException]]] = {}
    for cls in _classes():
        by_id.setdefault(cls.error_id, []).append(cls)  # type: ignore[attr-defined]
    for error_id, classes in by_id.items():
        for a in classes:
            for b in classes:
                assert issubclass(a, b) or issubclass(b, a), (error_id, a, b)


def test_a_file_that_is_no_store_is_caught_as_the_shared_concept_from_either_store(tmp_path: Path) -> None:
    from ccr import open_store
    from compactor.memory import open_memory

    path = tmp_path / "notes.txt"
    path.write_text("not a database\n" * 100)
    with pytest.raises(compactor.StoreError) as ccr_refused:
        open_store(path)
    with pytest.raises(compactor.StoreError) as memory_refused:
        open_memory(path)
    assert type(ccr_refused.value) is type(memory_refused.value) is root_errors.NotAStore
    assert ccr_refused.value.error_id == memory_refused.value.error_id == "not_a_store"
    assert "ccr store" in str(ccr_refused.value) and "memory" in str(memory_refused.value)
    assert path.read_text() == "not a database\n" * 100


def _error_table_ids() -> dict[str, int]:
    from compactor.cli.error_table import error_table

    return {row.error_id: row.exit_code for row in error_table()}


def test_the_error_table_holds_every_error_class_of_every_package() -> None:
    from compactor.cli.error_table import ERROR_MODULES, error_table

    _every_module()  # every class of the four packages is defined now
    listed = {name for row in error_table() for name in row.classes}
    pending: list[type[BaseException]] = [compactor.CompactorError]
    found: set[type[BaseException]] = set()
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    ours = {c for c in found if c.__module__.split(".")[0] in PACKAGES}
    assert {f"{c.__module__}.{c.__qualname__}" for c in ours} <= listed
    assert {c.__module__ for c in ours} <= set(ERROR_MODULES)  # a new error module is named there


def test_each_error_id_has_one_exit_code_and_the_table_says_which() -> None:
    from compactor.cli.error_table import error_table

    _every_module()
    for row in error_table():
        classes = [c for c in _all_error_classes() if c.error_id == row.error_id]  # type: ignore[attr-defined]
        assert {c.exit_code for c in classes} == {row.exit_code}, row  # type: ignore[attr-defined]
        assert row.summary, row
    rows = error_table()
    assert [r.error_id for r in rows] == sorted({r.error_id for r in rows})


def _all_error_classes() -> list[type[BaseException]]:
    pending: list[type[BaseException]] = [compactor.CompactorError]
    found: list[type[BaseException]] = []
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.append(cls)
            pending.extend(cls.__subclasses__())
    return found


def test_every_usage_mistake_reads_usage_error_and_every_missing_input_input_not_found() -> None:
    from ccr.errors import InvalidHandle, OutputRefused
    from compactor.core import errors

    table = _error_table_ids()
    assert table["usage_error"] == 2 and table["input_not_found"] == 66 and table["input_unreadable"] == 65
    assert errors.InvalidRequest.error_id == errors.UsageError.error_id == "usage_error"
    assert errors.TranscriptNotFound.error_id == errors.InputNotFound.error_id
    assert issubclass(errors.TranscriptNotFound, errors.InputNotFound)
    assert errors.TranscriptUnreadable.error_id == errors.InputError.error_id == "input_unreadable"
    assert OutputRefused.error_id == "output_refused" and issubclass(OutputRefused, errors.UsageError)
    assert issubclass(InvalidHandle, errors.UsageError)


_PRINTED = re.compile(r"^(?:compactor|ccr|memory): ([a-z][a-z_]*): ")
_KEYWORD = re.compile(r"\berror_id\s*=\s*\"([a-z][a-z_]*)\"")


def test_every_error_id_written_out_in_the_code_is_in_the_table() -> None:
    """An id the command lines print without a class (a literal ``prog: id:``, ``error_id="..."``) must be a class's."""
    table = _error_table_ids()
    written: dict[str, str] = {}
    for package in (*PACKAGES, "examples"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found = _PRINTED.match(node.value)
                    if found and found.group(1) != "warning":
                        written[found.group(1)] = str(path.relative_to(ROOT))
            for found in _KEYWORD.finditer(text):
                written[found.group(1)] = str(path.relative_to(ROOT))
    missing = {error_id: where for error_id, where in written.items() if error_id not in table}
    assert not missing, missing


_FAILURES = [
    (["compactor", "replay", "--no-such-flag", "x.jsonl"], 2),
    (["compactor", "replay", "{tmp}/absent.jsonl"], 66),
    (["compactor", "inspect", "{tmp}/absent.jsonl"], 66),
    (["compactor", "show", "{tmp}/absent.json"], 66),
    (["compactor", "tokens", "{tmp}/absent.txt"], 66),
    (["compactor", "replay", "{tmp}/empty.jsonl"], 65),
    (["compactor", "restore", "{tmp}/absent.jsonl", "--list"], 66),
    (["compactor", "restore", "{tmp}/empty.jsonl"], 2),
    (["compactor", "tune", "{tmp}/empty.jsonl", "--space", "{tmp}/absent.toml", "--jobs", "0"], 2),
    (["compactor", "memory", "recall", "x", "--limit", "many"], 2),
    (["compactor", "memory", "recall", "x", "--limit", "0"], 2),
    (["ccr", "get"], 2),
    (["ccr", "get", "ccr_" + "0" * 32, "--lines", "x"], 2),
    (["ccr", "get", "not-a-handle"], 2),
    (["ccr", "frobnicate"], 2),
]


@pytest.mark.parametrize(("argv", "code"), _FAILURES, ids=[" ".join(a[:3]) for a, _ in _FAILURES])
def test_every_error_a_command_line_prints_is_in_the_table_with_its_exit_code(
    argv: list[str], code: int, tmp_path: Path
) -> None:
    import subprocess
    import sys

    (tmp_path / "empty.jsonl").write_bytes(b"")
    module = {"compactor": "compactor", "ccr": "ccr"}[argv[0]]
    command = [sys.executable, "-m", module, *(a.replace("{tmp}", str(tmp_path)) for a in argv[1:])]
    env = {"PATH": "/usr/bin:/bin", "COMPACTOR_HOME": str(tmp_path / "home")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False, env=env, cwd=ROOT)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr
    said = [m.group(1) for line in done.stderr.splitlines() if (m := _PRINTED.match(line))]
    assert said, done.stderr
    table = _error_table_ids()
    assert all(table.get(error_id) == code for error_id in said), (said, done.stderr)
