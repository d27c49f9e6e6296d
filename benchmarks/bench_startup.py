"""Benchmark: cold starts of the command lines a hook or an MCP client waits for.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_startup.py [--quick]``),
each the wall time of a fresh process against ``python -c pass``, interleaved:

- ``compactor hook session-start`` (Claude Code runs it at every session
  start: ``startup`` is the usual source, ``compact`` the one after a
  compaction, here of a session with nothing stored), ``compactor --help``,
  ``ccr stats`` and ``compactor memory --help``: at most 12x each. A script
  that is not installed is reported missing.
- ``ccr mcp`` and ``compactor memory mcp`` (the plugin starts both with every
  session) answering ``initialize`` (a client's first request) over stdio,
  from the start of the process to the answer: at most 15x each.
- ``compactor hook pre-compact`` on a generated session of 4 MB (tagged
  copies of the long fixture end to end, ``make_corpus.long_session``) and
  on the largest real transcript under ``../shared/transcripts`` (about
  4 MB; missing without it), as Claude Code runs it before compacting: read
  the transcript, store the conversation and the file's lines, print the
  instructions. Each run is a session's first compaction (a session id of
  its own) in one ``COMPACTOR_HOME`` that earlier runs used, as a user's
  is. At most 18x (about 0.5 s where ``python -c pass`` takes 28 ms),
  and, from the same runs, each run's seconds over the 0.5 s goal: at
  most 1. Both are printed because the ratio depends on how fast this
  machine starts Python: importing pydantic and building a first model
  alone takes about 11x ``python -c pass`` here, where Python starts in
  about 11 ms.

The installed console scripts are run (those beside the running Python),
with ``COMPACTOR_HOME`` in a temporary folder. Measure on a regular install
(``pip install .``, as CI does): an editable one adds an import hook to
every Python start, which makes ``python -c pass`` about twice as slow and
every ratio look better than it is; the figures then say so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _common import REPO, Figure, interleaved, largest_transcript, main, missing, timed
from make_corpus import long_session

BIN = Path(sys.executable).parent

LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"
GENERATED_BYTES = 4_000_000
"""The generated session the pre-compact hook is timed on: tagged copies of the long fixture, end to end."""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def _runner(command: Sequence[str], env: dict[str, str], stdin: bytes = b"") -> Callable[[], None]:
    def run() -> None:
        done = subprocess.run(list(command), input=stdin, capture_output=True, env=env, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-300:]}")

    return run


def _mcp_initialize(command: Sequence[str], env: dict[str, str]) -> Callable[[], float]:
    """Start the server, send ``initialize``: the seconds until its answer; then hang up (not timed).

    The server goes on making its tools after it has answered, so the time
    to its exit is not the time to the answer a client waits for.
    """

    def run() -> float:
        with tempfile.TemporaryFile() as errors:
            start = time.perf_counter()
            with subprocess.Popen(
                list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, env=env
            ) as server:
                assert server.stdin is not None and server.stdout is not None
                server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
                server.stdin.flush()
                line = server.stdout.readline()
                seconds = time.perf_counter() - start
                server.stdin.close()
                server.wait(timeout=30)
            answer = json.loads(line) if line.strip() else {}
            if answer.get("id") != 1 or "result" not in answer:
                errors.seek(0)
                raise RuntimeError(f"{command[0]} answered {line!r}: {errors.read().decode()[-500:]}")
            return seconds

    return run


def _against(subject: Callable[[], float], baseline: Callable[[], None], runs: int) -> list[float]:
    """``interleaved`` for a subject that times itself: its seconds over the baseline's, one ratio per pair."""
    subject()
    baseline()
    ratios = []
    for _ in range(runs):
        seconds = subject()
        baseline_seconds, _ = timed(baseline)
        ratios.append(seconds / baseline_seconds)
    return ratios


def _editable_note() -> str:
    """A warning when the project is installed editable (its import hook slows every Python start)."""
    import site

    folders = [Path(p) for p in [*site.getsitepackages(), site.getusersitepackages()]]
    hooks = [f for folder in folders if folder.is_dir() for f in folder.glob("__editable__*compactor*.pth")]
    return (
        "editable install: Python starts slower here, so these ratios flatter; measure a regular install"
        if hooks
        else ""
    )


def figures(quick: bool = False) -> list[Figure]:
    runs = 5 if quick else 15
    note = _editable_note()
    nothing = _runner([sys.executable, "-c", "pass"], dict(os.environ))
    out: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COMPACTOR_HOME": tmp}
        store = str(Path(tmp) / "ccr.db")
        subprocess.run(
            [str(BIN / "ccr"), "--store", store, "put", "-"], input=b"x", env=env, check=True, capture_output=True
        )

        def hook_input(source: str) -> bytes:
            return json.dumps(
                {"session_id": "bench-cold-start", "hook_event_name": "SessionStart", "source": source}
            ).encode()

        commands: list[tuple[str, list[str], bytes]] = [
            ("compactor hook session-start (startup)", ["compactor", "hook", "session-start"], hook_input("startup")),
            ("compactor hook session-start (compact)", ["compactor", "hook", "session-start"], hook_input("compact")),
            ("compactor --help", ["compactor", "--help"], b""),
            ("ccr stats", ["ccr", "--store", store, "stats"], b""),
            ("compactor memory --help", ["compactor", "memory", "--help"], b""),
        ]
        for name, argv, stdin in commands:
            script = BIN / argv[0]
            if not script.exists():
                out.append(missing(f"cold start / python -c pass: {name}", 12.0, "<=", f"no {argv[0]} script"))
                continue
            run = _runner([str(script), *argv[1:]], env, stdin)
            out.append(
                Figure(
                    f"cold start / python -c pass: {name}",
                    interleaved(run, nothing, runs=runs),
                    12.0,
                    "<=",
                    detail=note,
                )
            )
        for name, argv in (
            ("ccr mcp", ["ccr", "--store", store, "mcp"]),
            ("compactor memory mcp", ["compactor", "memory", "--db", str(Path(tmp) / "memory.db"), "mcp"]),
        ):
            server = _mcp_initialize([str(BIN / argv[0]), *argv[1:]], env)
            out.append(
                Figure(
                    f"{name} answering initialize / python -c pass",
                    _against(server, nothing, runs),
                    15.0,
                    "<=",
                    detail=note,
                )
            )
        out.extend(pre_compact_figures(Path(tmp), nothing, runs, note))
    return out


def pre_compact_figures(folder: Path, nothing: Callable[[], None], runs: int, note: str) -> list[Figure]:
    """``compactor hook pre-compact`` on a generated 4 MB session and on the largest real transcript."""
    generated = long_session(LONG_FIXTURE, folder / "generated-4mb.jsonl", GENERATED_BYTES)
    real = largest_transcript()
    out = pre_compact_figure("generated 4 MB session", generated, folder, nothing, runs, note)
    if real is None:
        out.extend(_pre_compact_missing("largest real transcript", "no transcript under ../shared/transcripts"))
    else:
        out.extend(pre_compact_figure("largest real transcript", real, folder, nothing, runs, note))
    return out


PRE_COMPACT_AGAINST_PASS = "cold start / python -c pass: compactor hook pre-compact"
PRE_COMPACT_AGAINST_GOAL = "compactor hook pre-compact seconds / 0.5 s goal"
PRE_COMPACT_GOAL_SECONDS = 0.5
PRE_COMPACT_MAX_RATIO = 18.0


def _pre_compact_missing(what: str, why: str) -> list[Figure]:
    """Both pre-compact figures for ``what``, reported missing for ``why``."""
    return [
        missing(f"{PRE_COMPACT_AGAINST_PASS} ({what})", PRE_COMPACT_MAX_RATIO, "<=", why),
        missing(f"{PRE_COMPACT_AGAINST_GOAL} ({what})", 1.0, "<=", why),
    ]


def pre_compact_figure(
    what: str, transcript: Path, folder: Path, nothing: Callable[[], None], runs: int, note: str
) -> list[Figure]:
    """The hook on ``transcript``, each run a new session in one ``COMPACTOR_HOME``: against ``python -c pass``,
    and the same runs' seconds against the 0.5 s goal."""
    script = BIN / "compactor"
    if not script.exists():
        return _pre_compact_missing(what, "no compactor script")
    sessions = iter(range(10_000))
    env = {**os.environ, "COMPACTOR_HOME": str(folder / "pre-compact-home")}

    def run() -> None:
        stdin = json.dumps(
            {
                "session_id": f"bench-pre-compact-{next(sessions)}",
                "transcript_path": str(transcript),
                "hook_event_name": "PreCompact",
                "trigger": "auto",
            }
        ).encode()
        done = subprocess.run(
            [str(script), "hook", "pre-compact"], input=stdin, capture_output=True, env=env, check=False
        )
        if done.returncode != 0 or b"ccr_" not in done.stdout:  # the hook exits 0 even when it stores nothing
            raise RuntimeError(f"pre-compact stored nothing: {done.stderr.decode()[-300:]}")

    seconds: list[float] = []

    def timed_run() -> None:
        took, _ = timed(run)
        seconds.append(took)

    ratios = interleaved(timed_run, nothing, runs=runs)
    size = transcript.stat().st_size / 1e6
    counted = seconds[-runs:]  # the warm-up run is not
    median = sorted(counted)[runs // 2]
    detail = "; ".join(x for x in (f"{transcript.name}, {size:.1f} MB, {median:.2f} s a run (median)", note) if x)
    return [
        Figure(f"{PRE_COMPACT_AGAINST_PASS} ({what})", ratios, PRE_COMPACT_MAX_RATIO, "<=", detail=detail),
        Figure(
            f"{PRE_COMPACT_AGAINST_GOAL} ({what})",
            [s / PRE_COMPACT_GOAL_SECONDS for s in counted],
            1.0,
            "<=",
            detail=f"{transcript.name}, the same runs",
        ),
    ]


if __name__ == "__main__":
    raise SystemExit(main(figures))
