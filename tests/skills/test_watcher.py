"""Hot reload: a SKILL.md written under a watched root reaches the registry."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from skills import SkillRegistry, SkillsError, SkillWatcher

WAIT = 30.0
"""Upper bound for a reload to arrive; the test passes as soon as it does."""


def test_a_new_skill_file_is_picked_up_without_a_restart(tmp_path: Path) -> None:
    registry = SkillRegistry([tmp_path])
    arrived = threading.Event()

    def on_reload(reg: SkillRegistry) -> None:
        if "fresh" in reg:
            arrived.set()

    with registry.watch(on_reload=on_reload, debounce_ms=50) as watcher:
        folder = tmp_path / "fresh"
        folder.mkdir()
        (folder / "SKILL.md").write_text("---\nname: fresh\ndescription: new\n---\nHi\n")
        assert arrived.wait(WAIT), f"no reload seen (error: {watcher.error})"
    assert registry.get("fresh").description == "new"
    assert watcher.reloads >= 1


def test_an_edited_description_is_reloaded(tmp_path: Path) -> None:
    skill = tmp_path / "s" / "SKILL.md"
    skill.parent.mkdir()
    skill.write_text("---\nname: s\ndescription: old\n---\n")
    registry = SkillRegistry([tmp_path])
    changed = threading.Event()

    def on_reload(reg: SkillRegistry) -> None:
        if "s" in reg and reg.get("s").description == "new":
            changed.set()

    with SkillWatcher(registry, on_reload=on_reload, debounce_ms=50):
        skill.write_text("---\nname: s\ndescription: new\n---\n")
        assert changed.wait(WAIT)


def test_watching_no_existing_root_is_an_error(tmp_path: Path) -> None:
    registry = SkillRegistry([tmp_path / "absent"])
    with pytest.raises(SkillsError, match="nothing to watch"):
        registry.watch()


def test_a_watcher_started_again_after_stop_watches_again(tmp_path: Path) -> None:
    registry = SkillRegistry([tmp_path])
    arrived = threading.Event()

    def on_reload(reg: SkillRegistry) -> None:
        if "later" in reg:
            arrived.set()

    watcher = SkillWatcher(registry, on_reload=on_reload, debounce_ms=50)
    watcher.start()
    watcher.stop()
    with watcher:
        folder = tmp_path / "later"
        folder.mkdir()
        (folder / "SKILL.md").write_text("---\nname: later\n---\nHi\n")
        assert arrived.wait(WAIT), f"no reload after a restart (error: {watcher.error})"
