"""What the commands print on the fixtures, and screenshots of the pages they write."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from generator._common import IMAGES, ROOT, SESSION, TUNE_CORPUS, TUNE_SPACE
from generator._common import run as _run


def replay_output() -> str:
    """What ``compactor replay fixtures/sessions/long.jsonl`` prints on stdout."""
    with tempfile.TemporaryDirectory() as home:
        return _run(["compactor", "replay", SESSION], Path(home))


def report_example() -> str:
    """The first compaction of that replay's ``--json`` report, abridged as the README's example was."""
    sys.path.insert(0, str(ROOT / "tests"))
    import readme_examples

    with tempfile.TemporaryDirectory() as home:
        report = readme_examples.replay_json(Path(home))
    return readme_examples.render(readme_examples.abridged(report)) + "\n"


def masked_stub() -> str:
    """The first stub a replay of that session with masking on writes in place of a tool result."""
    with tempfile.TemporaryDirectory() as home:
        out = Path(home) / "masked.jsonl"
        _run(["compactor", "replay", SESSION, "--masking", "on", "--output", str(out)], Path(home))
        for line in out.read_text(encoding="utf-8").splitlines():
            for block in _content_blocks(json.loads(line)):
                text = block.get("content")
                if block.get("type") == "tool_result" and isinstance(text, str) and "tool output masked" in text:
                    return text.strip() + "\n"
    raise RuntimeError("the masked replay wrote no masked tool result")


def _content_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    content = (record.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def tune_output() -> str:
    """The trials table ``compactor tune fixtures/sessions --space examples/tune.toml`` prints (its timing left out)."""
    with tempfile.TemporaryDirectory() as home:
        out = _run(
            ["compactor", "tune", TUNE_CORPUS, "--space", TUNE_SPACE, "--jobs", "2", "--out", f"{home}/out"], Path(home)
        )
    return re.sub(r" in [\d.]+ s;", ";", out)


def screenshots() -> None:
    """Render the replay page and the tune report with headless Chromium into ``docs/images/``."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian: apt-get install -y chromium)")
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        _run(["compactor", "replay", SESSION, "--html", str(home / "replay.html")], home)
        _run(
            ["compactor", "tune", TUNE_CORPUS, "--space", TUNE_SPACE, "--jobs", "2", "--out", str(home / "tune")], home
        )
        for page, png in ((home / "replay.html", "replay.png"), (home / "tune" / "report.html", "tune-report.png")):
            subprocess.run(
                [
                    chromium,
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--hide-scrollbars",
                    "--window-size=1200,900",
                    f"--screenshot={IMAGES / png}",
                    page.as_uri(),
                ],
                capture_output=True,
                timeout=120,
                check=True,
            )
            print(f"wrote {IMAGES / png}", file=sys.stderr)
