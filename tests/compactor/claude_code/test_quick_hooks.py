"""The session-start hook answers "nothing to say" from its input alone, exactly when the full hook would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactor.claude_code.hooks import HookInput, parse_hook_input, session_start
from compactor.claude_code.quick_hooks import _OPTIONAL_TEXT, nothing_to_say
from compactor.core.errors import CompactorError

_VALUES = st.one_of(
    st.none(),
    st.sampled_from(["startup", "resume", "clear", "compact", "", "s1", "../x", "a\n", "x" * 200]),
    st.integers(),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
)
_INPUTS = st.dictionaries(
    st.sampled_from(
        ["session_id", "source", "transcript_path", "cwd", "hook_event_name", "trigger", "custom_instructions", "extra"]
    ),
    _VALUES,
    max_size=6,
)


def _full_hook_says_nothing(data: bytes, home: Path) -> bool:
    """What the full hook does with ``data``: True when it prints nothing and reports nothing."""
    try:
        return session_start(parse_hook_input(data), home=home) is None
    except CompactorError:
        return False


@settings(max_examples=300, deadline=None)
@given(_INPUTS)
def test_nothing_to_say_only_where_the_full_hook_says_nothing(value: dict[str, object]) -> None:
    home = Path("/nonexistent-compactor-home")
    data = json.dumps(value).encode()
    if nothing_to_say(data, {"COMPACTOR_HOME": str(home)}):
        assert _full_hook_says_nothing(data, home)


@pytest.mark.parametrize("data", [b"{", b"[1]", b'"x"', b"\xff", b"{}", b'{"session_id": 5, "source": "startup"}'])
def test_bad_input_goes_to_the_full_hook_which_says_why(data: bytes) -> None:
    assert not nothing_to_say(data, {})


def test_a_start_that_is_not_after_a_compaction_has_nothing_to_say() -> None:
    for source in ("startup", "resume", "clear", None):
        assert nothing_to_say(json.dumps({"session_id": "s1", "source": source}).encode(), {})


def test_after_a_compaction_only_a_session_with_no_record_and_no_memory_has_nothing_to_say(tmp_path: Path) -> None:
    data = json.dumps({"session_id": "s1", "source": "compact"}).encode()
    home = {"COMPACTOR_HOME": str(tmp_path)}
    assert nothing_to_say(data, home)
    assert not nothing_to_say(data, {**home, "COMPACTOR_MEMORY_DB": str(tmp_path / "memory.db")})
    assert not nothing_to_say(data, {**home, "COMPACTOR_CONFIG": str(tmp_path / "settings.toml")})
    assert nothing_to_say(data, {**home, "COMPACTOR_MEMORY_DB": "  "})  # empty settings are not set
    (tmp_path / "sessions").mkdir()
    (tmp_path / "sessions" / "s1.json").write_text("{}")
    assert not nothing_to_say(data, home)


def test_oversized_input_goes_to_the_full_hook() -> None:
    data = json.dumps({"session_id": "s1", "source": "startup", "extra": "x" * (1024 * 1024)}).encode()
    assert not nothing_to_say(data, {})


def test_the_quick_answer_checks_every_optional_text_field_the_hook_input_has() -> None:
    optional_text = {
        name
        for name, field in HookInput.model_fields.items()
        if name != "session_id" and field.annotation == str | None
    }
    assert set(_OPTIONAL_TEXT) == optional_text and set(HookInput.model_fields) == optional_text | {"session_id"}
