"""Benchmark: the non-LLM cost of one compaction, and replay throughput, against tiktoken.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_pipeline.py [--quick]``):

- ``compact() / tokenize context``, for the project's long fixture session
  and for each real session under ``../shared/transcripts``: the session is
  replayed (the replay's own Orchestrator and its ``RecordedFiles`` file
  source) up to where the replay first compacts (a session it never
  compacts is reported missing, with its size); then ``Orchestrator.compact`` (extractive summary, CCR puts into a
  store file, file and skill attachments, rendering) is timed against
  tokenizing that context's message texts once with tiktoken. Every message
  is already counted, as an agent loop's Orchestrator has them. Target: at
  most 1.0.
- ``count + compact() / tokenize context``, the same sessions and point,
  with the counting included: a fresh Orchestrator (fresh counts) takes the
  messages (``replace_messages`` counts every one) and compacts, against the
  same tokenization. Target: at most 2.0.
- ``replay / tiktoken`` on the long fixture and on each real session:
  tiktoken's time over the text of the messages the replay counts (one
  call per text, parsed beforehand: the tokenization floor), divided by the
  whole replay's time (``compactor.claude_code.replay.replay``, as ``compactor replay``
  calls it: open the store, read, dedup, count, compact, report, close;
  the tokenizer is loaded before either is timed), so higher is faster.
  Target: at least 0.5. Its detail names, against the same floor, what
  no replay can skip (reading the file's lines, a new store, its first
  compaction) and the ratio a replay doing nothing else would reach: where
  that bound is below 0.5, the target cannot be met on that session.

Every session's store files are its own: a store file another session
filled would skip the migrations a new one runs when it is opened.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from _common import REPO, Figure, forget_remembered_results, main, missing, session_name, shared_sessions, timed

from ccr import open_store
from compactor.claude_code.replay import _Replay, replay, replay_transcript
from compactor.claude_code.transcript import Transcript, iter_records, read_transcript
from compactor.core.config import Settings, load_settings
from compactor.core.tokens import TiktokenCounter, block_texts
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.pipeline import CompactionResult

LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"


class _FirstCompaction(Exception):
    def __init__(self, line: int) -> None:
        self.line = line


def _stop_at_first(result: CompactionResult, line: int) -> None:
    raise _FirstCompaction(line)


def first_compaction_line(transcript: Transcript, settings: Settings, folder: Path) -> int | None:
    """The transcript line where the replay first compacts (the replay stops there), or None."""
    store = open_store(folder / "probe.db")
    try:
        replay_transcript(transcript, settings=settings, store=store, on_compaction=_stop_at_first)
    except _FirstCompaction as stop:
        return stop.line
    finally:
        store.close()
    return None


def context_before_compaction(path: Path, folder: Path) -> tuple[Callable[..., Orchestrator], bool]:
    """A maker of Orchestrators holding the replayed session as it stood before its first compaction.

    The session is replayed once, with auto-compaction off, up to that
    point; each call then builds a fresh Orchestrator with a new store file
    from the replay's state, files, calibration and messages (counted, not
    timed), as the replay's own Orchestrator had them; ``counted=False`` leaves
    out the messages, for the caller to add and time. The flag says whether
    the replay compacts the session at all (else the maker holds all of it).
    """
    settings = load_settings(env={})
    transcript = read_transcript(path)
    line = first_compaction_line(transcript, settings, folder)
    entries = [e for e in transcript.entries if line is None or e.line <= line]
    kept = len(entries)
    prefix = transcript.model_copy(
        update={
            "entries": entries,
            "compactions": [c for c in transcript.compactions if c.entry_index < kept],
        }
    )
    quiet = settings.model_copy(update={"policy": settings.policy.model_copy(update={"auto_compact": False})})
    run = _Replay(prefix, quiet, open_store(folder / "prefix.db"), "auto", None, None, None)
    run.run()
    source = run.orch
    counter = TiktokenCounter()

    def make(number: int, *, counted: bool = True) -> Orchestrator:
        orch = Orchestrator(
            settings=settings,
            store=open_store(folder / f"compact{number}.db"),
            counter=counter,
            files=run.files,
            state=source.state.model_copy(deep=True),
            calibration=source.calibration,
            transcript_path=source.transcript_path,
        )
        if counted:
            orch.replace_messages(source.messages)
        return orch

    return make, line is not None


def timed_compaction(make: Callable[..., Orchestrator], number: int) -> tuple[float, CompactionResult]:
    """Seconds of the first compaction of a fresh Orchestrator from ``make`` (store file ``number``), and its result.

    Nothing remembered of earlier runs is kept: a session's first compaction
    meets its head's results for the first time. The store is closed after.
    """
    orch = make(number)
    forget_remembered_results()
    seconds, result = timed(lambda: orch.compact("auto"))
    orch.store.close()
    return seconds, result


def compaction_figures(name: str, make: Callable[..., Orchestrator], compacts: bool, runs: int) -> list[Figure]:
    """``compact() / tokenize context`` and ``count + compact() / tokenize context`` for one session
    (``make`` and ``compacts`` as ``context_before_compaction`` returns them)."""
    tiktoken = TiktokenCounter()
    probe = make(0)
    texts = [t for m in probe.messages for t in block_texts(m)[0]]
    tokens = tiktoken.count_texts(texts)
    names = (f"compact() / tokenize context: {name}", f"count + compact() / tokenize context: {name}")
    if not compacts:
        why = f"the replay never compacts it ({tokens:,} tokens in {len(probe.messages)} messages)"
        return [missing(names[0], 1.0, "<=", why), missing(names[1], 2.0, "<=", why)]

    def tokenize() -> None:
        for text in texts:
            tiktoken.count_text(text)

    def count_and_compact(orch: Orchestrator) -> CompactionResult:
        orch.replace_messages(probe.messages)  # each counted here, by a fresh CachedCounter
        return orch.compact("auto")

    ratios: list[float] = []
    counting: list[float] = []
    failed = None
    for number in range(1, runs + 2):
        compact_seconds, result = timed_compaction(make, number)
        failed = failed or (None if result.ok else result.report.error)
        tokenize_seconds, _ = timed(tokenize)
        fresh = make(1000 + number, counted=False)
        forget_remembered_results()
        counted_seconds, counted = timed(lambda fresh=fresh: count_and_compact(fresh))  # type: ignore[misc]
        failed = failed or (None if counted.ok else counted.report.error)
        again_seconds, _ = timed(tokenize)
        if number > 1:  # the first round warms caches and templates
            ratios.append(compact_seconds / tokenize_seconds)
            counting.append(counted_seconds / again_seconds)
        fresh.store.close()
    detail = f"{len(probe.messages)} messages, {tokens:,} tokens"
    if failed:
        detail += f"; the compaction FAILED: {failed}"
        ratios = counting = [float("inf")]
    return [Figure(names[0], ratios, 1.0, "<=", detail=detail), Figure(names[1], counting, 2.0, "<=")]


def replay_figure(
    name: str, path: Path, folder: Path, runs: int, before_compaction: Callable[..., Orchestrator] | None
) -> Figure:
    """``replay throughput / tiktoken`` for one session, and in its detail the least a replay must do.

    Each round also times, against the same tokenization, what no replay
    can skip: reading the file's lines (``iter_records``: the reader's
    first stage, before any record is put together), opening and closing a
    new store, and, given ``before_compaction`` (a maker from
    ``context_before_compaction`` for a session the replay compacts), its
    first compaction. A replay that did only these and its counting would
    reach the bound the detail names; its other compactions are left out,
    so the true bound is lower still.
    """
    settings = load_settings(env={})
    tiktoken = TiktokenCounter()
    transcript = read_transcript(path)
    texts = [t for m in transcript.messages if not m.is_compact_summary for t in block_texts(m)[0]]
    counter = itertools.count(2_000)  # store files of their own: ``before_compaction`` numbers from 0

    def one_replay() -> int:
        """One replay; the compactions it made."""
        forget_remembered_results()  # as ``compactor replay`` starts: nothing remembered of earlier replays
        store = open_store(folder / f"replay{next(counter)}.db")
        made = len(replay(path, settings=settings, store=store).compactions)
        store.close()
        return made

    def tokenize() -> None:
        for text in texts:
            tiktoken.count_text(text)

    def read_lines() -> None:
        for _ in iter_records(path):
            pass

    def new_store() -> None:
        open_store(folder / f"bound{next(counter)}.db").close()

    def least() -> dict[str, float]:
        """Seconds of each part no replay skips."""
        seconds = {"reading its lines": timed(read_lines)[0], "a new store": timed(new_store)[0]}
        if before_compaction is not None:
            seconds["its first compaction"] = timed_compaction(before_compaction, next(counter))[0]
        return seconds

    ratios = []
    parts: dict[str, list[float]] = {}
    for number in range(runs + 1):
        replay_seconds, times = timed(one_replay)
        tokenize_seconds, _ = timed(tokenize)
        round_parts = least()
        if number:
            ratios.append(tokenize_seconds / replay_seconds)
            for part, seconds in round_parts.items():
                parts.setdefault(part, []).append(seconds / tokenize_seconds)
    shares = {part: statistics.median(values) for part, values in parts.items()}
    least_of = ", ".join(f"{part} {share:.2f}x" for part, share in shares.items())
    made = f"; the replay compacts it {'once' if times == 1 else f'{times} times'}" if times else ""
    return Figure(
        f"replay throughput / tiktoken: {name}",
        ratios,
        0.5,
        ">=",
        detail=(
            f"{len(transcript.messages)} messages, {tiktoken.count_texts(texts):,} tokens{made}. "
            f"What no replay skips, against the floor: {least_of}; a replay doing only that and "
            f"its counting would reach {1 / (1 + sum(shares.values())):.2f}"
        ),
    )


def figures(quick: bool = False) -> list[Figure]:
    runs = 3 if quick else 7
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sessions = [("long fixture", LONG_FIXTURE), *((session_name(s), s) for s in shared_sessions())]
        prepared: list[tuple[str, Path, Path, Callable[..., Orchestrator] | None]] = []
        for index, (name, path) in enumerate(sessions):
            # Each session's store files are its own: a store another session made holds its blobs, and
            # opening it would skip the migrations a new store runs.
            own = folder / str(index)
            own.mkdir()
            make, compacts = context_before_compaction(path, own)
            out.extend(compaction_figures(name, make, compacts, runs))
            prepared.append((name, path, own, make if compacts else None))
        if not shared_sessions():
            out.append(
                missing(
                    "real sessions",
                    0.5,
                    ">=",
                    "no transcript under ../shared/transcripts: "
                    "the compaction and replay figures are the long fixture's only",
                )
            )
        for name, path, own, before_compaction in prepared:
            out.append(replay_figure(name, path, own, 2 if quick else 4, before_compaction))
    return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
