"""The README's promises: two commands first, CI runs the test one, short, each way in near the top and linked
to its page, its code runs; and the sizes the docs state."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

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


# The README is short, and each way in opens with what to run and ends with its docs page.

README_MAX_LINES = 250
WAYS_IN = {
    "## The Claude Code plugin": "docs/plugin.md",
    "## The Python API in an agent loop": "docs/python-api.md",
    "## Replay and tune": "docs/replay-and-tune.md",
}


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_250_lines_and_says_which_python() -> None:
    text = _readme()
    assert len(text.splitlines()) <= README_MAX_LINES
    assert "Python >= 3.11" in text
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()


def _section(text: str, heading: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def test_each_way_in_opens_with_what_to_run_and_ends_with_a_link_to_its_page() -> None:
    text = _readme()
    for heading, page in WAYS_IN.items():
        section = _section(text, heading)
        assert section[2].startswith("```"), f"{heading}: the first thing after the heading is what to run"
        assert f"]({page})" in "\n".join(section[-3:]), f"{heading} does not end with a link to {page}"
        assert (ROOT / page).is_file(), page


FIRST_SCREEN = 30
"""Lines a terminal or a browser shows before the reader scrolls."""


def test_the_three_ways_in_are_on_the_first_screen() -> None:
    lines = _readme().splitlines()
    wanted = ("claude plugin install compactor@compactor", "Orchestrator()", "compactor replay SESSION.jsonl")
    for needle in wanted:
        first = next(n for n, line in enumerate(lines) if needle in line and n > 5)  # after the two commands
        assert first < FIRST_SCREEN, f"{needle!r} first appears on line {first + 1}"


def test_every_relative_link_of_the_readme_names_a_file_that_exists() -> None:
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", _readme())
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).exists(), link


# The Python blocks: each runs as pasted, in order, unless it starts with "# pip install '.[extra]'".


def _examples() -> ModuleType:
    spec = importlib.util.spec_from_file_location("readme_examples", ROOT / "tests" / "readme_examples.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_python_block_without_an_extra_runs_as_pasted_in_order(tmp_path: Path) -> None:
    examples = _examples()
    blocks = examples.runnable(examples.python_blocks(ROOT / "README.md"))
    assert len(blocks) >= 2
    code, ran, stderr = examples.run_blocks(blocks, tmp_path)
    assert code == 0, f"{ran[-1] if ran else 'README.md'}: {stderr}"
    assert ran == [where for where, _ in blocks]
    assert (tmp_path / "compactor" / "ccr.db").is_file()  # the Orchestrator's store: the first block ran for real


# Sizes the docs state.

SIZED_PAGES = ("docs/python-api.md", "docs/getting-started.md")


def _stated_text() -> str:
    return "\n".join((ROOT / page).read_text() for page in SIZED_PAGES)


def test_the_claude_agent_sdk_binary_size_the_readme_states_is_what_its_wheel_installs() -> None:
    stated = {int(n) for n in re.findall(r"installs a (\d+) MB(?: Claude Code)? binary", _stated_text())}
    assert stated, "the docs no longer say how large the SDK's binary is"
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


def test_the_line_counts_the_docs_state_are_within_a_fifth_of_the_files() -> None:
    stated = _stated_line_counts(_stated_text())
    assert len(stated) >= 2, "the docs no longer say how small the MCP layer and the BM25 ranker are"
    off = _off_by_more_than_a_fifth(stated)
    assert not off, f"line counts in the docs (stated, actual): {off}"


def test_a_stale_line_count_is_caught() -> None:
    text = "through `ccr/mcp_stdio.py`, about\n20 lines, and BM25 is 400 lines in `ccr/bm25.py`"
    stated = _stated_line_counts(text)
    assert stated == [("ccr/mcp_stdio.py", 20), ("ccr/bm25.py", 400)]
    assert set(_off_by_more_than_a_fifth(stated)) == {"ccr/mcp_stdio.py", "ccr/bm25.py"}
