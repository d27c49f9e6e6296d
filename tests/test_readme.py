"""The README's promises: two commands first, and CI runs the test one."""

from __future__ import annotations

from pathlib import Path

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
