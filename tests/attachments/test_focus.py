"""A long file is cut around where the agent worked last, with line numbers; the whole is in CCR."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ccr
from attachments import Budgets, DiskFiles, build_file_attachments
from attachments._focus import OUTLINE_LINES, plan_focus
from attachments.selection import FileSelection
from attachments.worksites import LineRange
from compactor.core.messages import Message, ToolUseBlock
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.tokens import TiktokenCounter

RECENT = Budgets(selection=FileSelection(strategy="recent"))


def source(n: int) -> str:
    out = ["import os\n"]
    for i in range(1, n):
        out.append(f"def handler_{i}(request):\n" if i % 25 == 0 else f"    total_{i} = compute({i}, {i * 7})\n")
    return "".join(out)


def use(tool_id: str, name: str, **inputs: object) -> Message:
    return Message(role="assistant", content=[ToolUseBlock(id=tool_id, name=name, input=dict(inputs))])


def restore(path: Path, history: list[Message], counter: TiktokenCounter, store: ccr.Store, budgets: Budgets = RECENT):  # type: ignore[no-untyped-def]
    entry = ReadFileEntry(path=str(path), content=path.read_text(), timestamp=1.0)
    attached, skipped = build_file_attachments(
        {entry.path: entry},
        SessionState(),
        [],
        budgets=budgets,
        counter=counter,
        store=store,
        files=DiskFiles(),
        history=history,
    )
    assert skipped == []
    [attachment] = attached
    return attachment


def test_a_long_file_shows_its_last_edit_with_line_numbers_and_not_its_head(
    tmp_path: Path, counter: TiktokenCounter, store: ccr.Store
) -> None:
    path = tmp_path / "big.py"
    content = source(3_000).replace("    total_1510 = compute(1510, 10570)\n", "    total_1510 = fixed(1510)\n")
    path.write_text(content)
    history = [
        use("r", "Read", file_path=str(path)),
        use(
            "e",
            "Edit",
            file_path=str(path),
            old_string="compute(1510, 10570)",
            new_string="    total_1510 = fixed(1510)",
        ),
    ]
    attachment = restore(path, history, counter, store)
    [entry] = attachment.entries
    text = attachment.message.text()
    assert entry.truncated and entry.handle is not None and ccr.marker(entry.handle) in text
    assert counter.count_text(text) == attachment.tokens <= 5_000
    assert "1511\t    total_1510 = fixed(1510)" in text  # line 1 is the import: the edit is on line 1511
    assert "2\t    total_1 = compute(1, 7)" not in text, "the head is not where the work was"
    assert "1501\tdef handler_1500(request):" in text, "the outline leads with the definition the edit is in"
    assert "  26\tdef handler_25(request):" in text, "then the file's definitions from the top"
    assert text.count("\tdef handler_") <= OUTLINE_LINES, "a short outline"
    assert store.get(entry.handle).decode() == content, "the whole file is stored, so any range can be fetched"


def test_a_long_import_block_leaves_the_outline_to_the_definitions(
    tmp_path: Path, counter: TiktokenCounter, store: ccr.Store
) -> None:
    imports = "".join(f"import module_{i}\n" for i in range(30))
    body = "".join(f"    total_{i} = compute({i})\n" for i in range(800))
    path = tmp_path / "big.py"
    path.write_text(imports + "def first(request):\n" + body + "def second(request):\n" + body)
    history = [use("r", "Read", file_path=str(path), offset=1_500, limit=10)]
    text = restore(path, history, counter, store).message.text()
    assert "\tdef first(request):" in text and "\tdef second(request):" in text
    shown_imports = text.count("\timport module_")
    assert 0 < shown_imports <= OUTLINE_LINES - 2, "imports fill what the definitions leave of the outline"


def test_the_newest_partial_read_is_shown_when_no_edit_is_found(
    tmp_path: Path, counter: TiktokenCounter, store: ccr.Store
) -> None:
    path = tmp_path / "big.py"
    path.write_text(source(3_000))
    history = [use("r", "Read", file_path=str(path), offset=2_000, limit=40)]
    text = restore(path, history, counter, store).message.text()
    assert all(f"{n}\t" in text for n in range(2_000, 2_040))
    assert "[lines 2040-" in text, "a marker stands for each run of lines not shown"


def test_a_file_without_any_site_keeps_its_head(tmp_path: Path, counter: TiktokenCounter, store: ccr.Store) -> None:
    path = tmp_path / "big.py"
    path.write_text(source(3_000))
    text = restore(path, [use("r", "Read", file_path=str(path))], counter, store).message.text()
    assert "Only the first" in text and "total_1 = compute(1, 7)" in text


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    sites=st.lists(st.tuples(st.integers(1, 600), st.integers(0, 400), st.booleans()), min_size=1, max_size=10),
    limit=st.integers(200, 3_000),
)
def test_a_focused_cut_never_exceeds_its_budget(
    counter: TiktokenCounter, sites: list[tuple[int, int, bool]], limit: int
) -> None:
    content = source(600)
    ranges = [LineRange(start=s, end=min(s + n, 600), kind="edit" if is_edit else "read") for s, n, is_edit in sites]
    focus = plan_focus(
        content, ranges, lambda body, info: f"<f>\n{body}\n</f> {info.marker}", limit=limit, counter=counter
    )
    if focus is not None:
        assert focus.tokens == counter.count_text(focus.text) <= limit


def test_an_edit_whose_surroundings_do_not_fit_is_shown_alone(counter: TiktokenCounter) -> None:
    long_line = "    padding = '" + "lorem ipsum " * 60 + "'\n"
    content = long_line * 20 + "    answer = 42\n" + long_line * 20

    def render(body: str, info: object) -> str:
        return f"<f>\n{body}\n</f>"

    site = [LineRange(start=21, end=21, kind="edit")]
    alone = counter.count_text(render("21\t    answer = 42\n     \t[lines 22-41 not shown]", None))
    focus = plan_focus(content, site, render, limit=alone + 40, counter=counter)
    assert focus is not None and "answer = 42" in focus.text and "lorem" not in focus.text
