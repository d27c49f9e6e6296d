"""Counter tokens to model tokens, fitted to recorded usage."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ccr import open_store
from compactor.claude_code.replay import replay
from compactor.core.calibration import Calibration, fit_calibration
from compactor.core.config import load_settings

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"


def test_no_pairs_is_the_identity() -> None:
    assert fit_calibration([]) == Calibration()
    assert Calibration().tokens(1234) == 1234


def test_one_pair_gives_an_overhead_at_scale_one() -> None:
    fitted = fit_calibration([(1_000, 16_000)])
    assert (fitted.overhead, fitted.scale, fitted.points) == (15_000, 1.0, 1)


@given(
    st.integers(min_value=0, max_value=50_000),
    st.floats(min_value=0.5, max_value=3.0),
    st.lists(st.integers(min_value=1, max_value=200).map(lambda k: k * 1_000), min_size=2, max_size=30, unique=True),
)
def test_an_exact_line_is_recovered(overhead: int, scale: float, xs: list[int]) -> None:
    fitted = fit_calibration([(x, round(overhead + scale * x)) for x in xs])
    assert abs(fitted.scale - scale) < 1e-3
    assert abs(fitted.overhead - overhead) <= 2 + 1e-3 * max(xs)


def test_a_fit_that_would_need_a_negative_overhead_goes_through_the_origin() -> None:
    fitted = fit_calibration([(10_000, 5_000), (20_000, 30_000)])
    assert fitted.overhead == 0 and fitted.scale > 0


def test_the_scale_stays_within_bounds() -> None:
    assert fit_calibration([(1_000, 0), (2_000, 1_000_000)]).scale == 4.0


def test_a_replay_recovers_the_generators_overhead_and_scale(tmp_path: Path) -> None:
    report = replay(LONG, settings=load_settings(env={}), store=open_store(tmp_path / "ccr.db"))
    assert report.calibration is not None and report.calibration.points > 10
    # The generator writes usage = 14,000 + the tiktoken count of the messages (+ output).
    assert 0.9 < report.calibration.scale < 1.15
    assert 10_000 < report.calibration.overhead < 16_000


def test_real_sessions_fit_a_plausible_tokenizer_ratio(shared_transcript: Path, tmp_path: Path) -> None:
    report = replay(shared_transcript, settings=load_settings(env={}), store=open_store(tmp_path / "ccr.db"))
    if report.calibration is None or report.calibration.points < 10:
        return
    assert 0.8 < report.calibration.scale < 2.0
    assert report.calibration.overhead < 60_000
