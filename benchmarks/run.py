"""Run every benchmark and print one table: figure, ratio (median, min–max), target, result.

Usage: ``python benchmarks/run.py [--quick] [--only NAME ...]``, where NAME is a
script's name with or without its ``bench_`` and ``.py`` (an unknown one is an
error that lists them).

Runs every ``benchmarks/bench_*.py``, in file-name order; each must define
``figures(quick)`` (the protocol in ``_common.py``). A script that fails, or
that defines no ``figures`` or returns none, shows as one failed row naming
why, so one broken benchmark does not hide the others and none is skipped
unseen. Exits 1 when any figure fails its target, else 0.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import traceback
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from _common import Figure, print_figures  # noqa: E402  (needs the folder on sys.path)


def load(path: Path) -> ModuleType:
    """Import one benchmark script as a module (its top level does no work, by the protocol)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # dataclasses and pickling look their module up there
    spec.loader.exec_module(module)
    return module


def scripts() -> dict[str, Path]:
    """Every ``bench_NAME.py`` here by its NAME, in file-name order."""
    return {path.stem.removeprefix("bench_"): path for path in sorted(HERE.glob("bench_*.py"))}


def collect(names: list[str] | None, quick: bool) -> list[Figure]:
    figures: list[Figure] = []
    for name, path in scripts().items():
        if names and name not in names:
            continue
        print(f"running {path.name} ...", file=sys.stderr, flush=True)
        try:
            module = load(path)
            make = getattr(module, "figures", None)
            if make is None:
                figures.append(_failed(path, "defines no figures(quick); every benchmark must (see _common.py)"))
                continue
            made = list(make(quick=quick))
            if not made:
                figures.append(_failed(path, "figures() returned no figure"))
            figures.extend(made)
        except Exception as exc:  # one broken script must not hide the others' figures
            traceback.print_exc()
            figures.append(_failed(path, f"{type(exc).__name__}: {exc}"))
    return figures


def _failed(path: Path, why: str) -> Figure:
    """A row that fails, naming the script and why it gave no figures."""
    return Figure(name=f"{path.name}: error", ratios=(float("inf"),), target=0, direction="<=", detail=why)


def benchmark_name(given: str) -> str:
    """``given`` as ``collect`` names a script: ``dedup``, ``bench_dedup`` and ``bench_dedup.py`` are one."""
    return Path(given).name.removesuffix(".py").removeprefix("bench_")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run the benchmarks and print their figures against targets.")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (wider min–max)")
    parser.add_argument(
        "--only", nargs="+", metavar="NAME", help="only bench_NAME.py (e.g. --only dedup tokens, or --only bench_dedup)"
    )
    args = parser.parse_args(argv)
    names = [benchmark_name(n) for n in args.only] if args.only else None
    known = scripts()
    unknown = sorted(set(names or ()) - set(known))
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}; there are: {', '.join(known)}")
    figures = collect(names, args.quick)
    print_figures(figures)
    failed = sum(f.passed is False for f in figures)
    missing = sum(f.passed is None for f in figures)
    print(f"\n{len(figures)} figures: {len(figures) - failed - missing} pass, {failed} fail, {missing} missing")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
