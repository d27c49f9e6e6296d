"""Settings: defaults, precedence flag > env > file > default, and loud failures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from attachments.selection import DEFAULT_ACTIVITY_FILES
from compactor.core.config import (
    CONFIG_ENV,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_TAIL_TOKENS,
    ENV_VARS,
    MIN_CONTEXT_TOKENS,
    Settings,
    context_budget,
    load_settings,
)
from compactor.core.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_are_the_named_constants() -> None:
    settings = load_settings(env={})
    assert settings == Settings()
    assert settings.policy.context_window == DEFAULT_CONTEXT_WINDOW
    assert settings.pipeline.tail_tokens == DEFAULT_TAIL_TOKENS
    assert settings.counter == "tiktoken" and settings.summarizer == "extractive"
    assert settings.attachments.max_files == DEFAULT_ACTIVITY_FILES and settings.attachments.skills_total == 25_000


def test_read_is_unbounded_bash_and_grep_have_claude_codes_thresholds_and_others_fifty_thousand() -> None:
    dedup = Settings().dedup
    assert dedup.threshold_for("Read") is None
    assert (dedup.threshold_for("Bash"), dedup.threshold_for("Grep")) == (30_000, 20_000)
    assert dedup.threshold_for("Glob") == 50_000


def test_a_file_naming_one_tools_threshold_keeps_the_other_defaults(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[dedup.thresholds]\nBash = 40000\n")
    dedup = load_settings(path, env={}).dedup
    assert dedup.threshold_for("Bash") == 40_000
    assert dedup.threshold_for("Read") is None and dedup.threshold_for("Grep") == 20_000


def test_a_toml_file_sets_values_and_unbounded_tools(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.toml",
        'counter = "rough"\n[policy]\ncontext_window = 1000000\n[dedup.thresholds]\nBash = 30000\nGrep = "unbounded"\n',
    )
    settings = load_settings(path, env={})
    assert settings.counter == "rough"
    assert settings.policy.context_window == 1_000_000
    assert settings.dedup.threshold_for("Bash") == 30_000
    assert settings.dedup.threshold_for("Grep") is None


def test_a_json_file_works_too(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", json.dumps({"pipeline": {"tail_tokens": 5000}}))
    assert load_settings(path, env={}).pipeline.tail_tokens == 5000


def test_env_beats_file_and_flags_beat_env(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[policy]\ncontext_window = 300000\n")
    env = {"COMPACTOR_CONTEXT_WINDOW": "400000"}
    assert load_settings(path, env={}).policy.context_window == 300_000
    assert load_settings(path, env=env).policy.context_window == 400_000
    flagged = load_settings(path, env=env, overrides={"policy.context_window": 500_000})
    assert flagged.policy.context_window == 500_000
    nested = load_settings(path, env=env, overrides={"policy": {"context_window": 600_000}})
    assert nested.policy.context_window == 600_000


def test_an_override_of_none_means_not_given() -> None:
    env = {"COMPACTOR_COUNTER": "rough"}
    assert load_settings(env=env, overrides={"counter": None}).counter == "rough"


def test_the_config_env_var_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'summarizer = "openai"\n')
    assert load_settings(env={CONFIG_ENV: str(path)}).summarizer == "openai"


def test_env_vars_reach_their_settings() -> None:
    env = {
        "COMPACTOR_MAX_OUTPUT_TOKENS": "8000",
        "COMPACTOR_AUTOCOMPACT_PCT": "80",
        "COMPACTOR_DISABLE_AUTO_COMPACT": "yes",
        "COMPACTOR_DISABLE_COMPACT": "0",
        "COMPACTOR_DISABLE_DEDUP": "true",
        "COMPACTOR_TAIL_TOKENS": "9000",
        "COMPACTOR_LLM_MODEL": "m",
        "COMPACTOR_LLM_BASE_URL": "http://127.0.0.1:9",
        "COMPACTOR_LLM_TIMEOUT": "12.5",
        "COMPACTOR_LLM_MAX_OUTPUT_TOKENS": "4000",
        "COMPACTOR_LLM_API_KEY_ENV": "MY_KEY",
    }
    s = load_settings(env=env)
    assert s.policy.max_output_tokens == 8_000 and s.policy.autocompact_pct == 80
    assert s.policy.auto_compact is False and s.policy.compact is True
    assert s.dedup.enabled is False and s.pipeline.tail_tokens == 9_000
    assert (s.llm.model, s.llm.base_url, s.llm.timeout_seconds) == ("m", "http://127.0.0.1:9", 12.5)
    assert (s.llm.max_output_tokens, s.llm.api_key_env) == (4_000, "MY_KEY")


def test_every_documented_env_var_is_in_the_module_docstring() -> None:
    import compactor.core.config

    doc = compactor.core.config.__doc__ or ""
    for name in [*ENV_VARS, CONFIG_ENV]:
        assert f"``{name}``" in doc


def test_an_empty_env_var_counts_as_unset() -> None:
    assert load_settings(env={"COMPACTOR_CONTEXT_WINDOW": " "}).policy.context_window == DEFAULT_CONTEXT_WINDOW


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"COMPACTOR_CONTEXT_WINDOW": "big"}, "policy.context_window (from COMPACTOR_CONTEXT_WINDOW)"),
        ({"COMPACTOR_CONTEXT_WINDOW": "-5"}, "policy.context_window"),
        ({"COMPACTOR_AUTOCOMPACT_PCT": "0"}, "policy.autocompact_pct"),
        ({"COMPACTOR_AUTOCOMPACT_PCT": "101"}, "policy.autocompact_pct"),
        ({"COMPACTOR_DISABLE_COMPACT": "maybe"}, "COMPACTOR_DISABLE_COMPACT (policy.compact)"),
        ({"COMPACTOR_COUNTER": "words"}, "counter (from COMPACTOR_COUNTER)"),
        ({"COMPACTOR_SUMMARIZER": "gpt"}, "summarizer"),
        ({"COMPACTOR_LLM_MAX_OUTPUT_TOKENS": "50000"}, "llm.max_output_tokens"),
        ({"COMPACTOR_CONTEXT_WINDOW": "20000"}, "policy (from COMPACTOR_CONTEXT_WINDOW)"),
    ],
)
def test_bad_env_values_fail_loudly_naming_the_setting(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_settings(env=env)
    assert named in str(info.value)


def test_an_unknown_key_in_the_file_is_an_error_naming_file_and_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[policy]\ncontext_windw = 1\n")
    with pytest.raises(ConfigError, match=r"policy\.context_windw \(from .*c\.toml\)"):
        load_settings(path, env={})


def test_a_negative_tool_threshold_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[dedup.thresholds]\nBash = -1\n")
    with pytest.raises(ConfigError, match="Bash"):
        load_settings(path, env={})


def test_a_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "nope.toml", env={})


def test_a_malformed_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(write(tmp_path / "c.toml", "[policy\n"), env={})
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_settings(write(tmp_path / "c.json", "{"), env={})
    with pytest.raises(ConfigError, match="table of settings"):
        load_settings(write(tmp_path / "d.json", "[1]"), env={})


NESTINGS = {
    "arrays.json": '{"policy": ' + "[" * 100_000 + "]" * 100_000 + "}",
    "tables.json": '{"a": ' * 100_000 + "1" + "}" * 100_000,
    "tables-just-parsed.json": '{"a": ' * 950 + "1" + "}" * 950,
    "arrays.toml": "x = " + "[" * 100_000 + "]" * 100_000 + "\n",
    "tables.toml": "x = " + "{a=" * 100_000 + "1" + "}" * 100_000 + "\n",
}


@pytest.mark.parametrize("name", sorted(NESTINGS))
def test_a_file_nested_too_deeply_is_a_config_error_naming_the_file(tmp_path: Path, name: str) -> None:
    path = write(tmp_path / name, NESTINGS[name])
    with pytest.raises(ConfigError, match=re.escape(str(path))):
        load_settings(path, env={})


@pytest.mark.parametrize("name", ["arrays.json", "tables.toml"])
def test_the_cli_says_a_file_nested_too_deeply_is_a_config_error(tmp_path: Path, name: str) -> None:
    import subprocess
    import sys

    path = write(tmp_path / name, NESTINGS[name])
    text = write(tmp_path / "a.txt", "hello")
    done = subprocess.run(
        [sys.executable, "-m", "compactor", "tokens", "--config", str(path), str(text)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("compactor: config_invalid: ") and str(path) in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_file_type_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\.toml or \.json"):
        load_settings(write(tmp_path / "c.yaml", "a: 1"), env={})


def test_the_process_environment_is_the_default_source(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACTOR_COUNTER", "rough")
    assert load_settings().counter == "rough"


def test_recovery_tools_match_mcp_names_by_their_last_part() -> None:
    dedup = Settings().dedup
    assert dedup.is_recovery_tool("ccr_get")
    assert dedup.is_recovery_tool("mcp__compactor__ccr_get")
    assert not dedup.is_recovery_tool("Read")


def test_a_percentage_too_small_to_leave_any_threshold_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"policy.*autocompact_pct"):
        load_settings(env={"COMPACTOR_AUTOCOMPACT_PCT": "0.0001"})


def test_an_env_var_does_not_hide_a_file_section_that_is_not_a_table(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "policy = 5\n")
    with pytest.raises(ConfigError, match=r"policy.*c\.toml"):
        load_settings(path, env={"COMPACTOR_CONTEXT_WINDOW": "300000"})
    with pytest.raises(ConfigError, match=r"policy.*c\.toml"):
        load_settings(path, env={}, overrides={"policy.context_window": 300_000})


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[policy]\nautocompact_pct = true\n", "policy.autocompact_pct"),
        ("[policy]\ncontext_window = true\n", "policy.context_window"),
        ("[dedup]\nmin_length = false\n", "dedup.min_length"),
        ("[dedup.thresholds]\nBash = true\n", "dedup.thresholds"),
        ("[pipeline]\ntail_tokens = true\n", "pipeline.tail_tokens"),
        ("[llm]\ntimeout_seconds = true\n", "llm.timeout_seconds"),
        ("[attachments]\nmax_files = true\n", "attachments.max_files"),
    ],
)
def test_a_boolean_in_the_file_is_not_taken_for_a_number(tmp_path: Path, text: str, named: str) -> None:
    path = write(tmp_path / "c.toml", text)
    with pytest.raises(ConfigError, match=rf"{named}.*c\.toml"):
        load_settings(path, env={})


def test_booleans_are_still_booleans(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[policy]\nauto_compact = false\n[dedup]\nenabled = false\n")
    settings = load_settings(path, env={})
    assert settings.policy.auto_compact is False and settings.dedup.enabled is False


def test_loading_settings_imports_neither_templates_nor_the_file_watcher() -> None:
    import subprocess
    import sys

    code = (
        "import sys, compactor.core.config as c; c.load_settings(env={}); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'watchfiles', 'tiktoken') "
        "or m in ('attachments.builder', 'attachments.files', 'compactor.engine.pipeline')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("[policy]\ncontext_window = 99999999999999999999999\n", "policy.context_window"),
        ("[attachments]\nfiles_total = 10000000000\n", "attachments.files_total"),
        ("[attachments.selection]\ntail_weight = 1e300\n", "attachments.selection.tail_weight"),
        ("[masking]\ncache_ttl_seconds = 1e12\n", "masking.cache_ttl_seconds"),
        ("[dedup.thresholds]\nBash = 99999999999\n", "dedup.thresholds"),
    ],
)
def test_a_number_over_the_bound_is_an_error_naming_the_setting(tmp_path: Path, text: str, named: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)) as caught:
        load_settings(write(tmp_path / "s.toml", text))
    assert "largest value a setting accepts (1,000,000,000)" in str(caught.value)


def test_the_largest_bound_value_itself_is_accepted(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path / "s.toml", "[policy]\ncontext_window = 1000000000\n"))
    assert settings.policy.context_window == 1_000_000_000


def test_there_is_no_shared_ceiling_by_default_and_the_files_keep_their_own_budgets() -> None:
    settings = load_settings(env={})
    assert context_budget(settings) is None
    budgets = settings.attachments
    assert (budgets.max_files, budgets.file_tokens, budgets.files_total) == (12, 1_500, 50_000)
    assert (budgets.skill_tokens, budgets.skills_total) == (5_000, 25_000)


def test_a_shared_ceiling_is_opt_in_and_zero_says_none(tmp_path: Path) -> None:
    assert context_budget(load_settings(env={"COMPACTOR_CONTEXT_TOKENS": "8000"})) == 8_000
    assert context_budget(load_settings(env={"COMPACTOR_CONTEXT_TOKENS": "0"})) is None
    assert context_budget(load_settings(write(tmp_path / "c.toml", "[pipeline]\ncontext_tokens = 0\n"), env={})) is None


def test_a_shared_ceiling_below_the_minimum_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"pipeline\.context_tokens"):
        load_settings(env={}, overrides={"pipeline.context_tokens": MIN_CONTEXT_TOKENS - 1})
