"""The registry is a catalog by name that reloads from disk and records invocations."""

from __future__ import annotations

from pathlib import Path

import pytest

from compactor.core.session import SessionState
from skills import SkillFileError, SkillNotFound, SkillRegistry, SkillRoot


def write_skill(root: Path, folder: str, name: str, body: str = "Body.\n") -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: about {name}\n---\n{body}", encoding="utf-8")
    return path


def test_the_first_root_wins_when_two_skills_share_a_name(tmp_path: Path) -> None:
    write_skill(tmp_path / "project", "x", "shared")
    write_skill(tmp_path / "user", "y", "shared")
    registry = SkillRegistry([SkillRoot(path=str(tmp_path / "project"), source="project"), tmp_path / "user"])
    assert registry.get("shared").source == "project"
    assert registry.names() == ["shared"] and len(registry) == 1 and "shared" in registry


def test_unknown_names_raise_skill_not_found(tmp_path: Path) -> None:
    with pytest.raises(SkillNotFound):
        SkillRegistry([tmp_path]).get("nope")


def test_reload_picks_up_new_and_removed_skills(tmp_path: Path) -> None:
    registry = SkillRegistry([tmp_path])
    assert registry.skills == [] and registry.generation == 1
    path = write_skill(tmp_path, "a", "alpha")
    registry.reload()
    assert [s.name for s in registry] == ["alpha"] and registry.generation == 2
    path.unlink()
    registry.reload()
    assert "alpha" not in registry


def test_bad_skill_files_are_reported_after_reload(tmp_path: Path) -> None:
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "SKILL.md").write_text("---\nname: bad\n", encoding="utf-8")
    registry = SkillRegistry([tmp_path])
    assert [type(e) for e in registry.errors] == [SkillFileError]


def test_invoke_loads_the_body_and_records_it_for_the_agent(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "a", "alpha", body="Step one.\n")
    registry = SkillRegistry([tmp_path])
    state = SessionState()
    invoked = registry.invoke(state, "alpha", at=7.0, agent_id="sub")
    assert (invoked.content, invoked.path, invoked.invoked_at) == ("Step one.\n", str(path), 7.0)
    assert state.skills["sub"] == [invoked]
    assert state.announced_skills == ["alpha"]


def test_a_single_root_given_alone_is_one_root_not_its_characters(tmp_path: Path) -> None:
    write_skill(tmp_path, "x", "solo")
    for root in (str(tmp_path), tmp_path, SkillRoot(path=str(tmp_path))):
        registry = SkillRegistry(root)
        assert [r.path for r in registry.roots] == [str(tmp_path)]
        assert registry.names() == ["solo"]
