"""`compactor show` and `compactor replay --html` as real subprocesses; the page in a real browser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LONG = Path(__file__).resolve().parents[3] / "fixtures" / "sessions" / "long.jsonl"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compactor", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def replayed(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:  # type: ignore[type-arg]
    """The long fixture replayed once: its JSON report, the report file and the HTML page."""
    folder = tmp_path_factory.mktemp("show")
    report_file, page = folder / "report.json", folder / "report.html"
    done = cli("replay", str(LONG), "--json", "--store", str(folder / "ccr.db"), "--html", str(page))
    assert done.returncode == 0, done.stderr
    report_file.write_text(done.stdout, encoding="utf-8")
    return json.loads(done.stdout), report_file, page


def test_the_json_report_carries_each_summary_and_compacted_context(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, _, _ = replayed
    assert len(report["compactions"]) >= 2
    for c in report["compactions"]:
        assert c["summary"] and c["summary"] in c["context"][0]["text"]
        parts = [e["part"] for e in c["context"]]
        assert parts[0] == "summary" and "attachment" in parts
    # A last round larger than the tail's budget is left to the summary; the first compaction keeps one.
    assert "tail" in [e["part"] for e in report["compactions"][0]["context"]]
    assert len(report["timeline"]) > 10


def test_show_lists_every_dropped_span_with_the_command_that_brings_it_back(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, report_file, _ = replayed
    done = cli("show", str(report_file))
    assert done.returncode == 0, done.stderr
    for c in report["compactions"]:
        for d in c["dropped"]:
            assert f"ccr get --store {report['store']} {d['handle']}" in done.stdout
        for a in c["attachments"]:
            assert (a["path"] or a["name"]) in done.stdout
    assert done.stdout.count("compaction ") >= len(report["compactions"])


def test_show_summary_and_context_print_what_the_model_sees_next(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, report_file, _ = replayed
    summary = cli("show", str(report_file), "--summary", "--compaction", "2")
    assert summary.returncode == 0, summary.stderr
    assert report["compactions"][1]["summary"] in summary.stdout
    assert report["compactions"][0]["summary"] not in summary.stdout
    context = cli("show", str(report_file), "--context", "-n", "1")
    assert context.returncode == 0, context.stderr
    assert "--- summary: user" in context.stdout and "--- tail:" in context.stdout
    assert "--- attachment:" in context.stdout


def test_show_of_a_single_compaction_report_works(replayed: tuple[dict, Path, Path], tmp_path: Path) -> None:  # type: ignore[type-arg]
    report, _, _ = replayed
    one = tmp_path / "one.json"
    one.write_text(json.dumps(report["compactions"][0]), encoding="utf-8")
    done = cli("show", str(one), "--summary")
    assert done.returncode == 0, done.stderr
    assert report["compactions"][0]["summary"] in done.stdout


@pytest.mark.parametrize(
    ("content", "code", "error_id"),
    [
        (None, 66, "input_not_found"),
        ("not json", 65, "input_invalid"),
        ("[1, 2]", 65, "input_invalid"),
        ('{"compactions": [{"trigger": "sideways"}]}', 65, "input_invalid"),
        ('{"trials": [], "best": null}', 65, "input_invalid"),
        ("{}", 65, "input_invalid"),
    ],
)
def test_show_refuses_what_is_not_a_report(tmp_path: Path, content: str | None, code: int, error_id: str) -> None:
    path = tmp_path / "r.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = cli("show", str(path))
    assert done.returncode == code
    assert done.stderr.startswith(f"compactor: {error_id}: ") and "Traceback" not in done.stderr
    assert done.stdout == ""


def test_show_refuses_a_compaction_number_the_report_does_not_have(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    _, report_file, _ = replayed
    done = cli("show", str(report_file), "--compaction", "99")
    assert done.returncode == 2 and "usage_error" in done.stderr


def test_show_html_writes_the_same_page_as_replay_html(replayed: tuple[dict, Path, Path], tmp_path: Path) -> None:  # type: ignore[type-arg]
    _, report_file, page = replayed
    again = tmp_path / "again.html"
    done = cli("show", str(report_file), "--html", str(again))
    assert done.returncode == 0, done.stderr
    assert again.read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
    assert done.stdout == "" and done.stderr == f"compactor: wrote the report page to {again}\n"


def test_the_page_is_self_contained(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    _, _, page = replayed
    html = page.read_text(encoding="utf-8")
    # Text from the session is escaped (a quote becomes &#34;), so these can only be the page's own markup.
    for remote in ('src="', 'href="', "<link ", "@import", "url("):
        assert remote not in html


def test_the_page_renders_the_chart_every_compaction_and_every_handle(
    replayed: tuple[dict, Path, Path],
    browser,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    report, _, page = replayed
    dom = browser.dom(page)
    assert 'id="context-chart"' in dom
    polyline = dom.split('<polyline class="line" points="', 1)[1].split('"', 1)[0]
    assert len(polyline.split()) == len(report["timeline"])
    assert dom.count('class="compaction"') - dom.count('class="compaction" x1') == len(report["compactions"])
    for c in report["compactions"]:
        for d in c["dropped"]:
            assert d["handle"] in dom
    shot = browser.screenshot(page, tmp_path / "report.png")
    assert shot.stat().st_size > 10_000


def test_masking_steps_appear_in_the_page_and_in_show(tmp_path: Path) -> None:
    page, report_file = tmp_path / "masked.html", tmp_path / "masked.json"
    done = cli(
        "replay", str(LONG), "--json", "--masking", "on", "--store", str(tmp_path / "ccr.db"), "--html", str(page)
    )
    assert done.returncode == 0, done.stderr
    report_file.write_text(done.stdout, encoding="utf-8")
    steps = [m for m in json.loads(done.stdout)["masking"] if m["ok"]]
    assert steps, "masking on the long fixture masks something"
    html = page.read_text(encoding="utf-8")
    assert "Masking steps" in html and html.count('class="masking"') >= len(steps) + 1
    for handle in steps[0]["handles"]:
        assert f"ccr get --store {tmp_path / 'ccr.db'} {handle}" in html
    shown = cli("show", str(report_file))
    assert shown.returncode == 0, shown.stderr
    assert f"masking: {len(steps)} steps" in shown.stdout


def test_show_html_over_its_own_report_exits_2_and_leaves_the_report(
    replayed: tuple[dict, Path, Path], tmp_path: Path
) -> None:  # type: ignore[type-arg]
    _, report_file, _ = replayed
    copy = tmp_path / "report.json"
    copy.write_bytes(report_file.read_bytes())
    done = cli("show", str(copy), "--html", str(copy))
    assert done.returncode == 2
    assert done.stderr.startswith("compactor: output_refused: ") and "overwrite" in done.stderr
    assert copy.read_bytes() == report_file.read_bytes()


def test_show_html_that_cannot_be_written_exits_73(replayed: tuple[dict, Path, Path], tmp_path: Path) -> None:  # type: ignore[type-arg]
    _, report_file, _ = replayed
    done = cli("show", str(report_file), "--html", str(tmp_path / "absent" / "page.html"))
    assert done.returncode == 73
    assert done.stderr.startswith("compactor: output_write_failed: ")


def test_a_page_without_compactions_says_the_context_stayed_below_the_threshold(tmp_path: Path) -> None:
    small = LONG.parent / "small.jsonl"
    page = tmp_path / "small.html"
    done = cli("replay", str(small), "--store", str(tmp_path / "ccr.db"), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert "No compaction: the context stayed below the 167,000-token threshold." in page.read_text(encoding="utf-8")
    report = tmp_path / "small.json"
    report.write_text(cli("replay", str(small), "--store", str(tmp_path / "ccr.db"), "--json").stdout, encoding="utf-8")
    assert cli("show", str(report), "--html", str(page)).returncode == 0
    assert "No compaction: the context stayed below the 167,000-token threshold." in page.read_text(encoding="utf-8")


def test_every_ccr_get_line_names_the_store_the_replay_wrote_to(replayed: tuple[dict, Path, Path]) -> None:  # type: ignore[type-arg]
    report, report_file, page = replayed
    store = report["store"]
    assert store and Path(store).is_absolute()
    handle = report["compactions"][0]["dropped"][0]["handle"]
    shown = cli("show", str(report_file))
    line = next(row for row in shown.stdout.splitlines() if handle in row)
    command = line[line.index("ccr get") :].split("  ")[0]
    assert command == f"ccr get --store {store} {handle}"
    assert f"ccr get --store {store} {handle}" in page.read_text(encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", *command.split()],
        capture_output=True,
        timeout=60,
        check=False,
        cwd=Path(store).parent.parent,
    )
    assert done.returncode == 0 and done.stdout.startswith(b"{")


@pytest.mark.parametrize("flag", ["--summary", "--context"])
def test_show_summary_or_context_of_a_report_without_compactions_says_so(tmp_path: Path, flag: str) -> None:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session": "s.jsonl", "compactions": []}), encoding="utf-8")
    done = cli("show", str(report), flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no compaction in this report\n"


def _section(text: str, title: str) -> list[str]:
    """The rows under ``title`` ("  attachments:") of the first compaction, up to the next section."""
    lines = text.splitlines()
    start = lines.index(title) + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("    "))
    return lines[start:end]


def test_show_columns_stay_aligned_when_a_path_is_long(replayed: tuple[dict, Path, Path], tmp_path: Path) -> None:  # type: ignore[type-arg]
    report, _, _ = replayed
    first = report["compactions"][0]
    long_path = "/home/USER/projects/inventory/" + "very-long-folder-name/" * 4 + "module.py"
    first["attachments"][1]["path"] = long_path
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(first), encoding="utf-8")
    done = cli("show", str(edited))
    assert done.returncode == 0, done.stderr
    rows = _section(done.stdout, "  attachments:")
    assert any(long_path in row for row in rows)
    token_columns = {row.index(" tokens") for row in rows}
    assert len(token_columns) == 1  # every row's token count ends in the same column
    reasons = _section(done.stdout, "  skipped:")
    starts = {
        len(row) - len(s["reason"])
        for row, s in zip(
            reasons,
            [s for s in first["skipped"] if s["path"] not in {a["path"] for a in first["attachments"]}],
            strict=True,
        )
    }
    assert len(starts) == 1


def test_show_lists_the_plan_file_once_as_its_attachment_not_again_as_skipped(
    replayed: tuple[dict, Path, Path],
) -> None:  # type: ignore[type-arg]
    report, report_file, _ = replayed
    first = report["compactions"][0]
    plan = next(a for a in first["attachments"] if a["type"] == "plan_file")
    assert any(s["path"] == plan["path"] and s["reason"].startswith("plan_file") for s in first["skipped"])
    done = cli("show", str(report_file), "-n", "1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count(plan["path"]) == 1
    [row] = [r for r in _section(done.stdout, "  attachments:") if plan["path"] in r]
    assert row.split()[0] == "plan_file" and "also read as a file" in row


def test_show_json_prints_the_report_or_one_compaction_as_json(
    replayed: tuple[dict, Path, Path], tmp_path: Path
) -> None:  # type: ignore[type-arg]
    report, report_file, _ = replayed
    whole = cli("show", str(report_file), "--json")
    assert whole.returncode == 0, whole.stderr
    data = json.loads(whole.stdout)
    assert [c["dropped"] for c in data["compactions"]] == [c["dropped"] for c in report["compactions"]]
    assert data["session"] == report["session"] and data["store"] == report["store"]
    second = json.loads(cli("show", str(report_file), "--json", "-n", "2").stdout)
    assert (
        len(second["compactions"]) == 1 and second["compactions"][0]["summary"] == report["compactions"][1]["summary"]
    )
    again = tmp_path / "again.json"
    again.write_text(whole.stdout, encoding="utf-8")
    assert cli("show", str(again)).stdout == cli("show", str(report_file)).stdout
