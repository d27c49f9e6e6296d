"""The search space of ``compactor tune``: which settings vary, over which values, searched how.

A space file is TOML::

    [search]
    method = "grid"            # grid | random | optuna
    trials = 20                # random and optuna: how many trials
    seed = 0
    objective = "reread_coverage_with_tail"   # the figure the best trial maximizes
    objective_at = "recorded"  # judged on the replays at recorded points, or "auto"

    [params]
    "attachments.max_files" = [5, 8]
    "attachments.selection.strategy" = ["recent", "activity"]
    "pipeline.tail_tokens" = [8000, 12000]

Parameters are dotted ``Settings`` paths (nested tables work too); each
value list is validated against ``Settings`` before any trial runs. A trial
is one choice of value per parameter; its id is a hash of those choices.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import tomllib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from compactor.core.config import load_settings
from compactor.core.errors import ConfigError
from compactor.tune.metrics import METRIC_NAMES

__all__ = ["ParamValue", "SearchSettings", "SearchSpace", "Trial", "grid_trials", "load_space", "random_trials"]

ParamValue = str | int | float | bool
Method = Literal["grid", "random", "optuna"]
At = Literal["recorded", "auto"]


class SearchSettings(BaseModel):
    """How the space is searched and how the best trial is chosen."""

    model_config = ConfigDict(extra="forbid")

    method: Method = "grid"
    trials: int = Field(default=20, gt=0)
    seed: int = 0
    objective: str = "reread_coverage_with_tail"
    objective_at: At = "recorded"

    @field_validator("objective")
    @classmethod
    def _known_objective(cls, value: str) -> str:
        if value not in METRIC_NAMES:
            raise ValueError(f"unknown objective {value!r}; choose one of {', '.join(METRIC_NAMES)}")
        return value


class Trial(BaseModel):
    """One point of the space: a value for every parameter."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    params: dict[str, ParamValue]

    @property
    def id(self) -> str:
        """12 hex characters of sha256 over the parameters in canonical JSON."""
        canonical = json.dumps(self.params, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def overrides(self) -> dict[str, ParamValue]:
        """The parameters as ``load_settings`` overrides (dotted keys)."""
        return dict(self.params)


class SearchSpace(BaseModel):
    """The parameters and their values, and the search settings."""

    model_config = ConfigDict(extra="forbid")

    search: SearchSettings = Field(default_factory=SearchSettings)
    params: dict[str, list[ParamValue]] = Field(default_factory=dict)

    @field_validator("params")
    @classmethod
    def _non_empty(cls, value: dict[str, list[ParamValue]]) -> dict[str, list[ParamValue]]:
        for name, values in value.items():
            if not values:
                raise ValueError(f"parameter {name} has no values")
        return value

    @property
    def size(self) -> int:
        """How many distinct trials the grid holds."""
        size = 1
        for values in self.params.values():
            size *= len(dict.fromkeys(map(_key, values)))
        return size

    def trials(self) -> list[Trial]:
        """The trials grid or random search runs (optuna asks for its own)."""
        if self.search.method == "grid":
            return list(grid_trials(self.params))
        return random_trials(self.params, self.search.trials, self.search.seed)


def grid_trials(params: Mapping[str, list[ParamValue]]) -> Iterator[Trial]:
    """Every combination, in the order the values are listed (duplicates once)."""
    names = sorted(params)
    choices = [list({_key(v): v for v in params[name]}.values()) for name in names]
    for combo in itertools.product(*choices):
        yield Trial(params=dict(zip(names, combo, strict=True)))


def random_trials(params: Mapping[str, list[ParamValue]], count: int, seed: int) -> list[Trial]:
    """``count`` distinct combinations drawn with ``seed`` (all of them when the grid is smaller)."""
    grid = list(grid_trials(params))
    if count >= len(grid):
        return grid
    return random.Random(seed).sample(grid, count)


def load_space(path: Path) -> SearchSpace:
    """Read a space file and check every value against ``Settings``.

    Raises:
        ConfigError: missing or malformed file, unknown keys, or a value
            ``Settings`` refuses (named with its parameter).
    """
    try:
        from ccr.files import read_regular

        data = tomllib.loads(read_regular(path, max_bytes=16 * 1024 * 1024).decode("utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"space file {path} does not exist") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"space file {path} cannot be read: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"space file {path} cannot be read: it is nested too deeply") from exc
    raw_params = data.get("params", {})
    if not isinstance(raw_params, dict):
        raise ConfigError(f"space file {path}: [params] must be a table")
    data = {**data, "params": _flatten(raw_params)}
    try:
        space = SearchSpace.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"space file {path}: {problems}") from exc
    _check_values(space, path)
    return space


def _flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _check_values(space: SearchSpace, path: Path) -> None:
    """Each value alone must make valid settings (unknown names too), so a typo fails before any trial runs."""
    for name, values in space.params.items():
        for value in values:
            try:
                load_settings(None, env={}, overrides={name: value})
            except ConfigError as exc:
                raise ConfigError(f"space file {path}: parameter {name} = {value!r}: {exc}") from exc


def _key(value: ParamValue) -> str:
    return json.dumps(value)
