"""Shared test fixtures: an isolated COMPACTOR_HOME, the shared real transcripts, a browser,
read-only paths, stores that count their transactions, a tokenizer that records what it tokenizes,
a reader of a database file's schema, and an MCP client that talks to a server over stdio; and the
line that says how long the end-to-end suite took."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings as hypothesis_settings

from ccr import SQLiteStore
from compactor.core.tokens import TiktokenCounter

# No per-example deadline for property tests: a time limit is a benchmark's, not a unit test's, and the
# suite runs beside other work on both cores (Hypothesis's 200 ms default fails a slow example).
hypothesis_settings.register_profile("compactor", deadline=None)
hypothesis_settings.load_profile("compactor")

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURES = REPO_ROOT / "fixtures"
SHARED_TRANSCRIPTS = REPO_ROOT.parent / "shared" / "transcripts"


@pytest.fixture(autouse=True)
def compactor_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own COMPACTOR_HOME, never the user's ~/.compactor."""
    home = tmp_path_factory.mktemp("compactor-home")
    monkeypatch.setenv("COMPACTOR_HOME", str(home))
    for name in ("COMPACTOR_CCR_MAX_BYTES",):
        monkeypatch.delenv(name, raising=False)
    return home


_E2E: dict[str, Any] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "tests/e2e/" not in report.nodeid.replace("\\", "/"):
        return
    _E2E["seconds"] = _E2E.get("seconds", 0.0) + report.duration
    if report.skipped and isinstance(report.longrepr, tuple):
        _E2E.setdefault("skipped", str(report.longrepr[2]).removeprefix("Skipped: "))
    elif report.when == "call":
        _E2E["ran"] = True


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say how long the end-to-end tests in tests/e2e took, added up (CI prints it; the whole run
    should stay under 20 minutes). Here rather than in their conftest: under pytest-xdist the
    process that prints the summary gets every test's report but loads no conftest below this one."""
    if "seconds" in _E2E:
        state = "ran" if _E2E.get("ran") else "skipped: " + str(_E2E.get("skipped", ""))
        terminalreporter.write_line(f"e2e suite: {_E2E['seconds']:.0f} s ({state})")


@pytest.fixture
def shared_transcripts() -> Path:
    """The folder of real Claude Code transcripts; skips when it is absent."""
    if not SHARED_TRANSCRIPTS.is_dir():
        pytest.skip("../shared/transcripts is not present")
    return SHARED_TRANSCRIPTS


def _shared_transcript_paths() -> list[Path]:
    if not SHARED_TRANSCRIPTS.is_dir():
        return []
    return sorted(p for p in SHARED_TRANSCRIPTS.rglob("*.jsonl") if "subagents" not in p.parts)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test asking for ``shared_transcript`` runs once per real transcript.

    When ``../shared/transcripts`` is absent it runs once and skips.
    """
    if "shared_transcript" in metafunc.fixturenames:
        paths = _shared_transcript_paths()
        if paths:
            metafunc.parametrize(
                "shared_transcript",
                paths,
                ids=[str(p.relative_to(SHARED_TRANSCRIPTS)) for p in paths],
            )
        else:
            metafunc.parametrize(
                "shared_transcript",
                [pytest.param(None, marks=pytest.mark.skip(reason="../shared/transcripts is not present"))],
            )


class Browser:
    """Headless Chromium (Debian's package) run as a subprocess: the page as rendered, or a picture of it."""

    FLAGS = (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--virtual-time-budget=2000",
    )

    def __init__(self, binary: str, profile: Path) -> None:
        self.binary = binary
        self.profile = profile

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.binary, *self.FLAGS, f"--user-data-dir={self.profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )

    def dom(self, page: Path) -> str:
        """The DOM after the page's scripts ran, serialized."""
        return self._run("--dump-dom", page.resolve().as_uri()).stdout

    def screenshot(self, page: Path, out: Path, size: tuple[int, int] = (1200, 1800)) -> Path:
        """A PNG of the page at ``size`` (width, height)."""
        self._run(f"--screenshot={out}", f"--window-size={size[0]},{size[1]}", page.resolve().as_uri())
        return out


@pytest.fixture
def browser(tmp_path: Path) -> Browser:
    """Headless Chromium; skips when it is not installed (``.ci/run`` installs it)."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.skip("chromium is not installed")
    return Browser(binary, tmp_path / "chromium-profile")


@pytest.fixture
def freeze() -> Iterator[Callable[[Path], None]]:
    """Make a file or folder read-only for the test, even for root; modes and attributes come back after.

    Root ignores file modes, so as root the path is also made immutable
    (``chattr +i``); where that cannot be done the test skips, saying why.
    """
    frozen: list[Path] = []

    def make_read_only(path: Path) -> None:
        frozen.append(path)
        path.chmod(0o555 if path.is_dir() else 0o444)
        if os.geteuid() != 0:
            return
        if shutil.which("chattr") is None:
            pytest.skip("running as root and chattr is missing: cannot make a file read-only for root")
        done = subprocess.run(["chattr", "+i", str(path)], check=False, capture_output=True)
        if done.returncode != 0:
            pytest.skip(f"running as root on a file system without immutable files: {done.stderr!r}")

    yield make_read_only
    for path in reversed(frozen):
        if os.geteuid() == 0:
            subprocess.run(["chattr", "-i", str(path)], check=False, capture_output=True)
        path.chmod(0o755 if path.is_dir() else 0o644)


class CommitCountingStore(SQLiteStore):
    """A real SQLite store in a file that counts the transactions it commits."""

    def __init__(self, path: Path, *, max_bytes: int = 64 * 1024 * 1024) -> None:
        super().__init__(path, max_bytes=max_bytes)
        self.commits = 0
        assert self._conn is not None
        self._conn.set_trace_callback(self._saw)

    def _saw(self, statement: str) -> None:
        self.commits += statement.strip().upper() == "COMMIT"


@pytest.fixture
def counting_store(tmp_path: Path) -> Callable[..., CommitCountingStore]:
    """A maker of ``CommitCountingStore`` files in the test's folder: ``counting_store("ccr.db", max_bytes=...)``."""

    def make(name: str = "ccr.db", *, max_bytes: int = 64 * 1024 * 1024) -> CommitCountingStore:
        return CommitCountingStore(tmp_path / name, max_bytes=max_bytes)

    return make


class RecordingTiktoken(TiktokenCounter):
    """tiktoken, recording every text it tokenizes."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def count_text(self, text: str) -> int:
        self.texts.append(text)
        return super().count_text(text)


def _schema_of(path: Path) -> tuple[list[tuple[str, str]], list[int]]:
    raw = sqlite3.connect(path)
    try:
        objects = [
            (name, "".join((sql or "").split()))
            for name, sql in raw.execute("SELECT name, sql FROM sqlite_master ORDER BY name")
        ]
        versions = [v for (v,) in raw.execute("SELECT version FROM schema_migrations ORDER BY version")]
    finally:
        raw.close()
    return objects, versions


@pytest.fixture
def schema_of() -> Callable[[Path], tuple[list[tuple[str, str]], list[int]]]:
    """A reader of a database file's schema: its tables, indexes and triggers (name and SQL without
    whitespace), and the migration versions it records."""
    return _schema_of


MCP_TIMEOUT_S = 60


@pytest.fixture
def mcp_talk(tmp_path: Path) -> Callable[[list[str], Callable[[Any], Awaitable[Any]]], Any]:
    """``talk(args, conversation)``: start ``python args...`` as an MCP server over stdio (the
    official SDK's client), run ``conversation(session)`` after ``initialize``, stop it, and return
    what the conversation returned. The server's stderr goes to ``server-stderr.txt`` in the
    test's folder; its ``COMPACTOR_HOME`` is a folder nothing else uses."""
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    def talk(args: list[str], conversation: Callable[[Any], Awaitable[Any]]) -> Any:
        params = StdioServerParameters(
            command=sys.executable, args=args, env={"COMPACTOR_HOME": str(tmp_path / "unused-home")}
        )

        async def main() -> Any:
            with anyio.fail_after(MCP_TIMEOUT_S), (tmp_path / "server-stderr.txt").open("w") as errlog:
                async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    return await conversation(session)

        return anyio.run(main)

    return talk
