"""`compactor tune` in a real subprocess: the example space on the fixture sessions, end to end.

best.toml must reproduce the winning trial's figures through `compactor replay
--config`, and report.html must draw its charts in a real headless browser.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from compactor.core.config import Settings, load_settings
from tests.conftest import Browser

ROOT = Path(__file__).resolve().parents[3]
SESSIONS = ROOT / "fixtures" / "sessions"
EXAMPLE = ROOT / "examples" / "tune.toml"


def cli(*args: str, home: Path, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "compactor", *args],
        capture_output=True,
        env={**os.environ, "COMPACTOR_HOME": str(home)},
        timeout=600,
        check=False,
        cwd=cwd,
    )


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Any]]:
    home = tmp_path_factory.mktemp("home")
    out = tmp_path_factory.mktemp("tune") / "out"
    done = cli("tune", str(SESSIONS), "--space", str(EXAMPLE), "--jobs", "2", "--out", str(out), home=home)
    assert done.returncode == 0, done.stderr.decode()
    assert b"best by" in done.stdout
    return out, home, json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_the_example_run_writes_results_report_and_best_settings(tuned: tuple[Path, Path, dict[str, Any]]) -> None:
    out, _, results = tuned
    assert {p.name for p in out.iterdir()} == {"results.json", "sessions.jsonl", "report.html", "best.toml"}
    assert len(results["trials"]) == 8 and all(t["complete"] for t in results["trials"])
    assert [Path(p).name for p in results["corpus"]] == ["background.jsonl", "long.jsonl", "small.jsonl"]
    assert results["best"] in {t["id"] for t in results["trials"]}
    best = next(t for t in results["trials"] if t["id"] == results["best"])
    assert best["totals"]["recorded"]["compactions"] > 0
    assert set(best["totals"]["recorded"]) >= {"reread_coverage", "post_tokens", "survival_paths", "recoverable_share"}


def test_the_example_run_on_the_fixtures_gives_a_choice_and_a_tie_goes_to_what_restores_more(
    tuned: tuple[Path, Path, dict[str, Any]],
) -> None:
    _, _, results = tuned
    recorded = {t["id"]: t["totals"]["recorded"] for t in results["trials"]}
    assert len({m["reread_coverage_with_tail"] for m in recorded.values()}) > 1, "the trials differ"
    assert max(m["reread_coverage_with_tail"] for m in recorded.values()) > 0
    best = recorded[results["best"]]
    tied = [m for m in recorded.values() if m["reread_coverage_with_tail"] == best["reread_coverage_with_tail"]]
    assert all(best["reread_coverage"] >= m["reread_coverage"] for m in tied)
    assert best["post_vs_next_request"] is not None, "the context is set against Claude Code's next request"


def streamed(out: Path) -> list[dict[str, Any]]:
    lines = (out / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_per_session_results_are_streamed_to_sessions_jsonl_not_kept_in_results_json(
    tuned: tuple[Path, Path, dict[str, Any]],
) -> None:
    out, _, results = tuned
    assert results["sessions_file"] == "sessions.jsonl"
    assert all(t["sessions"] == [] for t in results["trials"])
    lines = streamed(out)
    assert sorted((s["trial_id"], s["session"]) for s in lines) == sorted(
        (t["id"], c) for t in results["trials"] for c in results["corpus"]
    )
    for trial in results["trials"]:  # the totals are the sums of the streamed sessions' counts
        mine = [s for s in lines if s["trial_id"] == trial["id"]]
        assert trial["totals"]["recorded"]["compactions"] == sum(s["metrics"]["recorded"]["compactions"] for s in mine)
        assert trial["totals"]["auto"]["post_tokens_sum"] == sum(s["metrics"]["auto"]["post_tokens_sum"] for s in mine)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert all(Path(c).name in page for c in results["corpus"])


def test_best_toml_is_the_winning_trials_settings(tuned: tuple[Path, Path, dict[str, Any]]) -> None:
    out, _, results = tuned
    best = next(t for t in results["trials"] if t["id"] == results["best"])
    tomllib.loads((out / "best.toml").read_text(encoding="utf-8"))
    assert load_settings(out / "best.toml", env={}) == Settings.model_validate(best["settings"])


@pytest.mark.parametrize("at", ["recorded", "auto"])
def test_replay_with_best_toml_reproduces_the_winning_trials_figures_exactly(
    tuned: tuple[Path, Path, dict[str, Any]], at: str, tmp_path: Path
) -> None:
    out, home, results = tuned
    sessions = [s for s in streamed(out) if s["trial_id"] == results["best"]]
    assert len(sessions) == len(results["corpus"]) > 0
    for session in sessions:
        done = cli(
            "replay",
            session["session"],
            "--config",
            str(out / "best.toml"),
            "--at",
            at,
            "--json",
            "--store",
            str(tmp_path / "ccr.db"),
            home=home,
        )
        assert done.returncode == 0, done.stderr.decode()
        assert json.loads(done.stdout)["metrics"] == session["metrics"][at]


def test_a_rerun_takes_every_replay_from_the_cache(tuned: tuple[Path, Path, dict[str, Any]], tmp_path: Path) -> None:
    _, home, results = tuned
    done = cli("tune", str(SESSIONS), "--space", str(EXAMPLE), "--out", str(tmp_path / "again"), home=home)
    assert done.returncode == 0, done.stderr.decode()
    again = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))
    assert again["jobs_run"] == 0 and again["jobs_cached"] == results["jobs_run"]
    assert again["best"] == results["best"]


def test_a_bad_space_exits_2_before_running(tmp_path: Path) -> None:
    space = tmp_path / "space.toml"
    space.write_text('[params]\n"attachments.max_files" = [0]\n', encoding="utf-8")
    done = cli("tune", str(SESSIONS), "--space", str(space), "--out", str(tmp_path / "o"), home=tmp_path)
    assert done.returncode == 2
    assert b"attachments.max_files" in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_ray_address_without_the_ray_executor_exits_2_before_running(tmp_path: Path) -> None:
    done = cli(
        "tune", str(SESSIONS), "--space", str(EXAMPLE), "--address", "auto", "--out", str(tmp_path / "o"), home=tmp_path
    )
    assert done.returncode == 2, done.stderr.decode()
    assert b"--executor ray" in done.stderr
    assert not (tmp_path / "o").exists()


def test_a_missing_corpus_exits_66_and_leaves_no_output_folder(tmp_path: Path) -> None:
    done = cli("tune", str(tmp_path / "none"), "--space", str(EXAMPLE), home=tmp_path, cwd=tmp_path)
    assert done.returncode == 66, done.stderr.decode()
    assert not (tmp_path / "tune-results").exists()


def test_an_out_folder_that_cannot_be_written_exits_73_before_any_replay(tmp_path: Path) -> None:
    plain = tmp_path / "plain-file"
    plain.write_text("x")
    for out in (plain, plain / "sub"):
        done = cli("tune", str(SESSIONS / "small.jsonl"), "--space", str(EXAMPLE), "--out", str(out), home=tmp_path)
        assert done.returncode == 73, done.stderr.decode()
        assert done.stderr.startswith(b"compactor: output_write_failed: ")
        assert done.stdout == b""
    assert plain.read_text() == "x"


def test_compactions_that_failed_closed_are_named_on_stderr(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "compactor",
            "tune",
            str(SESSIONS / "long.jsonl"),
            "--space",
            str(EXAMPLE),
            "--jobs",
            "1",
            "--no-cache",
            "--out",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        env={**os.environ, "COMPACTOR_HOME": str(tmp_path), "COMPACTOR_CCR_MAX_BYTES": "20000"},
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"compactor: warning: " in done.stderr and b"failed closed" in done.stderr
    assert b"ccr_budget_exceeded" not in done.stdout


def test_report_html_draws_its_charts_in_a_headless_browser(
    tuned: tuple[Path, Path, dict[str, Any]], tmp_path: Path, browser: Browser
) -> None:
    out, _, results = tuned
    html = browser.dom(out / "report.html")
    pareto = html[html.index('<svg id="pareto"') : html.index("</svg>", html.index('<svg id="pareto"'))]
    assert pareto.count('<circle class="trial') == len(results["trials"])
    assert "on-front" in pareto and "<polyline" in pareto
    assert html.count('<svg class="bars"') >= 10 and html.count('<rect x="100"') >= 4 * 10
    assert results["best"] in html
    shot = browser.screenshot(out / "report.html", tmp_path / "report.png", (1200, 1600))
    assert shot.stat().st_size > 10_000


def test_without_out_the_results_go_to_a_new_folder_under_the_home_and_json_prints_them(tmp_path: Path) -> None:
    checkout, home = tmp_path / "checkout", tmp_path / "home"
    checkout.mkdir()
    done = cli(
        "tune", str(SESSIONS / "small.jsonl"), "--space", str(EXAMPLE), "--jobs", "1", "--json", home=home, cwd=checkout
    )
    assert done.returncode == 0, done.stderr.decode()
    assert list(checkout.iterdir()) == []
    [line] = [x for x in done.stderr.decode().splitlines() if x.startswith("compactor: wrote ")]
    folder = Path(line.rsplit(" in ", 1)[1])
    assert folder.parent == home / "tune" / "runs"
    assert line == f"compactor: wrote results.json, sessions.jsonl, report.html, best.toml in {folder}"
    assert done.stdout.decode() == (folder / "results.json").read_text(encoding="utf-8")
    assert json.loads(done.stdout)["best"]
