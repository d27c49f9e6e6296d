"""The benchmark scripts import one another as top-level modules (``python benchmarks/bench_x.py``
puts their folder on ``sys.path``): their tests import them the same way, from that folder."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
