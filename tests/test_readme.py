"""The README's promises: two commands first, CI runs the test one, its examples are real, its code runs, and the sizes it states."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = text.split("```", 2)[1]
    return [line for line in block.splitlines() if line.strip()]


def test_readme_opens_with_exactly_two_commands() -> None:
    text = (ROOT / "README.md").read_text()
    assert text.index("```") < text.index("\n## ")
    main_job, tests = _commands()
    assert "compactor replay fixtures/sessions/" in main_job
    assert "pytest" in tests


def test_ci_runs_the_readme_test_command() -> None:
    assert _commands()[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_the_main_job_session_exists() -> None:
    session = _commands()[0].split("compactor replay ", 1)[1].split()[0]
    assert (ROOT / session).is_file()


# The report example: made from a real run of the first command (tests/readme_examples.py).


def _examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "tests" / "readme_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def first_command(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, dict[str, Any], Path]:
    """The example generator, the report the README's first command prints (with --json), and its home."""
    examples = _examples()
    home = tmp_path_factory.mktemp("first-command")
    return examples, examples.replay_json(home), home


def _example_block(examples: ModuleType) -> dict[str, Any]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start, end = examples.readme_block(text)
    block: dict[str, Any] = json.loads(text[start:end])
    return block


def test_the_report_example_is_what_the_first_command_prints(
    first_command: tuple[ModuleType, dict[str, Any], Path],
) -> None:
    examples, report, _ = first_command
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert examples.expected_readme(text, report) == text, "regenerate it: python tests/readme_examples.py --write"
    assert _example_block(examples) == examples.abridged(report)


def test_a_changed_figure_in_the_report_example_is_caught(
    first_command: tuple[ModuleType, dict[str, Any], Path],
) -> None:
    examples, report, _ = first_command
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    post = report["compactions"][0]["post_tokens"]
    changed = text.replace(f'"post_tokens": {post},', f'"post_tokens": {post + 1},', 1)
    assert changed != text
    assert examples.expected_readme(changed, report) == text


def test_every_handle_in_the_report_example_brings_back_its_bytes(
    first_command: tuple[ModuleType, dict[str, Any], Path],
) -> None:
    examples, _, home = first_command
    block = _example_block(examples)
    spans = [*block["dropped"], *(a for a in block["attachments"] if a.get("handle"))]
    assert spans
    for span in spans:
        got = subprocess.run(
            [sys.executable, "-m", "ccr", "get", span["handle"], "--store", str(home / "ccr.db")],
            capture_output=True,
            timeout=120,
            check=False,
        )
        assert got.returncode == 0, got.stderr.decode()
        assert "ccr_" + hashlib.sha256(got.stdout).hexdigest()[:32] == span["handle"]
        if "bytes" in span:
            assert len(got.stdout) == span["bytes"]


# The Python blocks: each runs as pasted, in order, unless it starts with "# pip install '.[extra]'".

_NEEDS_AN_EXTRA = re.compile(r"# pip install '\.\[[\w-]+\]'")


def _python_blocks() -> list[tuple[int, str]]:
    """Every ```python block of the README: (its first line's number, its code)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = []
    for match in re.finditer(r"^```python\n(.*?)^```$", text, flags=re.DOTALL | re.MULTILINE):
        blocks.append((text.count("\n", 0, match.start(1)) + 1, match.group(1)))
    return blocks


def _runnable_blocks() -> list[tuple[int, str]]:
    return [(line, code) for line, code in _python_blocks() if not _NEEDS_AN_EXTRA.match(code)]


def test_the_blocks_that_need_an_extra_say_so_on_their_first_line() -> None:
    blocks = _python_blocks()
    skipped = [code for _, code in blocks if _NEEDS_AN_EXTRA.match(code)]
    assert skipped and len(_runnable_blocks()) >= 3
    for code in (c for _, c in blocks if "pip install" in c):
        assert _NEEDS_AN_EXTRA.match(code), code.splitlines()[0]


_RUN_BLOCKS = """
import sys
namespace = {"__name__": "__main__"}
for line, code in BLOCKS:
    print(f"README.md:{line}", flush=True)
    exec(compile(code, f"README.md:{line}", "exec"), namespace)
"""


def test_every_python_block_without_an_extra_runs_as_pasted_in_order(tmp_path: Path) -> None:
    blocks = _runnable_blocks()
    script = f"BLOCKS = {blocks!r}\n{_RUN_BLOCKS}"
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path / "compactor"), "HOME": str(home)},
        timeout=300,
        check=False,
    )
    ran = done.stdout.decode().split()
    assert done.returncode == 0, f"{ran[-1] if ran else 'README.md'}: {done.stderr.decode()}"
    assert ran == [f"README.md:{line}" for line, _ in blocks]
    assert (tmp_path / "compactor" / "ccr.db").is_file()  # the Orchestrator's store: the first block ran for real


def test_the_claude_agent_sdk_binary_size_the_readme_states_is_what_its_wheel_installs() -> None:
    text = (ROOT / "README.md").read_text()
    stated = {int(n) for n in re.findall(r"installs a (\d+) MB(?: Claude Code)? binary", text)}
    assert stated, "the README no longer says how large the SDK's binary is"
    spec = importlib.util.find_spec("claude_agent_sdk")
    bundled = Path(spec.origin).parent / "_bundled" / "claude" if spec and spec.origin else None
    if bundled is None or not bundled.is_file():
        pytest.skip("claude-agent-sdk is not installed from its wheel here (no bundled binary to measure)")
    size_mb = bundled.stat().st_size / 1e6
    assert all(abs(n - size_mb) <= 0.1 * size_mb for n in stated), (stated, size_mb)


def _stated_line_counts(text: str) -> list[tuple[str, int]]:
    """(path, lines) for each "`path`, about N lines" and "N lines in `path`" the text states."""
    about = [(p, int(n)) for p, n in re.findall(r"`([\w/]+\.py)`,\s+about\s+(\d+)\s+lines", text)]
    plain = [(p, int(n)) for n, p in re.findall(r"(\d+)\s+lines\s+in\s+`([\w/]+\.py)`", text)]
    return about + plain


def _off_by_more_than_a_fifth(stated: list[tuple[str, int]]) -> dict[str, tuple[int, int]]:
    """Path -> (stated, actual) for each stated count more than a fifth away from the file's lines."""
    off = {}
    for path, lines in stated:
        actual = len((ROOT / path).read_text().splitlines())
        if abs(actual - lines) > 0.2 * actual:
            off[path] = (lines, actual)
    return off


def test_the_line_counts_the_readme_states_are_within_a_fifth_of_the_files() -> None:
    stated = _stated_line_counts((ROOT / "README.md").read_text())
    assert len(stated) >= 2, "the README no longer says how small the MCP layer and the BM25 ranker are"
    off = _off_by_more_than_a_fifth(stated)
    assert not off, f"README line counts (stated, actual): {off}"


def test_a_stale_line_count_is_caught() -> None:
    text = "through `ccr/mcp_stdio.py`, about\n20 lines, and BM25 is 400 lines in `ccr/bm25.py`"
    stated = _stated_line_counts(text)
    assert stated == [("ccr/mcp_stdio.py", 20), ("ccr/bm25.py", 400)]
    assert set(_off_by_more_than_a_fifth(stated)) == {"ccr/mcp_stdio.py", "ccr/bm25.py"}
