"""The files a compaction restores, at Claude Code's own compaction points of real sessions.

Quality figures, not timings: each is a share or a size ratio measured once
(the replay is deterministic), pooled over the shared real transcripts and,
when it is there, the shared corpus (missing without either).

- Re-read coverage: of the files read before a compaction and read again
  after it (before the next one), the share the compacted context held:
  counting the preserved tail, and in the file attachments alone.
- Cut files: of the restored files that had to be cut and that the agent
  edited before the compaction, the share whose last live edit (the newest
  edit whose new text is still in the file) is shown, every line of it.
- Size: the median context right after compaction (``post_tokens``) against
  the median of what Claude Code's next request carried there.
- The same four for the preset ``examples/claude-code-card.toml`` (Claude
  Code's card: 5 files of at most 5,000 tokens, where the default restores
  12 of at most 1,500), unless ``--quick``.
- The README's first command (``replay fixtures/sessions/long.jsonl``):
  the share of its compactions that restore at least one file.

Run ``python benchmarks/bench_files.py`` (or ``run.py --only files``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import REPO, Figure, claude_code_next_requests, main, missing, shared_sessions

SHARED_CORPUS = REPO.parent / "shared" / "corpus"
"""More real sessions next to the repository (for evaluation and tuning; absent on most machines)."""
README_SESSION = REPO / "fixtures" / "sessions" / "long.jsonl"
PRESET = REPO / "examples" / "claude-code-card.toml"
"""Claude Code's card for files (5 of 5,000 tokens), measured beside the defaults."""
_EDIT_TOOLS = ("Edit", "MultiEdit")


def sessions() -> list[Path]:
    """The shared transcripts and the shared corpus's sessions (subagent files left out)."""
    corpus = sorted(p for p in SHARED_CORPUS.rglob("*.jsonl") if "subagents" not in p.parts)
    return shared_sessions() + corpus


def _records(session: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in session.read_text(encoding="utf-8").splitlines() if line.strip()]


def _edits(records: Sequence[dict[str, Any]], before_line: int) -> dict[str, list[str]]:
    """The new texts of every Edit and MultiEdit before transcript line ``before_line``, by path, newest first."""
    found: dict[str, list[str]] = {}
    for record in records[: max(before_line - 1, 0)]:
        content = (record.get("message") or {}).get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use" or block.get("name") not in _EDIT_TOOLS:
                continue
            tool_input = block.get("input") or {}
            edits = tool_input.get("edits") if block.get("name") == "MultiEdit" else [tool_input]
            for edit in edits if isinstance(edits, list) else []:
                text = edit.get("new_string") if isinstance(edit, dict) else None
                if isinstance(text, str) and text.strip() and isinstance(tool_input.get("file_path"), str):
                    found.setdefault(tool_input["file_path"], []).append(text)
    return {path: texts[::-1] for path, texts in found.items()}


def _shows(text: str, edit: str) -> bool:
    return all(line.strip() in text for line in edit.splitlines() if line.strip())


class _Cuts:
    """Counts, at each compaction, the cut files whose last live edit is shown."""

    def __init__(self, records: list[dict[str, Any]], store: Any) -> None:
        self.records, self.store = records, store
        self.shown = self.total = 0
        self.misses: list[str] = []

    def __call__(self, result: Any, line: int) -> None:
        if not result.ok:
            return
        edits = _edits(self.records, line)
        texts = [m.text() for m in result.messages if m.is_meta]
        for entry in result.report.attachments:
            if entry.type != "file" or not entry.truncated or not edits.get(entry.path) or entry.handle is None:
                continue
            text = next((t for t in texts if f'<file-content path="{entry.path}"' in t), "")
            stored = self.store.get(entry.handle).decode("utf-8", "replace")
            live = next((e for e in edits[entry.path] if e in stored or e in text), None)
            if live is None:
                continue
            self.total += 1
            if _shows(text, live):
                self.shown += 1
            else:
                self.misses.append(f"{Path(entry.path).name} at line {line}")


def _replay(
    session: Path, folder: Path, *, at: str, on_compaction: Any = None, store: Any = None, config: Path | None = None
) -> Any:
    import ccr
    from compactor.claude_code.replay import replay
    from compactor.core.config import load_settings
    from compactor.summarizers import make_summarizer

    settings = load_settings(config, env={})
    own = store is None
    store = store if store is not None else ccr.open_store(folder / f"{session.stem}-{at}.db")
    try:
        return replay(
            session,
            settings=settings,
            store=store,
            at=at,  # type: ignore[arg-type]
            summarizer=make_summarizer(settings),
            on_compaction=on_compaction,
        )
    finally:
        if own:
            store.close()


def measure(paths: Sequence[Path], folder: Path, config: Path | None = None) -> dict[str, Any]:
    """Pooled counts over ``paths`` at their recorded compactions (with the settings file ``config``)."""
    import ccr

    counts: dict[str, Any] = {"reread": 0, "attached": 0, "with_tail": 0, "ours": [], "theirs": [], "ratios": []}
    shown = total = 0
    misses: list[str] = []
    for session in paths:
        records = _records(session)
        if not any(r.get("subtype") == "compact_boundary" for r in records):
            continue
        tag = config.stem if config is not None else "default"
        store = ccr.open_store(folder / f"{session.stem}-{session.parent.name}-{tag}.db")
        try:
            cuts = _Cuts(records, store)
            report = _replay(session, folder, at="recorded", on_compaction=cuts, store=store, config=config)
        finally:
            store.close()
        shown, total, misses = shown + cuts.shown, total + cuts.total, misses + cuts.misses
        totals = report.totals
        counts["reread"] += totals.reread_files
        counts["attached"] += totals.reread_restored
        counts["with_tail"] += totals.reread_restored + totals.reread_in_tail
        for compaction, theirs in zip(report.compactions, claude_code_next_requests(records), strict=False):
            if theirs:
                counts["ours"].append(compaction.post_tokens)
                counts["theirs"].append(theirs)
                counts["ratios"].append(compaction.post_tokens / theirs)
    counts.update(shown=shown, cut=total, misses=misses)
    return counts


def _share(kept: int, total: int) -> tuple[float, ...]:
    return (kept / total,) if total else ()


def _figures(c: dict[str, Any], names: Sequence[tuple[str, float, str]], prefix: str) -> list[Figure]:
    n = f"{c['reread']} re-read files, {len(c['ours'])} compactions"
    out = [
        Figure(prefix + names[0][0], _share(c["with_tail"], c["reread"]), 0.95, ">=", detail=n),
        Figure(prefix + names[1][0], _share(c["attached"], c["reread"]), 0.85, ">=", detail=n),
    ]
    miss = f"; not shown: {', '.join(c['misses'][:5])}" if c["misses"] else ""
    out.append(
        Figure(
            prefix + names[2][0], _share(c["shown"], c["cut"]), 0.90, ">=", detail=f"{c['shown']} of {c['cut']}{miss}"
        )
    )
    if c["ours"]:
        ratio = statistics.median(c["ours"]) / statistics.median(c["theirs"])
        detail = (
            f"{statistics.median(c['ours']):,.0f} against {statistics.median(c['theirs']):,.0f} tokens; "
            f"median of the per-compaction ratios {statistics.median(c['ratios']):.2f}, "
            f"ratio of the sums {sum(c['ours']) / sum(c['theirs']):.2f}"
        )
        out.append(Figure(prefix + names[3][0], (ratio,), 1.15, "<=", detail=detail))
    return out


def figures(quick: bool = False) -> list[Figure]:
    out: list[Figure] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        real = sessions()
        names = (
            ("re-read files in the context, counting the tail", 0.95, ">="),
            ("re-read files in the file attachments", 0.85, ">="),
            ("cut files showing the last live edit", 0.90, ">="),
            ("median context after compaction / Claude Code's next request", 1.15, "<="),
        )
        if not real:
            out += [missing(n, t, d, "../shared/transcripts is not present") for n, t, d in names]  # type: ignore[arg-type]
        else:
            for config, prefix in ((None, ""), (PRESET, "card preset: ")):
                if quick and config is not None:
                    continue
                out += _figures(measure(real, folder, config), names, prefix)
        readme = _replay(README_SESSION, folder, at="auto")
        with_files = sum(1 for c in readme.compactions if any(a.type == "file" for a in c.attachments))
        out.append(
            Figure(
                "README's first command: compactions restoring files",
                _share(with_files, len(readme.compactions)),
                1.0,
                ">=",
                detail=f"{with_files} of {len(readme.compactions)}",
            )
        )
    return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
