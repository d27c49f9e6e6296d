"""Benchmark: ``compactor tune`` on a corpus of tagged replicas, on a local Ray cluster and with the local executor.

Usage: ``python benchmarks/bench_tune_corpus.py [--sessions N] [--trials K] [--pairs P] [--quick]``

The corpus is ``make_corpus.py``'s: ``N`` tagged replicas of the real
transcripts under ``../shared/transcripts`` (every text tagged per copy,
so no copy reuses another's counts, dedup or parses), written to a
temporary folder and removed at the end. The space has ``K`` trials (the
preserved tail and the file selection varied). A Ray head is started on
this machine for the benchmark (``ray start --head --block`` on loopback,
in a session of its own, with its own ports and temporary folder, as many
CPUs as the local executor gets workers) and stopped at the end, also on
failure or Ctrl-C (that process group only: another Ray on the machine is
left alone).

Each of ``P`` rounds runs, interleaved:

1. the ``compactor tune`` command with ``--executor local --jobs C`` and
   with ``--executor ray --address <that cluster>``, each a new process
   with an empty result cache (``--no-cache``), so each starts from fresh
   worker caches and counts its own start-up;
2. in this process, ``run_tune`` with 1 trial and with ``K`` trials on a
   pool of ``C`` new worker processes, sharing as the tune does (each
   worker parses a session once and counts each text once), and the same
   two without sharing (each replay from a fresh ``WorkerCache``: the
   session parsed and every text counted again, as before issue 25; the
   tokenizer loads once per worker process in both).

Figures (protocol in ``_common.py``):

- ``tune on Ray / local, throughput per core``: replays per second per CPU
  with ``--executor ray`` over the same with the local pool (1); both use
  ``C`` CPUs, so it is the local run's time over Ray's. Target: at least 0.8.
- ``tune on Ray / local, identical figures``: 1.0 when Ray's
  ``results.json`` totals and ``sessions.jsonl`` metrics equal the local
  run's, else 0.0.
- ``tune with sharing / without, identical figures``: 1.0 when the shared
  and unshared ``K``-trial runs (2) give equal per-session metrics and
  their totals equal the command's, else 0.0.
- ``tune on the corpus: marginal trial / first trial``: (time of ``K``
  trials - time of 1) / (``K`` - 1), over the time of 1, with sharing (2).
  What one more trial costs against the first, which also parses, counts,
  loads the tokenizer and starts the workers. Target (8 trials against 1):
  at most 0.4. The detail gives the seconds a trial more costs with and
  without sharing, and the ratio without sharing.

The defaults (8 sessions, one copy of each real transcript, 8 trials, 2
rounds) take about 3 minutes on 2 cores (``--quick``: 1 round). The full
figure is ``--sessions 200 --trials 8`` (25 times the replays; a round took
8 minutes on 2 cores, ``--pairs 1``). With few sessions per core the fixed
costs (process start, Ray's connection and actors) weigh more, so Ray's
ratio tends to be lower at small sizes. On a machine others share, each run
gets what the scheduler leaves: compare medians of several rounds.

Missing without the real transcripts, without Ray (``pip install
'.[ray]'``) or without the ``ray`` command beside this Python.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from _common import Figure, forget_remembered_results, missing, print_figures, shared_sessions, timed
from make_corpus import make_corpus

from compactor.tune import (
    Executor,
    Job,
    LocalExecutor,
    SearchSpace,
    SessionResult,
    TuneResults,
    WorkerCache,
    run_job,
    run_tune,
)

SESSIONS, TRIALS, PAIRS = 8, 8, 2
SETTLE = 5.0
"""Seconds left after each Ray run, untimed: its actors' processes exit while the next run would start."""
THROUGHPUT = "tune on Ray / local, throughput per core"
IDENTICAL = "tune on Ray / local, identical figures"
SHARING = "tune with sharing / without, identical figures"
MARGINAL = "tune on the corpus: marginal trial / first trial"


def space_of(trials: int) -> SearchSpace:
    """``trials`` trials drawn from the preserved tail in ``trials`` sizes and both file selections."""
    return SearchSpace.model_validate(
        {
            "search": {"method": "random", "trials": trials, "seed": 0},
            "params": {
                "pipeline.tail_tokens": [6000 + 1000 * n for n in range(trials)],
                "attachments.selection.strategy": ["recent", "activity"],
            },
        }
    )


def first_of(space: SearchSpace) -> SearchSpace:
    """The space of ``space``'s first trial alone."""
    trial = space.trials()[0]
    return SearchSpace.model_validate({"params": {name: [value] for name, value in trial.params.items()}})


def space_toml(space: SearchSpace) -> str:
    """``space`` as a space file for the command: the same search, so the same trials."""
    search = space.search
    lines = [
        "[search]",
        f'method = "{search.method}"',
        f"trials = {search.trials}",
        f"seed = {search.seed}",
        "",
        "[params]",
    ]
    lines.extend(f"{json.dumps(name)} = {json.dumps(values)}" for name, values in sorted(space.params.items()))
    return "\n".join(lines) + "\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalRay:
    """A Ray head on loopback for the benchmark's life: its own ports and folder, stopped by process group."""

    def __init__(self, cpus: int, folder: Path) -> None:
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.folder = folder
        # Token authentication (Ray's default for `ray start`): the drivers ask for it too.
        self.env = {**os.environ, "RAY_AUTH_MODE": "token"}
        command = [
            str(Path(sys.executable).parent / "ray"),
            "start",
            "--head",
            "--block",
            "--disable-usage-stats",
            "--node-ip-address=127.0.0.1",
            f"--port={self.port}",
            f"--num-cpus={cpus}",
            "--include-dashboard=false",
            f"--temp-dir={folder}",
        ]
        self.log = (folder / "ray-start.log").open("wb")
        self.process = subprocess.Popen(
            command, stdout=self.log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the head accepts connections on its port.

        Raises:
            RuntimeError: ``ray start`` exited, or the head never listened.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ray start exited {self.process.returncode}: see {self.folder}/ray-start.log")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("the Ray head did not start listening")

    def stop(self) -> None:
        """Stop the head and everything it started (its process group), wait for them, remove the folder."""
        for sig, wait in ((signal.SIGTERM, 60), (signal.SIGKILL, 10)):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever of the group outlived the head
        except ProcessLookupError:
            pass
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _replay_unshared(job: Job) -> SessionResult:
    """One job from a fresh ``WorkerCache``: the session parsed and every text counted again (and nothing
    remembered of the tool results an earlier job met)."""
    forget_remembered_results()
    return run_job(job, WorkerCache())


class UnsharedExecutor:
    """A pool of ``workers`` new processes in which no job reuses another's parse or counts (the baseline)."""

    name = "local-unshared"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, jobs: Sequence[Job], on_result: Callable[[SessionResult], None]) -> None:
        context = multiprocessing.get_context("spawn")
        with cf.ProcessPoolExecutor(max_workers=self.workers, mp_context=context) as pool:
            for result in pool.map(_replay_unshared, jobs):
                on_result(result)


class Command:
    """``compactor tune`` as a user runs it, in a new process, on ``corpus`` with a space file."""

    def __init__(self, corpus: Path, space: Path, folder: Path, env: dict[str, str]) -> None:
        self.corpus, self.space, self.folder = corpus, space, folder
        self.env = {**env, "COMPACTOR_HOME": str(folder / "home")}
        self.runs = 0

    def run(self, *options: str) -> tuple[float, dict[str, Any]]:
        """Seconds the command took, and its figures (``figures_of``); the output folder is removed.

        Raises:
            RuntimeError: the command failed.
        """
        self.runs += 1
        out = self.folder / f"run-{self.runs}"
        command = [
            sys.executable,
            "-m",
            "compactor",
            "tune",
            str(self.corpus),
            "--space",
            str(self.space),
            "--no-cache",
            "--out",
            str(out),
            *options,
        ]
        # A session of its own, as the Ray head's: where the scheduler shares the CPUs between sessions
        # (Linux's autogroups), both executors' processes then get the same share of a busy machine.
        seconds, done = timed(
            lambda: subprocess.run(command, capture_output=True, env=self.env, check=False, start_new_session=True)
        )
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[-800:]}")
        try:
            return seconds, figures_of(out)
        finally:
            shutil.rmtree(out, ignore_errors=True)


def figures_of(out: Path) -> dict[str, Any]:
    """A run's figures as written: every trial's totals (``results.json``) and every (trial, session)'s
    metrics (``sessions.jsonl``), without times."""
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    sessions = {}
    for line in (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        sessions[(row["trial_id"], row["session"])] = row["metrics"]
    return {"totals": {t["id"]: t["totals"] for t in results["trials"]}, "sessions": sessions}


def in_process_figures(results: TuneResults) -> dict[str, Any]:
    """``figures_of`` for a ``run_tune`` result kept in memory."""
    return {
        "totals": {t.id: {at: m.as_json() for at, m in t.totals.items()} for t in results.trials},
        "sessions": {
            (s.trial_id, s.session): {at: m.as_json() for at, m in s.metrics.items()}
            for t in results.trials
            for s in t.sessions
        },
    }


def _why_missing() -> str | None:
    if not shared_sessions():
        return "no transcript under ../shared/transcripts"
    # Ray reads its authentication mode when it is imported: token, as the head is started.
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    try:
        import ray  # noqa: F401
    except ImportError:
        return "Ray is not installed (pip install '.[ray]')"
    if not (Path(sys.executable).parent / "ray").exists():
        return "no ray command beside this Python"
    return None


def figures(
    quick: bool = False, sessions: int | None = None, trials: int | None = None, pairs: int | None = None
) -> list[Figure]:
    """The four figures (see the module docstring) on ``sessions`` replicas and ``trials`` trials."""
    why = _why_missing()
    if why is not None:
        return [
            missing(THROUGHPUT, 0.8, ">=", why),
            missing(IDENTICAL, 1.0, ">=", why),
            missing(SHARING, 1.0, ">=", why),
            missing(f"{MARGINAL} ({TRIALS} trials vs 1, fresh caches)", 0.4, "<=", why),
        ]
    count, many = sessions or SESSIONS, max(2, trials or TRIALS)
    rounds = pairs or (1 if quick else PAIRS)
    cores = max(1, min(os.cpu_count() or 1, 4))
    folder = Path(tempfile.mkdtemp(prefix="bench-tune-corpus-"))
    cluster = None
    try:
        corpus = make_corpus(folder / "corpus", count)
        space = space_of(many)
        (folder / "space.toml").write_text(space_toml(space), encoding="utf-8")
        # Ray's sockets live under its folder, whose path must stay short: a folder of its own in /tmp.
        cluster = LocalRay(cores, Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp")))
        cluster.wait_ready()
        command = Command(folder / "corpus", folder / "space.toml", folder, cluster.env)
        return _measure(command, cluster.address, corpus, space, cores, rounds)
    finally:
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _measure(
    command: Command, address: str, corpus: list[Path], space: SearchSpace, cores: int, rounds: int
) -> list[Figure]:
    """``rounds`` interleaved rounds of the runs the module docstring lists, and their figures."""
    many = len(space.trials())
    one = first_of(space)
    throughput: list[float] = []
    same_ray: list[float] = []
    same_sharing: list[float] = []
    marginal: list[float] = []
    unshared_marginal: list[float] = []
    seconds: list[dict[str, float]] = []
    for _ in range(rounds):
        local_s, local = command.run("--executor", "local", "--jobs", str(cores))
        ray_s, on_ray = command.run("--executor", "ray", "--address", address)
        time.sleep(SETTLE)  # the cluster's workers exit after the command; not charged to the next run
        throughput.append(local_s / ray_s)  # the same replays on the same number of CPUs
        same_ray.append(1.0 if on_ray == local else 0.0)
        times = {"local": local_s, "ray": ray_s}
        runs: dict[str, TuneResults] = {}
        makers: dict[str, Callable[[int], Executor]] = {"shared": LocalExecutor, "unshared": UnsharedExecutor}
        for name, executor in makers.items():
            times[f"{name} 1"], _ = timed(lambda: run_tune(corpus, one, executor=executor(cores)))
            times[f"{name} {many}"], runs[name] = timed(lambda: run_tune(corpus, space, executor=executor(cores)))
        shared, unshared = in_process_figures(runs["shared"]), in_process_figures(runs["unshared"])
        same_sharing.append(1.0 if shared == unshared and shared["totals"] == local["totals"] else 0.0)
        for name, ratios in (("shared", marginal), ("unshared", unshared_marginal)):
            ratios.append((times[f"{name} {many}"] - times[f"{name} 1"]) / (many - 1) / times[f"{name} 1"])
        seconds.append(times)
    size = f"{len(corpus)} sessions x {many} trials on {cores} cores"
    return [
        Figure(
            THROUGHPUT,
            throughput,
            0.8,
            ">=",
            detail=f"{size}, the command: "
            + "; ".join(f"local {t['local']:.1f} s, Ray {t['ray']:.1f} s" for t in seconds),
        ),
        Figure(IDENTICAL, same_ray, 1.0, ">="),
        Figure(SHARING, same_sharing, 1.0, ">="),
        Figure(
            MARGINAL + f" ({many} trials vs 1, fresh caches)",
            marginal,
            0.4,
            "<=",
            detail=f"{size}, run_tune; "
            + "; ".join(_marginal_detail(t, many) for t in seconds)
            + "; ratio without sharing: "
            + ", ".join(f"{r:.2f}" for r in unshared_marginal),
        ),
    ]


def _marginal_detail(times: dict[str, float], many: int) -> str:
    """One round's times of 1 and ``many`` trials, and the marginal trial's seconds, with and without sharing."""
    parts = []
    for name in ("shared", "unshared"):
        one, all_of = times[f"{name} 1"], times[f"{name} {many}"]
        parts.append(
            f"{name}: 1 trial {one:.1f} s, {many} trials {all_of:.1f} s, "
            f"a trial more {(all_of - one) / (many - 1):.2f} s"
        )
    return ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="compactor tune on a replica corpus: Ray against local.")
    parser.add_argument("--sessions", type=int, default=SESSIONS, help=f"replicas in the corpus (default {SESSIONS})")
    parser.add_argument(
        "--trials", type=int, default=TRIALS, help=f"trials in the space, at least 2 (default {TRIALS})"
    )
    parser.add_argument("--pairs", type=int, help=f"interleaved rounds (default {PAIRS}, 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="one round")
    args = parser.parse_args(argv)
    # A TERM (a timeout, a killed job) unwinds like Ctrl-C, so the Ray head is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    made = figures(args.quick, args.sessions, args.trials, args.pairs)
    print_figures(made)
    return 1 if any(f.passed is False for f in made) else 0


if __name__ == "__main__":
    raise SystemExit(main())
