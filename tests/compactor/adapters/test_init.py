"""The adapters package's public surface is deliberate and needs no framework installed."""

from __future__ import annotations

import subprocess
import sys

import compactor.adapters as adapters


def test_all_is_sorted_and_lists_exactly_the_public_names() -> None:
    assert adapters.__all__ == sorted(adapters.__all__)
    public = {n for n in vars(adapters) if not n.startswith("_") and n[0].isupper()}
    assert set(adapters.__all__) == public


def test_importing_the_package_imports_no_framework() -> None:
    code = (
        "import sys, compactor.adapters; "
        "print(sorted(m for m in ('pydantic_ai', 'langchain', 'langchain_core', 'langgraph', 'agents', 'claude_agent_sdk') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"
