"""Which shell commands are checks, and which change state (never proposed as a check)."""

from __future__ import annotations

import pytest

from compactor.summarizers.facts import (
    OUTPUT_PLUMBING,
    changes_state,
    check_program,
    commit_subject,
    commits_work,
    inspects,
    plain_check,
    removed_paths,
    wrap_up_steps,
    wraps_up,
)


@pytest.mark.parametrize(
    ("command", "check"),
    [
        ("pytest -q tests/test_api.py", "pytest"),
        ("cd app && uv run pytest -x", "pytest"),
        ("python -m pytest -q", "pytest"),
        ("mix test test/a_test.exs 2>&1 | tail -5", "mix test"),
        ("npm run lint", "npm run lint"),
        ("cargo clippy --all", "cargo clippy"),
        ("ruff check src", "ruff check"),
        ("ruff format --check .", "ruff format"),
        ("go test ./...", "go test"),
        ("ruff format .", None),
        ("black src", None),
        ("git add -A && git commit -m fix", None),
        ("pytest > out.txt", None),
        ("ls -la", None),
    ],
)
def test_a_check_is_a_test_lint_type_or_build_command_that_changes_nothing(command: str, check: str | None) -> None:
    assert check_program(command) == check


@pytest.mark.parametrize(
    "command",
    [
        "git push -u origin main",
        "git commit -am x",
        "git rebase main",
        "rm -rf build",
        "bd close proj-1",
        "gh pr create --fill",
        "npm publish",
        "mix ecto.migrate",
        "pip install requests",
        "sed -i s/a/b/ f.py",
        "echo x > f.txt",
    ],
)
def test_commands_that_change_state_are_named(command: str) -> None:
    assert changes_state(command)


def test_reading_commands_change_nothing() -> None:
    for command in ("git status", "git log --oneline -3", "cat a.py 2>&1", "grep -rn x . > /dev/null", "mix test 2>&1"):
        assert not changes_state(command), command


def test_commits_and_removals_are_recognized() -> None:
    assert commits_work("git add . && git commit -m x") and commits_work("git push") and not commits_work("git log")
    assert removed_paths("rm -f a.py b.py && git rm -r old/ && mv x.py y.py") == ["a.py", "b.py", "old/", "x.py"]


def test_a_plain_check_is_checks_alone_with_its_output_trimmed() -> None:
    assert plain_check("mise run lint && mise run test 2>&1 | tail -20")
    assert plain_check("uv run pytest -q")
    assert not plain_check("go build ./cmd/entire && ./entire list --json 2>&1 | grep -o 'ID:' | wc -l")
    assert not plain_check("pytest -q | sort")


@pytest.mark.parametrize(
    ("command", "looks"),
    [
        ("git -C /r fsck --full 2>&1 | head", True),
        ("GIT_INDEX_FILE=/r/.git/index git ls-files --debug", True),
        ("python3 -c 'import json'", True),
        ("grep -rn foo .", True),
        ("make", False),
        ("git push", False),
        ("go run ./cmd/app list", False),
        ("find . -name '*.pyc' -delete", False),
    ],
)
def test_a_command_that_only_looks_is_told_from_one_that_works(command: str, looks: bool) -> None:
    assert inspects(command) is looks


def test_output_plumbing_is_trimmed_however_it_is_chained() -> None:
    for command in ("mix test 2>&1 | tail -20", "mix test 2>&1", "mix test > /dev/null 2>&1", "mix test | head"):
        assert OUTPUT_PLUMBING.sub("", command) == "mix test", command


def test_the_steps_that_wrap_work_up_are_checks_closes_commits_and_pushes() -> None:
    assert wrap_up_steps('git add a.ex && git commit -m "$(cat <<EOF" && git push') == ["git commit", "git push"]
    assert wrap_up_steps("mix test 2>&1 | tail -5") == ["mix test"]
    assert wrap_up_steps("bd close spotter-gqc.5") == ["bd close spotter-gqc.5"]
    assert wrap_up_steps("git status && ls") == []
    assert wrap_up_steps("git push -u origin x && gh pr create --title y") == ["git push -u origin x"]
    assert wraps_up("gh issue close 12") and not wraps_up("gh issue view 12")


def test_a_commits_subject_is_read_from_its_message_however_it_is_given() -> None:
    assert commit_subject('git add -A && git commit -m "fix(explain): scope the prompts" -m "body"') == (
        "fix(explain): scope the prompts"
    )
    heredoc = "git commit -m \"$(cat <<'EOF'\nfeat: batch the condensed sessions\n\nOne commit.\nEOF\n)\""
    assert commit_subject(heredoc) == "feat: batch the condensed sessions"
    assert commit_subject("git commit --amend --no-edit") is None
    assert commit_subject("git push origin main") is None
    assert commit_subject("git commit -am 'wip: lanes'") == "wip: lanes"
