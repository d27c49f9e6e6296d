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
from typing import Literal, Protocol

from compactor.errors import UsageError
from compactor.tune.jobs import Job, SessionResult, run_job

__all__ = ["Executor", "ExecutorName", "LocalExecutor", "RayExecutor", "make_executor"]

ExecutorName = Literal["local", "ray"]
OnResult = Callable[[SessionResult], None]


class Executor(Protocol):
    name: str

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None: ...


class LocalExecutor:
    """A process pool of ``workers`` processes (one job at a time, in this process, for one worker)."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        if self.workers == 1 or len(jobs) <= 1:
            for job in jobs:
                on_result(run_job(job))
            return
        # spawn: the parent may hold threads (a progress bar) that fork would copy mid-flight.
        context = multiprocessing.get_context("spawn")
        pool = cf.ProcessPoolExecutor(
            max_workers=min(self.workers, len(jobs)), mp_context=context, initializer=_ignore_interrupts
        )
        futures = [pool.submit(run_job, job) for job in jobs]
        handed: set[cf.Future[SessionResult]] = set()
        try:
            for future in cf.as_completed(futures):
                handed.add(future)
                on_result(future.result())
        except KeyboardInterrupt:
            # Ctrl-C: nothing new starts; the replays already running finish and are kept.
            for future in futures:
                future.cancel()
            for future in futures:
                if future not in handed and not future.cancelled():
                    on_result(future.result())
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Jobs as Ray tasks: ``ray.init()`` joins ``RAY_ADDRESS`` when set, else starts a local Ray."""

    name = "ray"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers

    def run(self, jobs: Sequence[Job], on_result: OnResult) -> None:
        try:
            import ray
        except ImportError as exc:
            raise UsageError("the ray executor needs Ray: pip install 'compactor[ray]'") from exc
        started_here = not ray.is_initialized()
        if started_here:
            local_cpus = self.workers if not os.environ.get("RAY_ADDRESS") else None
            ray.init(include_dashboard=False, log_to_driver=False, num_cpus=local_cpus)
        try:
            remote = ray.remote(run_job)
            pending = [remote.remote(job) for job in jobs]
            try:
                while pending:
                    done, pending = ray.wait(pending, num_returns=1)
                    for ref in done:
                        on_result(ray.get(ref))
            except BaseException:
                for ref in pending:
                    ray.cancel(ref)
                raise
        finally:
            if started_here:
                ray.shutdown()


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops handing out jobs and keeps what finished."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def make_executor(name: ExecutorName, workers: int | None = None) -> Executor:
    """The executor called ``name``.

    Raises:
        UsageError: an unknown name.
    """
    if name == "local":
        return LocalExecutor(workers)
    if name == "ray":
        return RayExecutor(workers)
    raise UsageError(f"unknown executor {name!r}; choose local or ray")
