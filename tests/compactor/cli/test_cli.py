"""The compactor command line: every command has help; errors become exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ccr.recovery import RECOVERY_TOOL_NAME
from compactor.claude_code.hooks import CLIENT_RETRIEVE_TOOL
from compactor.cli import COMMANDS


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compactor", *args], capture_output=True, text=True, check=False)


def test_top_level_help_names_every_command() -> None:
    done = cli("--help")
    assert done.returncode == 0
    for name in COMMANDS:
        assert name in done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(command: str) -> None:
    done = cli(command, "--help")
    assert done.returncode == 0
    assert "usage: compactor " + command in done.stdout
    assert len(done.stdout.splitlines()) > 3


def test_an_unknown_command_is_a_usage_error() -> None:
    done = cli("frobnicate")
    assert done.returncode == 2 and "invalid choice" in done.stderr


def test_a_bad_setting_is_a_config_error_with_its_id(tmp_path: object) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "tokens", "-"],
        input="hello",
        capture_output=True,
        text=True,
        check=False,
        env={**__import__("os").environ, "COMPACTOR_CONTEXT_WINDOW": "lots"},
    )
    assert done.returncode == 2
    assert "config_invalid" in done.stderr and "COMPACTOR_CONTEXT_WINDOW" in done.stderr


PROGRAMS = {"compactor": "compactor.cli", "ccr": "ccr.cli"}

CCR_PLUMBING = ("ccr", "ccr.cli_kit", "ccr.distribution", "ccr.lazy", "ccr.root_errors")
"""The light modules of ccr (no SQLite, no models) that ``compactor --help`` may import: the CLI kit and errors."""

_IMPORTS_OF = """
import json, sys
from {module} import main
code = main({argv!r})
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}))
"""


def imports_of(program: str, *argv: str, stdin: str = "", env: dict[str, str] | None = None) -> tuple[int, list[str]]:
    """Run ``program``'s main in a fresh interpreter; its exit code and every module it imported.

    Anything the command printed before the last line is checked to be empty.
    """
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTS_OF.format(module=PROGRAMS[program], argv=list(argv))],
        input=stdin,
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    *printed, last = done.stdout.splitlines()
    if argv[:1] == ("hook",):
        assert printed == [] and done.stderr == ""
    result = __import__("json").loads(last)
    return result["code"], result["modules"]


def test_top_level_help_imports_no_command_and_no_heavy_library() -> None:
    code, modules = imports_of("compactor", "--help")
    assert code == 0
    heavy = ("jinja2", "tiktoken", "pydantic", "watchfiles", "sqlite3", "mcp", "attachments", "skills")
    assert [m for m in modules if m.split(".")[0] in heavy] == []
    # The plumbing every package shares lives in ccr, the lowest package; nothing of the store loads.
    assert [m for m in modules if m.split(".")[0] == "ccr"] == sorted(CCR_PLUMBING)
    assert [m for m in modules if ".commands." in m] == []


def test_ccr_help_imports_no_command_and_neither_templates_nor_tokenizer() -> None:
    code, modules = imports_of("ccr", "--help")
    assert code == 0
    assert [m for m in modules if m.split(".")[0] in ("jinja2", "tiktoken", "watchfiles", "mcp")] == []
    assert [m for m in modules if ".commands." in m] == []


def test_running_a_command_imports_that_command_only() -> None:
    code, modules = imports_of("compactor", "tokens", "--help")
    assert code == 0
    assert [m for m in modules if m.startswith("compactor.cli.commands.")] == ["compactor.cli.commands.tokens"]
    assert "jinja2" not in modules and "watchfiles" not in modules


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_version_prints_the_installed_packages_version(program: str) -> None:
    from importlib.metadata import version

    from ccr.distribution import DISTRIBUTION

    done = subprocess.run([sys.executable, "-m", program, "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{program} {version(DISTRIBUTION)}\n"


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_each_commands_one_line_help_is_the_one_its_module_registers(program: str) -> None:
    import argparse
    import importlib

    cli_module = importlib.import_module(PROGRAMS[program])
    for name, (_, summary) in cli_module.COMMANDS.items():
        parser = cli_module.build_parser(name)
        [subparsers] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        registered = {action.dest: action.help for action in subparsers._choices_actions}
        assert registered[name] == summary, name


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_options_before_and_after_the_command_still_parse(program: str, tmp_path: object) -> None:
    args = ["tokens", "-", "--json"] if program == "compactor" else ["--store", f"{tmp_path}/s.db", "stats", "--json"]
    if program == "ccr":  # reading never creates a store: make one first
        made = subprocess.run(
            [sys.executable, "-m", "ccr", "--store", f"{tmp_path}/s.db", "put", "-"],
            input="x",
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
    done = subprocess.run(
        [sys.executable, "-m", program, *args], input="hello", capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{")


@pytest.mark.parametrize("source", ["startup", "compact"])
def test_a_session_start_with_nothing_to_say_imports_neither_models_nor_storage_nor_templates_nor_tokenizer(
    source: str, tmp_path: Path
) -> None:
    hook = json.dumps(
        {
            "session_id": "s-1",
            "hook_event_name": "SessionStart",
            "source": source,
            "transcript_path": str(tmp_path / "t.jsonl"),
        }
    )
    code, modules = imports_of(
        "compactor", "hook", "session-start", stdin=hook, env={**os.environ, "COMPACTOR_HOME": str(tmp_path)}
    )
    assert code == 0
    heavy = (
        "pydantic",
        "jinja2",
        "tiktoken",
        "watchfiles",
        "sqlite3",
        "mcp",
        "httpx",
        "anthropic",
        "openai",
        "memory",
        "skills",
    )
    assert [m for m in modules if m.split(".")[0] in heavy] == []
    loaded = set(modules)
    for module in (
        "compactor.engine.pipeline",
        "compactor.claude_code.transcript",
        "compactor.claude_code.restore",
        "compactor.summarizers.extractive",
        "compactor.memory.attachment",
        "attachments.builder",
        "ccr.store",
        "ccr._sqlite",
        "ccr._memory",
    ):
        assert module not in loaded, module
    assert "compactor.claude_code.quick_hooks" in loaded  # the hook did run, and answered from its input


def test_the_hooks_name_the_retrieve_tool_as_the_recovery_tool_is_named() -> None:
    assert f"mcp__plugin_compactor_ccr__{RECOVERY_TOOL_NAME}" == CLIENT_RETRIEVE_TOOL
