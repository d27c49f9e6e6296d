"""Where tuning jobs run: a local process pool, or a Ray cluster.

Both take the same ``Job`` values and call ``on_result`` in the calling
process as each one finishes, so caching and progress work the same way.
Jobs are independent; results arrive in any order. A KeyboardInterrupt
cancels what has not started and propagates, and every result handed to
``on_result`` before it stays handed over.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

from compactor.core.errors import UsageError
from compactor.tune.jobs import Job, SessionResult, WorkerCache, run_job

__all__ = ["Executor", "ExecutorName", "LocalExecutor", "RayExecutor", "make_executor"]

ExecutorName = Literal["local", "ray"]
OnResult = Callable[[SessionResult], None]


class Executor(Protocol):
    name: str

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None: ...


class LocalExecutor:
    """A process pool of ``workers`` processes (one job at a time, in this process, for one worker).

    Each pool task is one session's jobs (split when there are fewer
    sessions than workers), run one after another in a worker, so that the
    worker parses and counts the session once (``jobs.WorkerCache``) and no
    two workers parse the same session unless there is nothing else to do.
    Results are handed over a task at a time.
    """

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        if self.workers == 1 or len(jobs) <= 1:
            for job in jobs:
                on_result(run_job(job))
            return
        groups = _by_session(jobs, self.workers)
        # spawn: the parent may hold threads (a progress bar) that fork would copy mid-flight.
        context = multiprocessing.get_context("spawn")
        pool = cf.ProcessPoolExecutor(
            max_workers=min(self.workers, len(groups)), mp_context=context, initializer=_ignore_interrupts
        )
        futures = [pool.submit(_run_jobs, group) for group in groups]
        handed: set[cf.Future[list[SessionResult]]] = set()
        try:
            for future in cf.as_completed(futures):
                handed.add(future)
                for result in future.result():
                    on_result(result)
        except KeyboardInterrupt:
            # Ctrl-C: nothing new starts; the replays already running finish and are kept.
            for future in futures:
                future.cancel()
            for future in futures:
                if future not in handed and not future.cancelled():
                    for result in future.result():
                        on_result(result)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _run_jobs(jobs: Sequence[Job]) -> list[SessionResult]:
    """Run ``jobs`` one after another in this worker (one pool task)."""
    return [run_job(job) for job in jobs]


def _by_session(jobs: Sequence[Job], workers: int) -> list[list[Job]]:
    """``jobs`` grouped by session, in order; with fewer sessions than ``workers``, each split evenly
    so that every worker has a group."""
    sessions: dict[str, list[Job]] = {}
    for job in jobs:
        sessions.setdefault(job.session, []).append(job)
    parts = -(-workers // len(sessions))  # ceil
    groups: list[list[Job]] = []
    for group in sessions.values():
        size = -(-len(group) // parts)
        groups.extend(group[start : start + size] for start in range(0, len(group), size))
    return groups


class RayExecutor:
    """Jobs on Ray actors that keep their sessions: one actor per CPU (or ``workers``), each with a ``WorkerCache``.

    ``address`` (else ``RAY_ADDRESS``) names a running cluster to join, as
    ``ray.init(address=...)`` takes it (``auto``, ``host:port``,
    ``ray://host:10001``); without one a local Ray starts for the run and
    stops after it. Each actor parses a session once and counts each text
    once; a finished actor gets the next job of the session it holds, else
    one of the session fewest actors are on, so sessions spread over the
    actors and stay with them.
    """

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self.workers = workers
        self.address = address

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        try:
            import ray
        except ImportError as exc:
            raise UsageError("the ray executor needs Ray: pip install 'context-compactor[ray]'") from exc
        if not jobs:
            return
        started_here = not ray.is_initialized()
        if started_here:
            address = self.address or os.environ.get("RAY_ADDRESS") or None
            ray.init(
                address=address,
                include_dashboard=False,
                log_to_driver=False,
                num_cpus=self.workers if address is None else None,
            )
        actors: list[Any] = []
        try:
            count = self.workers or int(ray.cluster_resources().get("CPU", 1))
            worker = ray.remote(num_cpus=1)(_RayWorker)
            actors = [worker.remote() for _ in range(max(1, min(count, len(jobs))))]
            plan = _Affinity(jobs)
            running: dict[Any, int] = {}

            def hand_out(actor: int) -> None:
                job = plan.next_for(actor)
                if job is not None:
                    running[actors[actor].run.remote(job)] = actor

            for actor in range(len(actors)):
                hand_out(actor)
            try:
                while running:
                    done, _ = ray.wait(list(running), num_returns=1)
                    for ref in done:
                        actor = running.pop(ref)
                        on_result(ray.get(ref))
                        hand_out(actor)
            except BaseException:
                for ref in running:
                    ray.cancel(ref)
                raise
        finally:
            for actor_handle in actors:
                ray.kill(actor_handle)
            if started_here:
                ray.shutdown()


class _RayWorker:
    """A Ray actor: runs jobs with its own ``WorkerCache``, kept for the whole run."""

    def __init__(self) -> None:
        self.cache = WorkerCache()

    def run(self, job: Job) -> SessionResult:
        return run_job(job, self.cache)


class _Affinity:
    """Which job a free worker runs next: its own session's while any is left, else one from the
    session the fewest workers are on (the earliest on a tie)."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.left: dict[str, list[Job]] = {}
        for job in jobs:
            self.left.setdefault(job.session, []).append(job)
        for queue in self.left.values():
            queue.reverse()  # popped from the end, in the order given
        self.holding: dict[int, str] = {}

    def next_for(self, worker: int) -> Job | None:
        session = self.holding.get(worker)
        if session is None or not self.left.get(session):
            self.holding.pop(worker, None)
            if not self.left:
                return None
            on = {s: 0 for s in self.left}
            for held in self.holding.values():
                if held in on:
                    on[held] += 1
            session = min(on, key=lambda s: on[s])
            self.holding[worker] = session
        queue = self.left[session]
        job = queue.pop()
        if not queue:
            del self.left[session]
        return job


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops handing out jobs and keeps what finished."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def make_executor(name: ExecutorName, workers: int | None = None, address: str | None = None) -> Executor:
    """The executor called ``name``; ``address`` is the Ray cluster to join (``ray`` only).

    Raises:
        UsageError: an unknown name, or an address for the local executor.
    """
    if name == "local":
        if address is not None:
            raise UsageError("--address names a Ray cluster: use it with --executor ray")
        return LocalExecutor(workers)
    if name == "ray":
        return RayExecutor(workers, address)
    raise UsageError(f"unknown executor {name!r}; choose local or ray")
