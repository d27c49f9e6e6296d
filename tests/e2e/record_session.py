"""Record a scripted session of the pinned Claude Code client into ``fixtures/recorded/``.

    python tests/e2e/record_session.py            # writes fixtures/recorded/scripted-<version>.jsonl

The session reads, edits and writes files, runs commands (one in the
background), uses a project skill, writes a plan in plan mode, and is
compacted with ``/compact``; it runs with the plugin, against the fake API of
``fake_api.py``. The transcript is copied with the temporary folder it ran in
replaced by ``/home/user``, so the file names no machine. Needs the client
(``npm ci --prefix tests/e2e``).
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_api import Call, Say, request_text
from harness import CLIENT_VERSION, REPO_ROOT, Session, missing_client_reason

OUTPUT = REPO_ROOT / "fixtures" / "recorded"
NEUTRAL_ROOT = "/home/user"

SKILL = """---
name: release-notes
description: Write release notes for this project from its changelog.
---

# Release notes

1. Read CHANGELOG.md.
2. Group the entries under Added, Changed and Fixed.
3. Keep each entry to one line.
"""

APP = '''"""A tiny inventory service."""


def total(items: list[dict[str, int]]) -> int:
    return sum(item["count"] for item in items)


def main() -> None:
    print(total([{"count": 2}, {"count": 3}]))


if __name__ == "__main__":
    main()
'''

PLAN = """# Plan: add a per-item price

1. Give each item a `price` next to its `count`.
2. Add `value(items)`: the sum of count times price.
3. Print the value in `main`.
"""


def write_plan(body: dict[str, object]) -> Call:
    """Write the plan where plan mode asks for it (the path is in the plan-mode reminder)."""
    found = re.search(r"create your plan at (\S+\.md)", request_text(body))
    assert found is not None, "plan mode named no plan file"
    return Call("Write", {"file_path": found.group(1), "content": PLAN})


def neutral(text: str, root: str) -> str:
    """``text`` with the temporary folder ``root`` (also as the client spells it in folder names) replaced."""
    for spelling in (str(Path(root).resolve()), root):
        text = text.replace(spelling, NEUTRAL_ROOT)
        text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", spelling), re.sub(r"[^A-Za-z0-9]", "-", NEUTRAL_ROOT))
    return text


def record(session: Session) -> None:
    """Run the scripted session."""
    project = session.project
    (project / "app.py").write_text(APP)
    (project / "CHANGELOG.md").write_text("".join(f"- change {i}: fixed item {i}\n" for i in range(60)))
    skill = project / ".claude" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)

    session.run(
        "Look at app.py and run it.",
        script=[
            Call("Read", {"file_path": str(project / "app.py")}),
            Call("Bash", {"command": "python3 app.py", "description": "Run the app"}),
            Say("app.py sums the item counts; it prints 5."),
        ],
    )
    session.run(
        "Rename total to count_items and add a test file.",
        script=[
            Call(
                "Edit",
                {"file_path": str(project / "app.py"), "old_string": "def total(", "new_string": "def count_items("},
            ),
            Call(
                "Edit",
                {
                    "file_path": str(project / "app.py"),
                    "old_string": "print(total(",
                    "new_string": "print(count_items(",
                },
            ),
            Call(
                "Write",
                {
                    "file_path": str(project / "test_app.py"),
                    "content": "from app import count_items\n\n\ndef test_count() -> None:\n"
                    '    assert count_items([{"count": 1}]) == 1\n',
                },
            ),
            Call("Grep", {"pattern": "count_items", "path": str(project), "output_mode": "content"}),
            Say("Renamed it and added test_app.py."),
        ],
    )
    session.run(
        "Run a slow check in the background while you write the release notes.",
        script=[
            Call(
                "Bash",
                {
                    "command": "sleep 1; echo background check passed",
                    "description": "Slow check",
                    "run_in_background": True,
                },
            ),
            Call("Skill", {"skill": "release-notes"}),
            Call("Read", {"file_path": str(project / "CHANGELOG.md")}),
            Say("Release notes: Fixed items 0 to 59."),
        ],
    )
    session.run(
        "Plan adding a price to each item.",
        args=["--permission-mode", "plan"],
        script=[
            Call("Glob", {"pattern": "*.py", "path": str(project)}),
            write_plan,
            Say("The plan is written."),
        ],
    )
    session.run("/compact keep the plan")
    session.run("What was the plan?", script=[Say("To add a per-item price and a value function.")])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--output", type=Path, default=OUTPUT, help=f"folder to write to (default: {OUTPUT})")
    args = parser.parse_args(argv)
    reason = missing_client_reason()
    if reason is not None:
        print(f"record_session: {reason}", file=sys.stderr)
        return 66
    with tempfile.TemporaryDirectory(prefix="record-") as temp, Session(Path(temp)) as session:
        record(session)
        text = neutral(session.transcript().read_text(encoding="utf-8"), temp)
    args.output.mkdir(parents=True, exist_ok=True)
    target = args.output / f"scripted-{CLIENT_VERSION}.jsonl"
    target.write_text(text, encoding="utf-8")
    print(f"record_session: wrote {target} ({len(text.splitlines())} records)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
