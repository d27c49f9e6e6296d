"""What ``compactor tune`` writes: ``results.json``, ``sessions.jsonl``, ``best.toml`` and the terminal table.

``sessions.jsonl`` holds one line per (trial, session) result, written as
each arrives (``SessionsFile``), so a run on a large corpus keeps only the
trials' totals in memory.

``best.toml`` holds every setting of the winning trial that differs from the
defaults, in the sections ``load_settings`` reads, so that
``compactor replay --config best.toml`` runs with exactly that trial's settings.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from compactor.core.config import Settings
from compactor.tune.jobs import SessionResult
from compactor.tune.metrics import METRIC_NAMES, Metrics
from compactor.tune.runner import TuneResults, trial_score

__all__ = [
    "SESSIONS_FILE",
    "TABLE_METRICS",
    "SessionsFile",
    "best_toml",
    "format_figure",
    "read_sessions_file",
    "render_table",
    "results_json",
    "session_json",
    "settings_toml",
    "write_text",
]

SESSIONS_FILE = "sessions.jsonl"
"""The per-session results beside ``results.json``."""

TABLE_METRICS: tuple[str, ...] = (
    "reread_coverage",
    "reread_coverage_with_tail",
    "reread_coverage_beyond_tail",
    "attachment_tokens",
    "post_tokens",
    "post_vs_next_request",
    "reread_missed_tokens",
    "compactions",
)
"""The figures the terminal table shows (``results.json`` and the report have them all)."""


def write_text(path: Path, text: str, *, inputs: Sequence[str | Path | None] = ()) -> None:
    """Write ``text`` to ``path`` by the project's output rule (``ccr.files``): 0600, folders 0700.

    Raises:
        OutputRefused: ``path`` is a database, one of ``inputs`` or not a regular file.
        OSError: the folder cannot be written.
    """
    from ccr.files import write_output

    write_output(path, [text.encode("utf-8")], inputs=inputs, what="tune result")


def session_json(result: SessionResult) -> dict[str, Any]:
    """One (trial, session) result as ``results.json`` and ``sessions.jsonl`` show it: counts and figures."""
    data = result.model_dump(mode="json")
    data["metrics"] = {at: m.as_json() for at, m in result.metrics.items()}
    return data


class SessionsFile:
    """``sessions.jsonl`` written line by line as results arrive (``run_tune(on_session=...)``).

    The folder and file are made at the first result, under a temporary
    name; ``close`` renames the file to ``path`` (whole lines only, so an
    interrupted run keeps every result that finished), and ``discard``
    removes it. A run that fails before any result leaves nothing.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = 0
        self._tmp: Path | None = None
        self._handle: IO[str] | None = None

    def __call__(self, result: SessionResult) -> None:
        """Append ``result`` as one line.

        Raises:
            OSError: the folder cannot be written.
        """
        if self._handle is None:
            from ccr.files import private_dir

            private_dir(self.path.parent)  # 0700, as every folder the output rule makes
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp")
            self._tmp = Path(tmp)
            self._handle = os.fdopen(fd, "w", encoding="utf-8")
        self._handle.write(json.dumps(session_json(result), ensure_ascii=False, separators=(",", ":")) + "\n")
        self.lines += 1

    def close(self) -> bool:
        """Move the written lines to ``path``; False (and an old file removed) when there were none.

        Raises:
            OSError: the file cannot be written or renamed.
        """
        if self._handle is None or self._tmp is None:
            self.path.unlink(missing_ok=True)
            return False
        self._handle.close()
        self._handle = None
        os.replace(self._tmp, self.path)
        self._tmp = None
        return True

    def discard(self) -> None:
        """Remove what was written (a run that failed)."""
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None


def read_sessions_file(path: Path) -> Iterator[SessionResult]:
    """The results a ``SessionsFile`` wrote, one at a time.

    Raises:
        OSError: the file cannot be read.
        pydantic.ValidationError: a line is not a session result.
    """
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                data = json.loads(line)
                data["metrics"] = {at: _counts(m) for at, m in data["metrics"].items()}
                yield SessionResult.model_validate(data)


def _counts(metrics: dict[str, Any]) -> dict[str, Any]:
    """The counts of ``Metrics.as_json`` (the figures it adds are derived from them)."""
    return {k: v for k, v in metrics.items() if k in Metrics.model_fields}


def results_json(results: TuneResults) -> str:
    """``results.json``: the space, every trial with its totals and sessions, and the best trial."""
    data = results.model_dump(mode="json")
    for trial, raw in zip(results.trials, data["trials"], strict=True):
        raw["totals"] = {at: m.as_json() for at, m in trial.totals.items()}
        raw["sessions"] = [session_json(session) for session in trial.sessions]
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def settings_toml(settings: Mapping[str, Any]) -> str:
    """The settings that differ from the defaults, as a TOML file ``load_settings`` reads."""
    changed = _diff(settings, Settings().model_dump(mode="json"))
    scalars = {k: v for k, v in changed.items() if not isinstance(v, dict)}
    lines = [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars.items()]
    for name, table in changed.items():
        if isinstance(table, dict):
            lines.extend(_table(name, table))
    return "\n".join(line for line in lines).lstrip("\n") + "\n"


def best_toml(results: TuneResults) -> str | None:
    """The winning trial's settings file, with a comment naming the trial; None without a winner."""
    if results.best is None:
        return None
    trial = results.trial(results.best)
    space = results.space.search
    header = [
        f"# compactor tune: best trial {trial.id} by {space.objective} at {space.objective_at} points",
        *(f"#   {name} = {_toml_value(value)}" for name, value in sorted(trial.params.items())),
        "# Use it with: compactor replay --config best.toml SESSION.jsonl",
        "",
    ]
    body = settings_toml(trial.settings)
    if not body.strip():
        body = "# (every setting is at its default)\n"
    return "\n".join(header) + body


def format_figure(name: str, value: float | int | None) -> str:
    """A figure as people read it: shares as percentages, tokens with separators."""
    if value is None:
        return "-"
    if name.startswith(("reread_coverage", "survival_", "recoverable")):
        return f"{value:.0%}"
    if name == "post_vs_next_request":
        return f"{value:.2f}x"
    if isinstance(value, float) and not value.is_integer():
        return f"{value:,.0f}"
    return f"{int(value):,}"


def render_table(results: TuneResults, limit: int = 20) -> str:
    """Trials ranked by the objective (best first), with their parameters and the main figures."""
    space = results.space.search
    at = space.objective_at
    trials = sorted(
        (t for t in results.trials if t.complete),
        key=lambda t: trial_score(t, space.objective, at),
        reverse=True,
    )
    names = sorted({n for t in trials for n in t.params})
    header = ["", "trial", *names, *(_short(m) for m in TABLE_METRICS)]
    rows = [header]
    for trial in trials[:limit]:
        figures = trial.totals[at].figures() if at in trial.totals else {}
        rows.append(
            [
                "*" if trial.id == results.best else "",
                trial.id,
                *(str(trial.params.get(n, "")) for n in names),
                *(format_figure(m, figures.get(m)) for m in TABLE_METRICS),
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            c.ljust(w) if i < 2 + len(names) else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()
        for r in rows
    ]
    complete = sum(t.complete for t in results.trials)
    lines += [
        "",
        f"{complete} of {len(results.trials)} trials complete on {len(results.corpus)} sessions "
        f"({results.jobs_run} replays run, {results.jobs_cached} from the cache) in {results.wall_seconds:.1f} s; "
        f"figures at {at} points; * best by {space.objective}",
    ]
    if len(trials) > limit:
        lines.append(f"({len(trials) - limit} more trials in results.json)")
    if results.interrupted:
        lines.append("interrupted: the trials above are the ones that finished")
    return "\n".join(lines)


def _short(metric: str) -> str:
    return {
        "reread_coverage": "reread",
        "reread_coverage_with_tail": "+tail",
        "reread_coverage_beyond_tail": "beyond tail",
        "attachment_tokens": "attach tok",
        "post_tokens": "post tok",
        "post_vs_next_request": "vs next req",
        "reread_missed_tokens": "missed tok",
        "compactions": "compactions",
    }.get(metric, METRIC_NAMES.get(metric, metric))


def _diff(value: Mapping[str, Any], default: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in value.items():
        base = default.get(key)
        if isinstance(item, dict) and isinstance(base, dict) and key != "thresholds":
            sub = _diff(item, base)
            if sub:
                out[key] = sub
        elif item != base:
            out[key] = item
    return out


def _table(name: str, table: Mapping[str, Any]) -> list[str]:
    scalars = [(k, v) for k, v in table.items() if not isinstance(v, dict)]
    lines = ["", f"[{name}]", *(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in scalars)] if scalars else []
    for key, sub in table.items():
        if isinstance(sub, dict):
            if not sub:
                lines += ["", f"[{name}.{_toml_key(key)}]"]
            else:
                lines += _table(f"{name}.{_toml_key(key)}", sub)
    return lines


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() else json.dumps(key)


def _toml_value(value: Any) -> str:
    if value is None:
        return '"unbounded"'  # the only settings that take None from a file are the dedup thresholds
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
