"""Benchmark: how long building post-compaction attachments takes, and how much they restore.

Files are generated in a temporary folder (source-like lines, from small to
very large), read into a snapshot, and restored with the default budgets and
the tiktoken counter into an in-memory CCR store.

Figure (protocol in ``_common.py``; ``python benchmarks/run.py --only attachments``):
``build_attachments`` against the work content addressing and counting
cannot skip: hashing each file's UTF-8 bytes once with ``hashlib.sha256``
(a cut tail is stored under its hash) and tokenizing, once, the text of
the attachments it made. Interleaved, with a fresh counter each build so
no count is reused from the previous one. Target: at most 3.0 (the build
also reads each file, plans its cut from line counts and renders).

A second figure builds the same attachments with a history of edits and
partial reads in every file, so that each long file is cut around where the
work was (``attachments._focus``), against the same floor. Target: 3.0.

Run alone for the sizes and what was restored: ``python benchmarks/bench_attachments.py``.
"""

from __future__ import annotations

import hashlib
import statistics
import tempfile
import time
from pathlib import Path

from _common import Figure, interleaved

import ccr
from attachments import Budgets, DiskFiles, build_attachments
from compactor.core.messages import Message, ToolUseBlock
from compactor.core.session import InvokedSkill, ReadFileEntry, SessionState
from compactor.core.tokens import TiktokenCounter, block_texts

SIZES = [40, 400, 4_000, 40_000, 400_000]
"""Lines per generated file: the largest ones must be cut."""

RUNS = 5


def source_lines(n: int, seed: int) -> str:
    return "".join(f"    result_{seed}_{i} = transform(record[{i}], factor={i % 17})  # step {i}\n" for i in range(n))


def make_inputs(folder: str) -> tuple[dict[str, ReadFileEntry], SessionState]:
    """The snapshot of generated files (written under ``folder``) and a state with six invoked skills."""
    snapshot: dict[str, ReadFileEntry] = {}
    for i, n in enumerate(SIZES):
        path = Path(folder) / f"module_{i}.py"
        content = source_lines(n, i)
        path.write_text(content)
        snapshot[str(path)] = ReadFileEntry(path=str(path), content=content, timestamp=float(i))
    state = SessionState()
    for j in range(6):
        body = "".join(f"Skill {j} rule {k}: keep the change small and tested.\n" for k in range(600))
        state.invoke_skill(InvokedSkill(name=f"skill-{j}", path=f"/s/{j}/SKILL.md", content=body, invoked_at=j))
    return snapshot, state


def work_history(snapshot: dict[str, ReadFileEntry]) -> list[Message]:
    """Three edits and two partial reads in each file, spread over it (what focused cuts follow)."""
    uses: list[ToolUseBlock] = []
    for path, entry in snapshot.items():
        lines = entry.content.splitlines(keepends=True)
        for k in (1, 2, 3):
            line = lines[len(lines) * k // 4]
            uses.append(ToolUseBlock(id=f"e{len(uses)}", name="Edit", input={"file_path": path, "new_string": line}))
        for offset in (len(lines) // 3, len(lines) // 2):
            read = {"file_path": path, "offset": max(offset, 1), "limit": 40}
            uses.append(ToolUseBlock(id=f"r{len(uses)}", name="Read", input=read))
    return [Message(role="assistant", content=[use]) for use in uses]


def figures(quick: bool = False) -> list[Figure]:
    out = [_figure(quick, focused=False), _figure(quick, focused=True)]
    return out


def _figure(quick: bool, *, focused: bool) -> Figure:
    with tempfile.TemporaryDirectory() as folder:
        snapshot, state = make_inputs(folder)
        history = work_history(snapshot) if focused else []

        def build() -> object:
            return build_attachments(
                snapshot,
                state,
                [],
                budgets=Budgets(),
                counter=TiktokenCounter(),
                store=ccr.open_store(":memory:"),
                files=DiskFiles(),
                history=history,
            )

        result = build_attachments(
            snapshot,
            state,
            [],
            budgets=Budgets(),
            counter=TiktokenCounter(),
            store=ccr.open_store(":memory:"),
            files=DiskFiles(),
            history=history,
        )
        texts = [t for m in result.messages for t in block_texts(m)[0]]
        tokenizer = TiktokenCounter()
        if not texts:
            raise RuntimeError("the build made no attachment messages to compare with")

        contents = [entry.content for entry in snapshot.values()]

        def floor() -> None:
            for content in contents:
                hashlib.sha256(content.encode("utf-8")).digest()
            for text in texts:
                tokenizer.count_text(text)

        ratios = interleaved(build, floor, runs=3 if quick else 9)
    name = "build_attachments" + (", cut around the work," if focused else "")
    return Figure(
        f"{name} / (sha256 of the files + tokenize what it made)",
        ratios,
        3.0,
        "<=",
        detail=f"{len(result.entries)} entries, {result.tokens:,} tokens",
    )


def main() -> None:
    counter = TiktokenCounter()
    with tempfile.TemporaryDirectory() as folder:
        snapshot: dict[str, ReadFileEntry] = {}
        for i, n in enumerate(SIZES):
            path = Path(folder) / f"module_{i}.py"
            content = source_lines(n, i)
            path.write_text(content)
            snapshot[str(path)] = ReadFileEntry(path=str(path), content=content, timestamp=float(i))
        state = SessionState()
        for j in range(6):
            body = "".join(f"Skill {j} rule {k}: keep the change small and tested.\n" for k in range(600))
            state.invoke_skill(InvokedSkill(name=f"skill-{j}", path=f"/s/{j}/SKILL.md", content=body, invoked_at=j))
        total_bytes = sum(len(e.content.encode()) for e in snapshot.values())

        timings: list[float] = []
        result = None
        for _ in range(RUNS):
            store = ccr.open_store(":memory:")
            start = time.perf_counter()
            result = build_attachments(
                snapshot, state, [], budgets=Budgets(), counter=counter, store=store, files=DiskFiles()
            )
            timings.append(time.perf_counter() - start)
        assert result is not None

    print(f"files: {len(SIZES)} ({total_bytes / 1e6:.1f} MB read), skills: 6 x ~{counter.count_text(body):,} tokens")
    print(
        f"build_attachments: median {statistics.median(timings) * 1000:.0f} ms, "
        f"min {min(timings) * 1000:.0f} ms over {RUNS} runs"
    )
    print(
        f"attachment tokens: {result.tokens:,} "
        f"(files {sum(a.tokens for a in result.of_type('file')):,}, "
        f"skills {sum(a.tokens for a in result.of_type('skill')):,})"
    )
    truncated = [e for e in result.entries if e.truncated]
    print(
        f"entries: {len(result.entries)}, truncated with a CCR tail: {len(truncated)}, skipped: {len(result.skipped)}"
    )
    for skipped in result.skipped:
        print(f"  skipped {skipped.type} {skipped.path or skipped.name}: {skipped.reason}")


if __name__ == "__main__":
    main()
