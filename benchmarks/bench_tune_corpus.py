"""Benchmark: ``compactor tune`` on a corpus of 200 sessions, on a local Ray cluster against the local executor.

The corpus is made by ``make_corpus.py`` (tagged replicas of the real
transcripts under ``../shared/transcripts``; 20 with ``--quick``). A Ray
head is started on this machine for the benchmark (``ray start --head
--block`` in a session of its own, with its own ports and temporary
folder, as many CPUs as the local executor gets workers) and stopped at the
end (that process group only: another Ray on the machine is left alone).
The same two-trial space then runs, interleaved, with ``LocalExecutor(N)``
and ``RayExecutor(address=...)`` joining that cluster, each from an empty
result cache.

Figures (protocol in ``_common.py``; run alone: ``python benchmarks/bench_corpus.py [--quick]``):

- ``tune on Ray / local, throughput per core``: replays per second per
  CPU on Ray over the same on the local process pool, per interleaved pair.
  Target: at least 0.8.
- ``tune on Ray / local, identical figures``: 1.0 when every trial's
  totals on Ray equal the local run's, else 0.0. Target: at least 1.0.

Missing without the real transcripts, without Ray (``pip install
'.[ray]'``) or without the ``ray`` command beside this Python.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import Figure, main, missing, shared_sessions, timed
from make_corpus import make_corpus

from compactor.tune import LocalExecutor, RayExecutor, SearchSpace, TuneResults, run_tune

SESSIONS, QUICK_SESSIONS = 200, 20
SPACE = SearchSpace.model_validate({"params": {"attachments.selection.strategy": ["recent", "activity"]}})
THROUGHPUT = "tune on Ray / local, throughput per core"
IDENTICAL = "tune on Ray / local, identical figures"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LocalRay:
    """A Ray head on this machine for the benchmark's life: its own ports and folder, stopped by process group."""

    def __init__(self, cpus: int, folder: Path) -> None:
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        command = [
            str(Path(sys.executable).parent / "ray"), "start", "--head", "--block", "--disable-usage-stats",
            f"--port={self.port}", f"--num-cpus={cpus}", "--include-dashboard=false",
            f"--temp-dir={folder}",
        ]
        self.folder = folder
        self.log = (folder / "ray-start.log").open("wb")
        # Token authentication (Ray's default for `ray start`): the driver below asks for it too.
        env = {**os.environ, "RAY_AUTH_MODE": "token"}
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                        start_new_session=True)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the head accepts connections on its port.

        Raises:
            RuntimeError: ``ray start`` exited, or the head never listened.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ray start exited {self.process.returncode}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError("the Ray head did not start listening")

    def stop(self) -> None:
        """Stop the head and everything it started (its process group), and wait for them."""
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=60)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)  # whatever of the group is left
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        finally:
            self.log.close()
            shutil.rmtree(self.folder, ignore_errors=True)


def _totals(results: TuneResults) -> dict[str, dict[str, object]]:
    return {t.id: {at: m.model_dump() for at, m in t.totals.items()} for t in results.trials}


def figures(quick: bool = False) -> list[Figure]:
    why = None
    if not shared_sessions():
        why = "no transcript under ../shared/transcripts"
    else:
        # Ray reads its authentication mode when it is imported: token, as the head below is started.
        os.environ.setdefault("RAY_AUTH_MODE", "token")
        try:
            import ray  # noqa: F401
        except ImportError:
            why = "Ray is not installed (pip install '.[ray]')"
        else:
            if not (Path(sys.executable).parent / "ray").exists():
                why = "no ray command beside this Python"
    if why is not None:
        return [missing(THROUGHPUT, 0.8, ">=", why), missing(IDENTICAL, 1.0, ">=", why)]
    cores = max(1, min(os.cpu_count() or 1, 4))
    count = QUICK_SESSIONS if quick else SESSIONS
    pairs = 1 if quick else 2
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        folder = Path(tmp)
        corpus = make_corpus(folder / "corpus", count)
        # Ray's sockets live under its folder, whose path must stay short: a folder of its own in /tmp.
        cluster = LocalRay(cores, Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp")))
        try:
            cluster.wait_ready()
            ratios: list[float] = []
            same = []
            seconds = []
            for _ in range(pairs):
                local_seconds, local = timed(lambda: run_tune(corpus, SPACE, executor=LocalExecutor(cores)))
                ray_seconds, on_ray = timed(
                    lambda: run_tune(corpus, SPACE, executor=RayExecutor(address=cluster.address))
                )
                jobs = local.jobs_run
                assert jobs == on_ray.jobs_run == len(SPACE.trials()) * len(corpus)
                ratios.append((jobs / ray_seconds / cores) / (jobs / local_seconds / cores))
                same.append(1.0 if _totals(on_ray) == _totals(local) else 0.0)
                seconds.append((local_seconds, ray_seconds))
        finally:
            cluster.stop()
    detail = (f"{count} sessions x {len(SPACE.trials())} trials on {cores} cores; "
              + ", ".join(f"local {a:.1f} s, Ray {b:.1f} s" for a, b in seconds))
    return [Figure(THROUGHPUT, ratios, 0.8, ">=", detail=detail), Figure(IDENTICAL, same, 1.0, ">=")]


if __name__ == "__main__":
    raise SystemExit(main(figures))
