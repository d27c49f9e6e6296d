"""Drive the real Claude Code client (pinned in ``package.json``) against the fake API.

One :class:`Session` is one isolated world: its own ``HOME`` (so its own
``~/.claude``), ``COMPACTOR_HOME``, project folder and fake API, and a
``PATH`` that holds only the system's folders, so the plugin has to find
compactor by itself. ``Session.run`` is one ``claude -p`` call; the first
starts the session and later ones ``--continue`` it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_api import FakeAnthropic, Step

__all__ = [
    "CLIENT_VERSION",
    "E2E_DIR",
    "PLUGIN",
    "REPO_ROOT",
    "RETRIEVE_TOOL",
    "STATS_TOOL",
    "Session",
    "client_binary",
    "missing_client_reason",
]

E2E_DIR = Path(__file__).resolve().parent
REPO_ROOT = E2E_DIR.parents[1]
PLUGIN = REPO_ROOT / "plugin"
CLIENT_VERSION = json.loads((E2E_DIR / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]
RETRIEVE_TOOL = "mcp__plugin_compactor_ccr__ccr_retrieve"
STATS_TOOL = "mcp__plugin_compactor_ccr__ccr_stats"
RUN_TIMEOUT_S = 120
ALLOWED_TOOLS = (
    "Read,Edit,Write,Bash,Glob,Grep,Skill,ToolSearch,TodoWrite,ExitPlanMode,"
    "mcp__plugin_compactor_ccr,mcp__plugin_compactor_memory"
)
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""No virtual environment on it: the plugin must find compactor without the shell's PATH."""


def client_binary() -> Path | None:
    """The installed client (``npm ci --prefix tests/e2e``), or ``$COMPACTOR_E2E_CLAUDE``.

    The platform package's native binary is used when it is there, so the
    suite does not depend on the package's install script having run.
    """
    override = os.environ.get("COMPACTOR_E2E_CLAUDE")
    if override:
        return Path(override)
    machine = {"x86_64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(), platform.machine())
    modules = E2E_DIR / "node_modules"
    for candidate in (
        modules / "@anthropic-ai" / f"claude-code-linux-{machine}" / "claude",
        modules / ".bin" / "claude",
    ):
        if candidate.exists():
            return candidate
    return None


def missing_client_reason() -> str | None:
    """Why the suite cannot run here, or None when it can."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node and npm are not installed (the CI script installs them)"
    binary = client_binary()
    if binary is None or not binary.exists():
        return f"the Claude Code client is not installed: run `npm ci --prefix tests/e2e` (pins {CLIENT_VERSION})"
    return None


@dataclass
class Session:
    """One isolated client world under ``root``; use ``with Session(root) as s:``."""

    root: Path
    script: list[Step] = field(default_factory=list)
    plugin: Path | None = PLUGIN
    extra_env: dict[str, str] = field(default_factory=dict)
    python: str | None = sys.executable
    project_dir: Path | None = None
    """The folder the client works in (default: ``root/project``); another world's, to resume its sessions."""
    """Given to the plugin as ``COMPACTOR_PYTHON``; None leaves the plugin to find one itself."""
    api: FakeAnthropic = field(init=False)
    runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list, init=False)
    saved: dict[str, Any] = field(default_factory=dict, init=False)
    """What a test saved along the way (a record as it stood before a later run)."""

    def __post_init__(self) -> None:
        self.home = self.root / "home"
        self.compactor_home = self.root / "compactor-home"
        self.project = self.project_dir or self.root / "project"
        for folder in (self.home, self.project):
            folder.mkdir(parents=True, exist_ok=True)
        self.api = FakeAnthropic(script=list(self.script))

    def __enter__(self) -> Session:
        self.api.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.api.__exit__(*exc)

    # -- running the client ---------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = {
            "PATH": SYSTEM_PATH,
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "COMPACTOR_HOME": str(self.compactor_home),
            "ANTHROPIC_BASE_URL": self.api.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-key",
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "MCP_CONNECTION_NONBLOCKING": "0",
        }
        if self.python is not None:
            env["COMPACTOR_PYTHON"] = self.python
        env.update(self.extra_env)
        return env

    def command(
        self, prompt: str, *, resume: str | None = None, cont: bool | None = None, args: Sequence[str] = ()
    ) -> list[str]:
        binary = client_binary()
        assert binary is not None, missing_client_reason()
        words = [str(binary)]
        if self.plugin is not None:
            words += ["--plugin-dir", str(self.plugin)]
        words += ["-p", prompt, "--allowedTools", ALLOWED_TOOLS]
        if resume is not None:
            words += ["--resume", resume]
        elif cont if cont is not None else bool(self.runs):
            words.append("--continue")
        return [*words, *args]

    def run(
        self,
        prompt: str,
        *,
        script: Sequence[Step] = (),
        resume: str | None = None,
        cont: bool | None = None,
        args: Sequence[str] = (),
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """One ``claude -p PROMPT`` (``--continue`` after the first); ``script`` is queued for the API first."""
        self.api.script.extend(script)
        done = self._run(self.command(prompt, resume=resume, cont=cont, args=args))
        self.runs.append(done)
        assert not self.api.script_errors, f"a scripted step failed: {self.api.script_errors}"
        if check:
            assert done.returncode == 0, f"claude exited {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def client(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Any other client command (``plugin validate``, ``mcp list``), in this world."""
        binary = client_binary()
        assert binary is not None, missing_client_reason()
        return self._run([str(binary), *args])

    def _run(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        """``argv`` in this world: its project, its environment, no stdin, the run time limit."""
        return subprocess.run(
            argv,
            cwd=self.project,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )

    def install_transcript(self, source: Path, session_id: str) -> Path:
        """Put a session file where the client looks for this project's sessions (for ``--resume``)."""
        folder = self.home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(self.project))
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{session_id}.jsonl"
        shutil.copyfile(source, target)
        return target

    def compactor(self, *args: str) -> subprocess.CompletedProcess[str]:
        """A ``compactor`` command with this world's COMPACTOR_HOME (as a user would run it)."""
        return subprocess.run(
            [sys.executable, "-m", "compactor", *args],
            cwd=self.project,
            env={**self.env(), "PATH": os.environ.get("PATH", SYSTEM_PATH)},
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )

    # -- what the client wrote -------------------------------------------------------------

    def transcripts(self) -> list[Path]:
        return sorted((self.home / ".claude" / "projects").glob("*/*.jsonl"))

    def transcript(self) -> Path:
        """The session's transcript (the session must be the only one)."""
        (path,) = self.transcripts()
        return path

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.transcript().read_text(encoding="utf-8").splitlines() if line]

    def session_id(self) -> str:
        return self.transcript().stem

    def session_record(self) -> dict[str, Any]:
        """What the plugin recorded for the session in ``$COMPACTOR_HOME/sessions``."""
        path = self.compactor_home / "sessions" / f"{self.session_id()}.json"
        return dict(json.loads(path.read_text(encoding="utf-8")))

    def boundaries(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("type") == "system" and r.get("subtype") == "compact_boundary"]
