"""The attachments package exports exactly its public names."""

from __future__ import annotations

import importlib
import pkgutil

import attachments

CONTRACT = {
    "Attachment",
    "AttachmentSet",
    "Budgets",
    "DiskFiles",
    "FileSource",
    "RecordedFiles",
    "build_attachments",
    "is_memory_file",
    "pending_deltas",
    "reread_coverage",
}


def test_all_is_sorted_and_holds_the_contract() -> None:
    assert attachments.__all__ == sorted(attachments.__all__)
    assert set(attachments.__all__) >= CONTRACT
    for name in attachments.__all__:
        assert getattr(attachments, name) is not None


def test_all_is_exactly_the_union_of_the_public_modules_exports() -> None:
    exported: set[str] = set()
    for module in pkgutil.iter_modules(attachments.__path__):
        if not module.name.startswith("_"):
            exported.update(importlib.import_module(f"attachments.{module.name}").__all__)
    assert set(attachments.__all__) == exported


def test_every_template_ships_with_the_package() -> None:
    from importlib.resources import files

    names = {p.name for p in files("attachments").joinpath("templates").iterdir()}
    assert {
        "reminder.j2",
        "file.j2",
        "skill.j2",
        "skills.j2",
        "plan_file.j2",
        "plan_mode.j2",
        "task_status.j2",
        "deferred_tools_delta.j2",
        "agent_listing_delta.j2",
        "mcp_instructions_delta.j2",
    } <= names
