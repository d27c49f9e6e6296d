"""compactor tune: experiments over budgets and strategies on a corpus of recorded sessions.

A search space (``space``) names settings and their values; every trial
replays every session of the corpus at Claude Code's recorded compaction
points and where the policy fires (``jobs``), on a local process pool or a
Ray cluster (``executors``), cached by session content, settings and
version (``cache``). The figures (``metrics``) are the ones ``replay --json``
prints too; ``output`` and ``html`` write ``results.json``, ``best.toml``,
the terminal table and ``report.html``.
"""

from __future__ import annotations

from compactor.tune.cache import ResultCache, cache_key, default_cache_dir, project_version
from compactor.tune.executors import Executor, ExecutorName, LocalExecutor, RayExecutor, make_executor
from compactor.tune.html import render_report
from compactor.tune.jobs import AT_KINDS, Job, SessionResult, WorkerCache, run_job, session_hash
from compactor.tune.metrics import METRIC_NAMES, Metrics, replay_metrics
from compactor.tune.output import best_toml, render_table, results_json, settings_toml
from compactor.tune.runner import TrialResult, TuneResults, best_trial, discover_sessions, run_tune
from compactor.tune.space import SearchSettings, SearchSpace, Trial, load_space

__all__ = [
    "AT_KINDS",
    "Executor",
    "ExecutorName",
    "Job",
    "LocalExecutor",
    "METRIC_NAMES",
    "Metrics",
    "RayExecutor",
    "ResultCache",
    "SearchSettings",
    "SearchSpace",
    "SessionResult",
    "Trial",
    "TrialResult",
    "TuneResults",
    "WorkerCache",
    "best_toml",
    "best_trial",
    "cache_key",
    "default_cache_dir",
    "discover_sessions",
    "load_space",
    "make_executor",
    "project_version",
    "render_report",
    "render_table",
    "replay_metrics",
    "results_json",
    "run_job",
    "run_tune",
    "session_hash",
    "settings_toml",
]
