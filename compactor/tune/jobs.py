"""One unit of tuning work: replay one session under one trial's settings, at every point kind.

``run_job`` is what the executors send to worker processes (or Ray
workers): a plain function of a plain value, so it pickles. Each job opens
its own in-memory CCR store, so that ``recoverable_share`` checks exactly
what that replay stored.

What does not depend on a trial's settings is done once per worker process
and kept there (``WorkerCache``): the session parsed (the few most recent
ones, by content hash) and the token count of every text counted (one
``CachedCounter`` per counter kind, so the tokenizer also loads once), so
that a trial re-does only the replay's own work. Counts and parsed sessions
are values: a job gives the same result from a fresh worker as from one
that ran others before it.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ccr import open_store
from compactor.claude_code.replay import replay_transcript
from compactor.claude_code.transcript import Transcript, read_transcript
from compactor.core.config import Settings
from compactor.core.tokens import CachedCounter, make_counter
from compactor.summarizers import make_summarizer
from compactor.tune.metrics import Metrics, next_requests, replay_metrics

__all__ = ["AT_KINDS", "SESSIONS_KEPT", "Job", "SessionResult", "WorkerCache", "run_job", "session_hash"]

SESSIONS_KEPT = 3
"""Parsed sessions a worker keeps (the most recently used): the runner hands out a session's
trials one after another, so a worker rarely needs more, and memory stays flat with the corpus."""

AtKind = Literal["recorded", "auto"]
AT_KINDS: tuple[AtKind, ...] = ("recorded", "auto")
"""Every trial replays each session where Claude Code compacted and where the policy fires."""


class Job(BaseModel):
    """Replay ``session`` with ``settings`` (the trial's effective settings, as JSON)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    trial_id: str
    session: str
    session_hash: str
    settings_json: str
    key: str
    """The cache key (session content, settings, project version)."""


class SessionResult(BaseModel):
    """The metrics of one session under one trial, per point kind, and the time it took."""

    model_config = ConfigDict(extra="forbid")

    trial_id: str
    session: str
    session_hash: str
    metrics: dict[AtKind, Metrics]
    wall_seconds: float
    cached: bool = False


def session_hash(path: Path) -> str:
    """sha256 of the transcript's bytes (what the replay reads)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class WorkerCache:
    """What a worker keeps between jobs: parsed sessions (the ``kept`` most recent) and token counts.

    A session is known by its path and content hash, so a file changed
    between two jobs is read again. Counters are ``CachedCounter`` values
    (one per counter name) whose text counts every replay in the worker
    shares; a count depends on the text alone.
    """

    def __init__(self, kept: int = SESSIONS_KEPT) -> None:
        self.kept = max(1, kept)
        self.sessions: OrderedDict[tuple[str, str], Transcript] = OrderedDict()
        self.counters: dict[str, CachedCounter] = {}
        self.reads = 0
        """Sessions parsed so far (a hit costs none)."""

    def transcript(self, path: str, digest: str) -> Transcript:
        """The session at ``path`` (content hash ``digest``), parsed on first use, as ``replay`` reads it.

        Raises:
            TranscriptError: the session cannot be read.
        """
        key = (path, digest)
        found = self.sessions.get(key)
        if found is not None:
            self.sessions.move_to_end(key)
            return found
        # As compactor.claude_code.replay.replay reads it: the main chain only, the state rebuilt by the replay.
        transcript = read_transcript(path, subagents=False, state=False)
        self.reads += 1
        self.sessions[key] = transcript
        while len(self.sessions) > self.kept:
            self.sessions.popitem(last=False)
        return transcript

    def counter(self, name: str) -> CachedCounter:
        """The worker's counter called ``name``, made (and its tokenizer loaded) on first use.

        Raises:
            ConfigError: an unknown counter name.
        """
        counter = self.counters.get(name)
        if counter is None:
            counter = self.counters[name] = CachedCounter(make_counter(name))
        return counter


_WORKER = WorkerCache()
"""This process's cache: a pool worker or Ray worker keeps it for its whole life."""


def run_job(job: Job, cache: WorkerCache | None = None) -> SessionResult:
    """Replay the job's session at recorded points and where the policy fires.

    ``cache`` is what the worker kept from earlier jobs (by default this
    process's own); the result does not depend on it.

    Raises:
        TranscriptError: the session cannot be read.
    """
    cache = cache if cache is not None else _WORKER
    settings = Settings.model_validate_json(job.settings_json)
    started = time.perf_counter()
    transcript = cache.transcript(job.session, job.session_hash)
    counter = cache.counter(settings.counter)
    metrics: dict[AtKind, Metrics] = {}
    for at in AT_KINDS:
        store = open_store(":memory:")
        try:
            report = replay_transcript(
                transcript,
                settings=settings,
                store=store,
                at=at,
                counter=counter,
                summarizer=make_summarizer(settings),
            )
            recorded = next_requests(transcript) if at == "recorded" else None
            metrics[at] = replay_metrics(report, store, recorded_next=recorded)
        finally:
            store.close()
    return SessionResult(
        trial_id=job.trial_id,
        session=job.session,
        session_hash=job.session_hash,
        metrics=metrics,
        wall_seconds=time.perf_counter() - started,
    )
