"""Step 5: the attachments keep their own budgets (12 files of 1,500 by default) unless a shared ceiling is opted into."""

from __future__ import annotations

from pathlib import Path

from attachments import Budgets, DiskFiles
from ccr import open_store
from compactor.core.config import load_settings
from compactor.core.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from compactor.core.session import ReadFileEntry, SessionState
from compactor.core.tokens import RoughCounter
from compactor.engine.attachment_step import shared_budgets
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactOptions, compact, head_and_tail
from compactor.summarizers import ExtractiveSummarizer

COUNTER = RoughCounter()


def _conversation(rounds: int = 30, size: int = 12_000) -> list[Message]:
    messages = [Message(role="user", content="Port the parser")]
    for i in range(rounds):
        messages += [
            Message(role="assistant", content=[ToolUseBlock(id=f"t{i}", name="Bash", input={"command": f"make {i}"})]),
            Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{i}", content=f"make {i}\n" + "y" * size)]),
        ]
    return [*messages, Message(role="assistant", content=[TextBlock(text="Done.")])]


def _state_with_files(tmp_path: Path, count: int, lines: int) -> SessionState:
    state = SessionState()
    for n in range(count):
        path = tmp_path / f"module_{n}.py"
        path.write_text("".join(f"def function_{n}_{i}(): return {i}\n" for i in range(lines)))
        state.record_read(ReadFileEntry(path=str(path), content=path.read_text(), timestamp=float(n)))
    return state


def _compact(state: SessionState, options: CompactOptions):  # type: ignore[no-untyped-def]
    messages = _conversation()
    return compact(
        messages,
        state,
        store=open_store(":memory:"),
        counter=COUNTER,
        summarizer=ExtractiveSummarizer(),
        files=DiskFiles(),
        options=options,
    )


def test_by_default_twelve_files_come_back_each_within_1500_tokens(tmp_path: Path) -> None:
    state = _state_with_files(tmp_path, count=13, lines=420)  # each file about 4,000 rough tokens
    out = _compact(state, CompactOptions(tail_tokens=2_000))
    files = [a for a in out.report.attachments if a.type == "file"]
    assert out.ok and len(files) == 12
    assert all(a.truncated and a.handle is not None and 1_000 < a.tokens <= 1_500 for a in files)
    assert sum(a.tokens for a in files) > 6_000 * 2  # far more than the old 3% ceiling could have left


def test_the_cards_budgets_bring_five_files_of_four_thousand_tokens_back_whole(tmp_path: Path) -> None:
    state = _state_with_files(tmp_path, count=6, lines=420)
    card = Budgets(max_files=5, file_tokens=5_000, files_total=50_000)
    out = _compact(state, CompactOptions(tail_tokens=2_000, budgets=card))
    files = [a for a in out.report.attachments if a.type == "file"]
    assert out.ok and len(files) == 5
    assert all(not a.truncated and 3_000 < a.tokens <= 5_000 for a in files)


def test_with_the_default_settings_the_summary_never_squeezes_the_files_out(tmp_path: Path) -> None:
    orch = Orchestrator(settings=load_settings(env={}), store=open_store(":memory:"), counter=COUNTER)
    for message in _conversation():
        orch.add_message(message)
    for path, entry in _state_with_files(tmp_path, count=13, lines=100).read_files.items():
        orch.state.read_files[path] = entry
    out = orch.compact("manual")
    files = [a for a in out.report.attachments if a.type == "file"]
    assert out.ok and len(files) == 12 and not any(a.truncated for a in files)


def test_an_opted_in_shared_ceiling_cuts_the_files_to_what_the_summary_and_tail_leave(tmp_path: Path) -> None:
    state = _state_with_files(tmp_path, count=6, lines=420)
    out = _compact(state, CompactOptions(tail_tokens=2_000, context_tokens=8_000))
    files = [a for a in out.report.attachments if a.type == "file"]
    assert out.ok and sum(a.tokens for a in files) <= 8_000 - out.report.summary_tokens


def test_the_tail_takes_its_own_cap_and_a_ceiling_only_when_one_is_set() -> None:
    messages = _conversation(rounds=40, size=2_000)
    sizes = [COUNTER.count_message(m) for m in messages]
    _, own = head_and_tail(messages, sizes, CompactOptions(tail_tokens=6_000))
    _, shared = head_and_tail(messages, sizes, CompactOptions(tail_tokens=6_000, context_tokens=6_000))
    assert 4_000 < sum(COUNTER.count_message(m) for m in own) <= 6_000
    assert sum(COUNTER.count_message(m) for m in shared) < 4_000


def test_shared_budgets_never_exceed_the_cards() -> None:
    cut = shared_budgets(Budgets(max_files=5, file_tokens=5_000), 1_000_000, with_skills=True)
    assert cut.file_tokens <= 5_000 and cut.files_total <= 50_000 and cut.skills_total <= 25_000


def test_the_last_round_is_kept_whole_past_the_tail_cap_within_its_own_allowance() -> None:
    messages = _conversation(rounds=8, size=16_000)[:-1]  # rounds of about 4,000 rough tokens, a call last
    sizes = [COUNTER.count_message(m) for m in messages]
    _, tail = head_and_tail(messages, sizes, CompactOptions(tail_tokens=3_000))
    assert tail and tail[0].role == "assistant" and sum(COUNTER.count_message(m) for m in tail) > 3_000
    _, none = head_and_tail(messages, sizes, CompactOptions(tail_tokens=0))
    assert none == [], "no tail asked, none kept"
