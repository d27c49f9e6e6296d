"""The pre-compact note, pinned word for word (it was a jinja2 template; the format strings must say the same)."""

from __future__ import annotations

import subprocess
import sys

from compactor.claude_code._hook_text import pre_compact_note

INTRO = (
    "compactor stored the conversation this compaction summarizes ({n} messages, {size} bytes), byte for byte, "
    "under the marker <<ccr:H>>. Nothing in it is lost: the tool `ccr_retrieve` brings back any part of it "
    "exactly, given a marker (and, to get less than the whole, a query or a line range). It is a deferred tool: "
    'load it first by calling ToolSearch with the query "select:ccr_retrieve". From a shell, `ccr get` does the same.'
)
FOR_THE_SUMMARY = (
    "For whoever writes the summary of this conversation:\n"
    "- State near the top that the conversation before this point is stored as <<ccr:H>> and can be read back "
    "with `ccr_retrieve`. Copy the marker exactly.\n"
)
CITE_RESULTS = (
    "- Wherever the summary mentions one of the tool results listed above (a file that was read, a command's "
    "output, a search), put its marker right next to that mention, exactly as written, so the exact text can be "
    "fetched later instead of running the tool again.\n"
)
CLOSING = (
    "- Copy markers only from this note; never make one up or change a character of one.\n"
    "- Prefer a marker to a long quote: a marker brings back the exact text when it is needed.\n"
)


def test_the_note_lists_the_largest_results_and_counts_the_rest() -> None:
    note = pre_compact_note(
        head="<<ccr:H>>",
        messages=3,
        size=12345,
        results=[("<<ccr:A>>", "Read /src/app.py", 9000)],
        unlisted=2,
        tool="ccr_retrieve",
    )
    assert note == (
        INTRO.format(n=3, size="12,345") + "\n\n"
        "Tool results stored on their own, largest first:\n"
        "- <<ccr:A>>: Read /src/app.py (9,000 bytes)\n"
        "(2 smaller stored result(s) not listed; they are all inside <<ccr:H>>.)\n\n"
        + FOR_THE_SUMMARY
        + CITE_RESULTS
        + CLOSING
    )


def test_without_results_the_note_has_no_list_and_no_advice_on_citing_them() -> None:
    note = pre_compact_note(head="<<ccr:H>>", messages=1, size=10, results=[], unlisted=0, tool="ccr_retrieve")
    assert note == INTRO.format(n=1, size="10") + "\n\n" + FOR_THE_SUMMARY + CLOSING


def test_every_result_is_listed_when_none_is_left_out() -> None:
    results = [("<<ccr:A>>", "Bash: ls", 2_000_000), ("<<ccr:B>>", "Grep 'x' in /p", 5)]
    note = pre_compact_note(head="<<ccr:H>>", messages=2, size=1, results=results, unlisted=0, tool="ccr_retrieve")
    assert "- <<ccr:A>>: Bash: ls (2,000,000 bytes)\n- <<ccr:B>>: Grep 'x' in /p (5 bytes)\n\nFor whoever" in note
    assert "not listed" not in note


def test_storing_a_conversation_imports_no_template_engine_summarizer_or_report_models() -> None:
    code = (
        "import sys\n"
        "import compactor.claude_code.hooks, compactor.engine.head_storage, compactor.summarizers.ledger\n"
        "import compactor.summarizers.ledger_text, compactor.claude_code._hook_text, compactor.claude_code.restore\n"
        "heavy = [m for m in ('jinja2', 'compactor.engine.pipeline', 'compactor.summarizers.extractive', 'tiktoken',"
        " 'compactor.engine.report')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
