"""Skill discovery reads SKILL.md front matter under the configured roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from skills import SkillFileError, SkillRoot, default_roots, discover, parse_skill, read_skill_body


def write_skill(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_name_and_description_come_from_the_front_matter(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "pdf", "---\nname: pdf-tools\ndescription: Work with PDF files.\n---\n# Body\n")
    info = parse_skill(path, source="project")
    assert (info.name, info.description, info.source) == ("pdf-tools", "Work with PDF files.", "project")
    assert info.path == str(path) and info.directory == str(path.parent)


def test_quoted_block_and_continued_values_are_read(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path,
        "x",
        "---\n"
        "name: 'it''s'\n"
        "description: >\n  Folded across\n  two lines.\n"
        "notes: |\n  keep\n  lines\n"
        "long: first part\n  second part\n"
        'quoted: "say \\"hi\\""  \n'
        "allowed-tools:\n  - Read\n  - Bash\n"
        "inline: [a, b]\n"
        "# a comment line\n"
        "---\nbody\n",
    )
    info = parse_skill(path)
    assert info.name == "it's"
    assert info.description == "Folded across two lines."
    assert info.fields["notes"] == "keep\nlines"
    assert info.fields["long"] == "first part second part"
    assert info.fields["quoted"] == 'say "hi"'
    assert info.fields["allowed-tools"] == "Read, Bash"
    assert info.fields["inline"] == "a, b"


def test_a_comment_after_a_quoted_value_is_not_part_of_it(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path, "x", "---\nname: \"pdf-tools\"  # shown in menus\ndescription: 'Work with PDFs' # short\n---\n"
    )
    info = parse_skill(path)
    assert (info.name, info.description) == ("pdf-tools", "Work with PDFs")


def test_each_escape_in_a_double_quoted_value_is_read_once(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "x", '---\nname: x\ndescription: "C:\\\\new \\"dir\\"\\there"\n---\n')
    assert parse_skill(path).description == 'C:\\new "dir"\there'


def test_a_skill_without_front_matter_is_named_after_its_folder(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "plain-skill", "# Just a body\n")
    info = parse_skill(path)
    assert (info.name, info.description) == ("plain-skill", "")
    assert read_skill_body(path) == "# Just a body\n"


def test_the_body_excludes_the_front_matter(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "s", "---\nname: s\n---\n\nDo the thing.\n")
    assert read_skill_body(path) == "Do the thing.\n"


@pytest.mark.parametrize(
    "text",
    ["---\nname: never closed\n", "---\nthis is not a key value line\n---\n"],
    ids=["unclosed", "not-key-value"],
)
def test_malformed_front_matter_raises_a_skill_file_error(tmp_path: Path, text: str) -> None:
    path = write_skill(tmp_path, "bad", text)
    with pytest.raises(SkillFileError) as caught:
        parse_skill(path)
    assert caught.value.path == str(path)
    assert caught.value.exit_code == 65


def test_an_unreadable_skill_file_raises_a_skill_file_error(tmp_path: Path) -> None:
    with pytest.raises(SkillFileError, match="cannot read"):
        read_skill_body(tmp_path / "missing" / "SKILL.md")


def test_discover_walks_roots_in_order_and_ignores_missing_roots(tmp_path: Path) -> None:
    project, user = tmp_path / "project", tmp_path / "user"
    write_skill(project, "b", "---\nname: b\n---\n")
    write_skill(project, "a", "---\nname: a\n---\n")
    write_skill(user, "c", "---\nname: c\n---\n")
    (project / "not-a-skill").mkdir()
    found = discover(
        [SkillRoot(path=str(project), source="project"), tmp_path / "absent", SkillRoot(path=str(user), source="user")]
    )
    assert [(s.name, s.source) for s in found] == [("a", "project"), ("b", "project"), ("c", "user")]


def test_one_bad_skill_file_does_not_hide_the_others(tmp_path: Path) -> None:
    write_skill(tmp_path, "good", "---\nname: good\n---\n")
    bad = write_skill(tmp_path, "bad", "---\nname: bad\n")
    errors: list[SkillFileError] = []
    found = discover([tmp_path], errors=errors)
    assert [s.name for s in found] == ["good"]
    assert [e.path for e in errors] == [str(bad)]


def test_default_roots_are_project_user_then_plugins(tmp_path: Path) -> None:
    roots = default_roots(tmp_path / "repo", home=tmp_path / "home", plugin_dirs=[tmp_path / "plug"])
    assert [(r.path, r.source) for r in roots] == [
        (str(tmp_path / "repo" / ".claude" / "skills"), "project"),
        (str(tmp_path / "home" / ".claude" / "skills"), "user"),
        (str(tmp_path / "plug" / "skills"), "plugin"),
    ]


def test_discover_takes_a_single_root_as_one_root(tmp_path: Path) -> None:
    write_skill(tmp_path, "solo", "---\nname: solo\n---\n")
    assert [s.name for s in discover(str(tmp_path))] == ["solo"]
    assert [s.name for s in discover(tmp_path)] == ["solo"]
