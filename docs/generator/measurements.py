"""The benchmarks page, and recording what the benchmark scripts print (``--measure``)."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import tempfile
from datetime import UTC, datetime

from generator._common import HEADER, MEASUREMENTS, ROOT
from generator._common import cell as _cell


def benchmarks_page() -> str:
    """The recorded benchmark figures, one table per script, each with its date."""
    data = json.loads(MEASUREMENTS.read_text(encoding="utf-8")) if MEASUREMENTS.is_file() else {"scripts": {}}
    lines = [
        HEADER.format(source="docs/measurements/benchmarks.json, written by docs/generate.py --measure"),
    ]
    for script, entry in sorted(data["scripts"].items()):
        lines += [
            f"### `benchmarks/bench_{script}.py`",
            "",
            f"Measured {entry['date']} ({'quick' if entry['quick'] else 'full'} run, "
            f"Python {entry['python']}, {entry['cpus']} CPUs"
            + (f", load average {entry['load']:g} when it started" if "load" in entry else "")
            + ").",
            "",
            "| figure | ratio (median, min–max) | target | result |",
            "|---|---|---|---|",
        ]
        details = []
        for fig in entry["figures"]:
            if fig["missing"] is not None or not fig["ratios"]:
                shown, verdict = f"missing: {fig['missing'] or 'no runs'}", "missing"
            else:
                ratios = fig["ratios"]
                shown = f"{_median(ratios):.2f}x ({min(ratios):.2f}–{max(ratios):.2f})"
                verdict = "pass" if fig["passed"] else "FAIL"
            lines.append(
                f"| {_cell(fig['name'])} | {_cell(shown)} | {fig['direction']} {fig['target']:g}x | {verdict} |"
            )
            if fig["detail"]:
                details.append(f"- **{_cell(fig['name'])}**: {_cell(fig['detail'])}")
        lines.append("")
        if details:
            lines += [*details, ""]
    if not data["scripts"]:
        lines += ["No figures recorded yet: run `python docs/generate.py --measure`.", ""]
    return "\n".join(lines).rstrip() + "\n"


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _without_local_paths(text: str) -> str:
    """``text`` with this checkout's folder as ``.`` and temporary paths as ``<temporary file>``:
    the page describes the figure, not the machine it was measured on."""
    text = text.replace(str(ROOT), ".")
    return re.sub(rf"{re.escape(tempfile.gettempdir())}/[^\s:;,)]+", "<temporary file>", text)


def measure(names: list[str] | None, quick: bool) -> None:
    """Run the benchmark scripts (``names``, else all) and record their figures with today's date."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import run as bench_run  # type: ignore[import-not-found]  # benchmarks/run.py, found on the path just set

    known = bench_run.scripts()
    chosen = [bench_run.benchmark_name(n) for n in names] if names else list(known)
    unknown = sorted(set(chosen) - set(known))
    if unknown:
        raise SystemExit(f"no benchmark {', '.join(unknown)}; there are: {', '.join(known)}")
    data = json.loads(MEASUREMENTS.read_text(encoding="utf-8")) if MEASUREMENTS.is_file() else {"scripts": {}}
    for name in chosen:
        load = round(os.getloadavg()[0], 2)  # how busy the machine was as the script started
        figures = bench_run.collect([name], quick)
        data["scripts"][name] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "quick": quick,
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load": load,
            "figures": [
                {
                    "name": f.name,
                    "ratios": [round(r, 4) for r in f.ratios],
                    "target": f.target,
                    "direction": f.direction,
                    "passed": f.passed,
                    "detail": _without_local_paths(f.detail),
                    "missing": f.missing,
                }
                for f in figures
            ],
        }
        MEASUREMENTS.parent.mkdir(parents=True, exist_ok=True)
        MEASUREMENTS.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"recorded {len(figures)} figures of bench_{name}.py", file=sys.stderr)
