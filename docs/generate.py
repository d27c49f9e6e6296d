"""Write the docs' generated parts from the code, so that they cannot drift from it.

``python docs/generate.py`` rewrites every file under ``docs/generated/``:

- ``cli.md``: every ``compactor`` and ``ccr`` command and subcommand with its
  options, from the argparse parsers (``compactor.cli.COMMANDS``, ``ccr.cli.COMMANDS``);
- ``settings.md``: every setting of ``compactor.core.config.Settings`` with its
  type, default, bounds and environment variable, from the pydantic model;
- ``errors.md``: every ``CompactorError`` subclass with its ``error_id`` and
  ``exit_code``, found by walking the subclasses after importing every module;
- ``replay.txt``, ``report.json``, ``masked.txt``, ``tune.txt``: what the README's first
  command prints, its ``--json`` report, a masked tool result, and a tuning run on the fixtures;
- ``plugin.md``: the hooks and MCP servers the plugin registers, from its own files;
- ``benchmarks.md``: the benchmark figures recorded in
  ``docs/measurements/benchmarks.json``, each with the date it was measured.

``--check`` writes nothing: it prints a diff and exits 1 when a file differs
from what the code gives now. ``--measure [NAME ...]`` runs the benchmark
scripts (all, or those named as ``benchmarks/run.py --only`` names them) and
records their figures in ``docs/measurements/benchmarks.json`` before
generating; ``--quick`` asks them for fewer repetitions. ``--screenshots``
renders the replay and tune HTML pages with headless Chromium into
``docs/images/``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the generator package beside this script

from generator._common import GENERATED, PACKAGES, ROOT, WIDTH
from generator.cli import cli_reference
from generator.errors import error_classes, errors_reference
from generator.measurements import benchmarks_page, measure
from generator.plugin import plugin_wiring
from generator.runs import masked_stub, replay_output, report_example, screenshots, tune_output
from generator.settings import MEANINGS, leaf_fields, settings_reference

__all__ = ["GENERATORS", "MEANINGS", "PACKAGES", "error_classes", "errors_reference", "leaf_fields", "main"]

GENERATORS: dict[str, Callable[[], str]] = {
    "cli.md": cli_reference,
    "settings.md": settings_reference,
    "errors.md": errors_reference,
    "replay.txt": replay_output,
    "report.json": report_example,
    "masked.txt": masked_stub,
    "tune.txt": tune_output,
    "benchmarks.md": benchmarks_page,
    "plugin.md": plugin_wiring,
}
"""File under ``docs/generated/`` -> the function that makes its text."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; print a diff and exit 1 if out of date")
    parser.add_argument("--measure", nargs="*", metavar="NAME", help="run these benchmarks (none named: all) first")
    parser.add_argument("--quick", action="store_true", help="with --measure: fewer repetitions")
    parser.add_argument("--screenshots", action="store_true", help="also render docs/images/*.png with chromium")
    args = parser.parse_args(argv)
    os.environ["COLUMNS"] = WIDTH  # argparse wraps usage lines to the terminal's width
    if args.measure is not None and not args.check:
        measure(args.measure or None, args.quick)
    stale = 0
    for name, make in GENERATORS.items():
        path = GENERATED / name
        wanted = make()
        current = path.read_text(encoding="utf-8") if path.is_file() else ""
        if current == wanted:
            continue
        if args.check:
            stale += 1
            rel = path.relative_to(ROOT).as_posix()
            sys.stdout.writelines(difflib.unified_diff(current.splitlines(True), wanted.splitlines(True), rel, "code"))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(wanted, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT).as_posix()}", file=sys.stderr)
    if args.screenshots and not args.check:
        screenshots()
    if stale:
        print(f"{stale} generated file(s) out of date; run: python docs/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
