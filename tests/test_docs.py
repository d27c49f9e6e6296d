"""The docs site's promises: its generated parts are what the code gives, the references are complete,
every page is in the site, and its Python examples run."""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
GENERATED = DOCS / "generated"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generate() -> ModuleType:
    return _load("docs_generate", DOCS / "generate.py")


@pytest.fixture(scope="module")
def examples() -> ModuleType:
    return _load("readme_examples", ROOT / "tests" / "readme_examples.py")


# Generated, so that it cannot drift.


def test_every_generated_file_is_what_the_code_gives_now() -> None:
    done = subprocess.run(
        [sys.executable, "docs/generate.py", "--check"], cwd=ROOT, capture_output=True, timeout=600, check=False
    )
    assert done.returncode == 0, f"regenerate: python docs/generate.py\n{done.stdout.decode()[-4000:]}"


def test_a_stale_generated_file_is_caught_with_a_diff(
    generate: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "generated"
    stale.mkdir()
    (stale / "errors.md").write_text(generate.errors_reference().replace("| 73 |", "| 74 |", 1))
    monkeypatch.setenv("COLUMNS", "80")  # main() sets its own width; the test's environment is restored after
    monkeypatch.setattr(generate, "GENERATED", stale)
    monkeypatch.setattr(generate, "ROOT", tmp_path)
    monkeypatch.setattr(generate, "GENERATORS", {"errors.md": generate.errors_reference})
    assert generate.main(["--check"]) == 1
    out = capsys.readouterr().out
    assert "-" in out and "| 74 |" in out and "| 73 |" in out
    assert "| 74 |" in (stale / "errors.md").read_text()  # --check writes nothing


def _parsers(build: Any, commands: Mapping[str, Any]) -> list[argparse.ArgumentParser]:
    """Every command's parser and, depth first, its subcommands' parsers."""
    found = []

    def walk(parser: argparse.ArgumentParser) -> None:
        found.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    walk(child)

    for name in commands:
        top = build(name)
        sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
        walk(sub.choices[name])
    return found


def _sections(text: str) -> dict[str, str]:
    """Heading text -> the text up to the next heading, for each command's heading in the reference."""
    parts = re.split(r"^#{2,6} `([^`]+)`\n", text, flags=re.MULTILINE)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def test_every_command_subcommand_and_option_is_in_the_cli_reference() -> None:
    import ccr.cli
    import compactor.cli

    sections = _sections((GENERATED / "cli.md").read_text())
    parsers = _parsers(compactor.cli.build_parser, compactor.cli.COMMANDS)
    parsers += _parsers(ccr.cli.build_parser, ccr.cli.COMMANDS)
    assert len(parsers) >= len(compactor.cli.COMMANDS) + len(ccr.cli.COMMANDS) + 10  # memory's, hook's, plugin's
    for parser in parsers:
        assert parser.prog in sections, f"{parser.prog} is not in docs/generated/cli.md"
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(
                action, argparse._SubParsersAction | argparse._HelpAction
            ):
                continue  # -h is in every usage line
            for option in action.option_strings or [str(action.metavar or action.dest)]:
                assert str(option) in sections[parser.prog], f"{parser.prog} {option}"


def test_every_setting_and_its_env_var_is_in_the_settings_reference(generate: ModuleType) -> None:
    from compactor.core import config

    text = (GENERATED / "settings.md").read_text()
    leaves = [dotted for dotted, *_ in generate.leaf_fields(config.Settings)]
    assert len(leaves) > 50 and "attachments.selection.strategy" in leaves and "background.max_wait_seconds" in leaves
    for dotted in leaves:
        assert f"| `{dotted}` |" in text, dotted
    for name in config.ENV_VARS:
        assert f"`{name}`" in text, name


def test_the_meanings_the_generator_supplies_name_settings_that_exist(generate: ModuleType) -> None:
    from compactor.core import config

    leaves = {dotted for dotted, *_ in generate.leaf_fields(config.Settings)}
    assert set(generate.MEANINGS) <= leaves, set(generate.MEANINGS) - leaves


def test_every_settings_row_says_what_it_means() -> None:
    rows = [line for line in (GENERATED / "settings.md").read_text().splitlines() if line.startswith("| `")]
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]
    settings = [c for c in cells if len(c) == 8]  # | setting | type | default | bounds | env var | meaning |
    assert len(settings) > 50
    empty = [c[1].strip() for c in settings if not c[6].strip()]
    assert not empty, f"settings with no meaning (add a docstring to the field): {empty}"


def test_every_error_id_in_the_source_is_in_the_error_table_with_its_exit_code(generate: ModuleType) -> None:
    text = (GENERATED / "errors.md").read_text()
    in_source = set()
    for package in generate.PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            in_source |= set(re.findall(r'^\s+error_id = "([a-z_]+)"', path.read_text(), flags=re.MULTILINE))
    assert len(in_source) > 40
    table = dict(re.findall(r"`([a-z_]+)` \| (\d+) \|", text))
    assert in_source <= set(table), in_source - set(table)
    for _, cls in generate.error_classes():
        assert table[cls.error_id] == str(cls.exit_code), cls


def test_every_error_id_a_page_names_is_one_the_code_has() -> None:
    ids = set(re.findall(r"`([a-z_]+)` \| \d+ \|", (GENERATED / "errors.md").read_text()))
    named = [
        (page.name, found)
        for page in _pages()
        for found in re.findall(r"\[`([a-z_]+)`\]\((?:\.\./)?(?:errors\.md)?#every-error\)", page.read_text())
    ]
    assert len(named) >= 5
    assert not [n for n in named if n[1] not in ids], "pages name error ids the code no longer has"


def test_every_benchmark_figure_recorded_is_on_the_benchmarks_page_with_its_date() -> None:
    data = json.loads((DOCS / "measurements" / "benchmarks.json").read_text())
    page = (GENERATED / "benchmarks.md").read_text()
    assert data["scripts"]
    for script, entry in data["scripts"].items():
        assert f"`benchmarks/bench_{script}.py`" in page and f"Measured {entry['date']}" in page
        for figure in entry["figures"]:
            assert figure["name"].replace("|", "\\|") in page, figure["name"]


def test_every_handle_in_the_report_example_brings_back_its_bytes(examples: ModuleType, tmp_path: Path) -> None:
    examples.replay_json(tmp_path)  # the first command, with a store of its own
    block = json.loads((GENERATED / "report.json").read_text())
    spans = [*block["dropped"], *(a for a in block["attachments"] if a.get("handle"))]
    assert spans
    for span in spans:
        got = subprocess.run(
            [sys.executable, "-m", "ccr", "get", span["handle"], "--store", str(tmp_path / "ccr.db")],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert got.returncode == 0, got.stderr.decode()
        assert "ccr_" + hashlib.sha256(got.stdout).hexdigest()[:32] == span["handle"]
        if "bytes" in span:
            assert len(got.stdout) == span["bytes"]


# The site.


def test_getting_started_gives_the_readme_s_two_commands_as_they_are() -> None:
    readme = (ROOT / "README.md").read_text().split("```", 2)[1].strip()
    assert f"```\n{readme}\n```" in (DOCS / "getting-started.md").read_text()


def _pages() -> list[Path]:
    """The hand-written pages of the site (the generated parts are included into them)."""
    return sorted(p for p in DOCS.rglob("*.md") if GENERATED not in p.parents)


def _nav() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text()
    return re.findall(r":\s+([\w/.-]+\.md)\s*$", text, flags=re.MULTILINE)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in _pages()}
    assert set(_nav()) == pages


def test_every_generated_file_is_included_by_a_page() -> None:
    included = " ".join(p.read_text() for p in _pages())
    for path in GENERATED.iterdir():
        assert f'--8<-- "docs/generated/{path.name}"' in included, path.name


def test_the_site_builds_with_strict(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (pip install '.[docs]'); .ci/run builds the site")
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


def _pages_with_runnable_blocks() -> list[str]:
    examples = _load("readme_examples", ROOT / "tests" / "readme_examples.py")
    return [p.relative_to(ROOT).as_posix() for p in _pages() if examples.runnable(examples.python_blocks(p))]


@pytest.mark.parametrize("page", _pages_with_runnable_blocks())
def test_every_python_block_of_a_page_runs_as_pasted_in_order(examples: ModuleType, page: str, tmp_path: Path) -> None:
    blocks = examples.runnable(examples.python_blocks(ROOT / page))
    code, ran, stderr = examples.run_blocks(blocks, tmp_path)
    assert code == 0, f"{ran[-1] if ran else page}: {stderr}"
    assert ran == [where for where, _ in blocks]


def test_the_pages_run_python_blocks_and_mark_those_that_need_an_extra(examples: ModuleType) -> None:
    blocks = [b for p in _pages() for b in examples.python_blocks(p)]
    assert len(examples.runnable(blocks)) >= 5
    assert len(blocks) > len(examples.runnable(blocks))
    for where, code in blocks:
        if "pip install" in code:
            assert examples.NEEDS_AN_EXTRA.match(code), where
