"""One unit of tuning work: replay one session under one trial's settings, at every point kind.

``run_job`` is what the executors send to worker processes (or Ray
workers): a plain function of a plain value, so it pickles. Each job opens
its own in-memory CCR store, so that ``recoverable_share`` checks exactly
what that replay stored.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ccr import open_store
from compactor.config import Settings
from compactor.replay import replay
from compactor.summarizers import make_summarizer
from compactor.tune.metrics import Metrics, replay_metrics

__all__ = ["AT_KINDS", "Job", "SessionResult", "run_job", "session_hash"]

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


def run_job(job: Job) -> SessionResult:
    """Replay the job's session at recorded points and where the policy fires.

    Raises:
        TranscriptError: the session cannot be read.
    """
    settings = Settings.model_validate_json(job.settings_json)
    started = time.perf_counter()
    metrics: dict[AtKind, Metrics] = {}
    for at in AT_KINDS:
        store = open_store(":memory:")
        try:
            report = replay(job.session, settings=settings, store=store, at=at, summarizer=make_summarizer(settings))
            metrics[at] = replay_metrics(report, store)
        finally:
            store.close()
    return SessionResult(
        trial_id=job.trial_id,
        session=job.session,
        session_hash=job.session_hash,
        metrics=metrics,
        wall_seconds=time.perf_counter() - started,
    )
