"""Claude Code's settings file: the statusLine entry goes in before the closing brace, every other byte kept."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ccr.root_errors import InputInvalid, InvalidRequest
from compactor.claude_code.user_settings import BACKUP_SUFFIX, install_status_line, status_line_setting

SETTING = status_line_setting("/bin/compactor statusline")


@pytest.mark.parametrize(
    "original",
    [
        "{}",
        "{}\n",
        '{"model": "opus"}',
        '{\n  "hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "x"}]}]},\n  "env": {}\n}\n\n',
        '{\n\t"model": "sonnet",   "theme": "dark"\n}',
    ],
)
def test_the_entry_is_added_and_the_rest_is_byte_for_byte_the_same(tmp_path: Path, original: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(original, encoding="utf-8")
    done = install_status_line(path, SETTING)
    assert done.outcome == "added" and done.backup == tmp_path / f"settings.json{BACKUP_SUFFIX}"
    assert done.backup.read_text(encoding="utf-8") == original
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data.pop("statusLine") == SETTING and data == json.loads(original)
    head = original.rstrip()[:-1].rstrip()
    assert text.startswith(head) and text.endswith(original[original.rstrip().rfind("}") :])
    assert install_status_line(path, SETTING).outcome == "unchanged" and path.read_text(encoding="utf-8") == text


def test_a_missing_or_empty_file_gets_just_the_entry(tmp_path: Path) -> None:
    for path in (tmp_path / "new" / "settings.json", tmp_path / "empty.json"):
        if path.name == "empty.json":
            path.write_text("", encoding="utf-8")
        done = install_status_line(path, SETTING)
        assert done.outcome == "added" and done.backup is None
        assert json.loads(path.read_text(encoding="utf-8")) == {"statusLine": SETTING}


def test_another_status_line_is_kept_unless_forced_and_bad_json_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text('{"statusLine": {"type": "command", "command": "mine"}, "a": 1}', encoding="utf-8")
    with pytest.raises(InvalidRequest, match="--force"):
        install_status_line(path, SETTING)
    assert install_status_line(path, SETTING, force=True).outcome == "replaced"
    assert json.loads(path.read_text(encoding="utf-8")) == {"statusLine": SETTING, "a": 1}
    for bad in ("[1, 2]", "{ nope"):
        path.write_text(bad, encoding="utf-8")
        with pytest.raises(InputInvalid):
            install_status_line(path, SETTING)
        assert path.read_text(encoding="utf-8") == bad
