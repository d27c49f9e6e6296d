"""``run_tune``: every trial of a search space over every session of a corpus.

A trial's settings are the base settings (a ``--config`` file, the
environment) with the trial's parameters on top, exactly as ``load_settings``
builds them for ``compactor replay --config``; that is why the winning
trial's ``best.toml`` reproduces its figures. Each (trial, session) pair is
one job, looked up in the cache first; only missing jobs reach the executor.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from compactor.core.config import load_settings
from compactor.core.errors import InputNotFound, UsageError
from compactor.tune.cache import ResultCache, cache_key, project_version
from compactor.tune.executors import Executor
from compactor.tune.jobs import AtKind, Job, SessionResult, session_hash
from compactor.tune.metrics import Metrics
from compactor.tune.space import ParamValue, SearchSpace, Trial

__all__ = [
    "IGNORE_MARKER",
    "LOWER_IS_BETTER",
    "TIE_BREAKS",
    "TrialResult",
    "TuneResults",
    "best_trial",
    "discover_sessions",
    "run_tune",
    "trial_score",
]

LOWER_IS_BETTER = frozenset(
    {
        "reattached_unused_tokens",
        "reread_missed_tokens",
        "post_tokens",
        "attachment_tokens",
        "compactions",
        "masking_steps",
        "cache_invalidated_per_100_requests",
    }
)
"""Figures where less is better (the best trial minimizes them when they are the objective)."""

Progress = Callable[[int, int, "TrialResult | None"], None]
"""progress(jobs done, jobs in all, best trial so far)."""


class TrialResult(BaseModel):
    """A trial's parameters, effective settings, pooled totals per point kind, and per-session results."""

    model_config = ConfigDict(extra="forbid")

    id: str
    params: dict[str, ParamValue]
    settings: dict[str, Any]
    totals: dict[AtKind, Metrics] = Field(default_factory=dict)
    sessions: list[SessionResult] = Field(default_factory=list)
    """Empty when the run handed each session's result on as it came (``run_tune(on_session=...)``)."""
    complete: bool = False
    wall_seconds: float = 0.0
    """Replay time summed over its sessions (cached ones count what they took when they ran)."""


class TuneResults(BaseModel):
    """Everything a tuning run found (``results.json``)."""

    model_config = ConfigDict(extra="forbid")

    version: str
    space: SearchSpace
    corpus: list[str]
    executor: str
    trials: list[TrialResult]
    best: str | None = None
    interrupted: bool = False
    jobs_run: int = 0
    jobs_cached: int = 0
    wall_seconds: float = 0.0
    sessions_file: str | None = None
    """Where the per-session results went when they were streamed (``sessions.jsonl`` beside ``results.json``)."""

    def trial(self, trial_id: str) -> TrialResult:
        """The trial with id ``trial_id``.

        Raises:
            KeyError: no such trial.
        """
        for trial in self.trials:
            if trial.id == trial_id:
                return trial
        raise KeyError(trial_id)


def discover_sessions(corpus: Sequence[Path]) -> list[Path]:
    """The transcripts in ``corpus``: files as given, folders searched for ``*.jsonl``.

    Subagent transcripts (under a ``subagents`` folder) are not sessions of
    their own; the replay reads its main chain only. A folder under a given
    one that holds an ``IGNORE_MARKER`` file is not searched: the project's
    edge-case shapes (``fixtures/sessions/shapes/``) are tests of the reader,
    not a tuning corpus. A folder given itself is always searched.

    Raises:
        InputNotFound: a path does not exist, or the corpus holds no transcript.
    """
    found: list[Path] = []
    for path in corpus:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.jsonl") if _in_corpus(p, path)))
        elif path.is_file():
            found.append(path)
        else:
            raise InputNotFound(f"{path} does not exist")
    unique = list(dict.fromkeys(found))
    if not unique:
        raise InputNotFound("the corpus holds no .jsonl transcript")
    return unique


IGNORE_MARKER = ".compactor-tune-ignore"
"""A file of this name in a folder keeps ``discover_sessions`` out of it (and its subfolders)."""

TIE_BREAKS: tuple[str, ...] = (
    "reread_coverage_with_tail",
    "reread_coverage",
    "retention_paths",
    "reread_missed_tokens",
    "attachment_tokens",
)
"""How trials the objective ties are told apart, in order: what the compacted context holds of what
is read again and of the session, then the fewer tokens spent reading again, then the more restored.
A tie never goes to the trial that restores less; the context's size breaks none of them."""
_RESTORES_MORE = frozenset({"attachment_tokens"})


def _in_corpus(found: Path, root: Path) -> bool:
    parts = found.relative_to(root).parts[:-1]
    if "subagents" in parts:
        return False
    return not any((root.joinpath(*parts[: n + 1]) / IGNORE_MARKER).exists() for n in range(len(parts)))


def trial_score(trial: TrialResult, objective: str, at: AtKind) -> tuple[float, ...]:
    """What ``best_trial`` maximizes: the objective, then each of ``TIE_BREAKS`` (better is larger)."""
    metrics = trial.totals.get(at)
    figures = metrics.figures() if metrics is not None else {}

    def signed(name: str) -> float:
        value = figures.get(name)
        if value is None:
            return float("-inf")
        lower = name in LOWER_IS_BETTER and name not in _RESTORES_MORE
        return -float(value) if lower else float(value)

    return (signed(objective), *(signed(name) for name in TIE_BREAKS if name != objective))


def best_trial(trials: Sequence[TrialResult], space: SearchSpace) -> TrialResult | None:
    """The complete trial with the best objective; ties are broken by ``TIE_BREAKS``, in order, and
    a complete tie goes to the first trial of the space."""
    complete = [t for t in trials if t.complete]
    if not complete:
        return None
    objective, at = space.search.objective, space.search.objective_at
    return max(complete, key=lambda t: trial_score(t, objective, at))


class _Run:
    def __init__(
        self,
        sessions: list[Path],
        space: SearchSpace,
        config: Path | None,
        executor: Executor,
        cache: ResultCache | None,
        progress: Progress | None,
        on_session: Callable[[SessionResult], None] | None = None,
    ) -> None:
        self.sessions = sessions
        self.hashes = {s: session_hash(s) for s in sessions}
        self.space = space
        self.config = config
        self.executor = executor
        self.cache = cache
        self.progress = progress
        self.version = project_version()
        self.trials: dict[str, TrialResult] = {}
        self.expected: dict[str, int] = {}
        self.done = 0
        self.total = 0
        self.jobs_run = 0
        self.jobs_cached = 0
        self.keys: dict[tuple[str, str], str] = {}
        self.on_session = on_session
        self.counts: dict[str, int] = {}
        self.partial: dict[str, dict[AtKind, Metrics]] = {}

    def prepare(self, trial: Trial) -> list[Job]:
        """Register ``trial``; its jobs not in the cache (cached ones are recorded now)."""
        settings = load_settings(self.config, overrides=trial.overrides())
        settings_json = settings.model_dump_json()
        result = self.trials.setdefault(
            trial.id, TrialResult(id=trial.id, params=trial.params, settings=settings.model_dump(mode="json"))
        )
        if result.complete or trial.id in self.expected:
            return []
        self.expected[trial.id] = len(self.sessions)
        self.total += len(self.sessions)
        jobs: list[Job] = []
        for session in self.sessions:
            digest = self.hashes[session]
            key = cache_key(digest, settings_json, self.version)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                self.jobs_cached += 1
                self.record(cached.model_copy(update={"cached": True, "trial_id": trial.id, "session": str(session)}))
            else:
                jobs.append(
                    Job(
                        trial_id=trial.id,
                        session=str(session),
                        session_hash=digest,
                        settings_json=settings_json,
                        key=key,
                    )
                )
        self.keys.update({(job.trial_id, job.session): job.key for job in jobs})
        return jobs

    def record(self, result: SessionResult) -> None:
        trial = self.trials[result.trial_id]
        self.done += 1
        count = self.counts[trial.id] = self.counts.get(trial.id, 0) + 1
        if self.on_session is not None:
            self.on_session(result)  # handed on, not kept: memory stays flat with the corpus
            totals = self.partial.setdefault(trial.id, {})
            for at, metrics in result.metrics.items():
                totals[at] = Metrics.combine([totals[at], metrics]) if at in totals else Metrics.combine([metrics])
            trial.wall_seconds += result.wall_seconds
        else:
            trial.sessions.append(result)
        if count == self.expected[trial.id]:
            if self.on_session is not None:
                trial.totals = self.partial.pop(trial.id, {})
            else:
                order = {str(s): n for n, s in enumerate(self.sessions)}
                trial.sessions.sort(key=lambda r: order.get(r.session, 0))
                trial.totals = {
                    at: Metrics.combine(r.metrics[at] for r in trial.sessions) for at in trial.sessions[0].metrics
                }
                trial.wall_seconds = sum(r.wall_seconds for r in trial.sessions)
            trial.complete = True
        if self.progress is not None:
            self.progress(self.done, self.total, best_trial(list(self.trials.values()), self.space))

    def finished(self, result: SessionResult) -> None:
        """A job came back from the executor: cache it, then record it."""
        self.jobs_run += 1
        if self.cache is not None:
            self.cache.put(self.keys[(result.trial_id, result.session)], result)
        self.keys.pop((result.trial_id, result.session), None)
        self.record(result)

    def run_jobs(self, jobs: list[Job]) -> None:
        """Hand ``jobs`` to the executor session by session, so that a worker runs one session's
        trials in a row and parses it once (``jobs.WorkerCache``)."""
        if self.progress is not None:
            self.progress(self.done, self.total, best_trial(list(self.trials.values()), self.space))
        if jobs:
            order = {str(s): n for n, s in enumerate(self.sessions)}
            self.executor.run(sorted(jobs, key=lambda job: order.get(job.session, 0)), self.finished)


def run_tune(
    corpus: Sequence[Path],
    space: SearchSpace,
    *,
    executor: Executor,
    config: Path | None = None,
    cache: ResultCache | None = None,
    progress: Progress | None = None,
    on_session: Callable[[SessionResult], None] | None = None,
) -> TuneResults:
    """Run every trial of ``space`` on every session of ``corpus``.

    ``on_session`` receives each (trial, session) result as it arrives
    (``output.SessionsFile`` writes them to ``sessions.jsonl``); the trials
    then keep only their totals, not their sessions, so memory does not grow
    with the corpus. Without it every trial keeps its sessions' results.

    On KeyboardInterrupt the trials that finished are kept (and every
    finished job is already cached): the results say ``interrupted``.

    Raises:
        InputNotFound: the corpus is missing or empty.
        ConfigError: a trial's settings are invalid.
        UsageError: optuna is asked for but not installed.
        TranscriptError: a session cannot be read.
    """
    started = time.perf_counter()
    run = _Run(discover_sessions(corpus), space, config, executor, cache, progress, on_session)
    interrupted = False
    try:
        if space.search.method == "optuna":
            _optuna(run, space)
        else:
            jobs = [job for trial in space.trials() for job in run.prepare(trial)]
            run.run_jobs(jobs)
    except KeyboardInterrupt:
        interrupted = True
    trials = list(run.trials.values())
    best = best_trial(trials, space)
    return TuneResults(
        version=run.version,
        space=space,
        corpus=[str(s) for s in run.sessions],
        executor=executor.name,
        trials=trials,
        best=best.id if best is not None else None,
        interrupted=interrupted,
        jobs_run=run.jobs_run,
        jobs_cached=run.jobs_cached,
        wall_seconds=time.perf_counter() - started,
    )


def _optuna(run: _Run, space: SearchSpace) -> None:
    """Optuna's TPE sampler asks for one trial at a time; its sessions still run in parallel."""
    try:
        import optuna
    except ImportError as exc:
        raise UsageError("method = \"optuna\" needs Optuna: pip install 'context-compactor[optuna]'") from exc
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    objective, at = space.search.objective, space.search.objective_at
    study = optuna.create_study(
        direction="minimize" if objective in LOWER_IS_BETTER else "maximize",
        sampler=optuna.samplers.TPESampler(seed=space.search.seed),
    )
    for _ in range(space.search.trials):
        asked = study.ask()
        params = {name: asked.suggest_categorical(name, values) for name, values in sorted(space.params.items())}
        trial = Trial.model_validate({"params": params})
        run.run_jobs(run.prepare(trial))
        value = run.trials[trial.id].totals[at].figures().get(objective)
        if value is None:
            study.tell(asked, state=optuna.trial.TrialState.PRUNED)
        else:
            study.tell(asked, float(value))
