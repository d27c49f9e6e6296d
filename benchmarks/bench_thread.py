"""The thread across compactions: what the compacted context keeps of the whole session.

Quality figures, not timings: each is a share measured once (the replay is
deterministic), on the shared real transcripts (missing when absent).

- Forced to compact again and again (``[policy] autocompact_pct = 25``), the
  last compaction of each session: of the session's paths, command first
  lines and typed user messages so far, the share the whole compacted context
  holds verbatim (the report's ``retention``), and the summary's length
  against 20,000 characters.
- At every forced compaction of every session, pooled: the same shares, and
  whether the summary names the latest typed request and the open items.
- At Claude Code's own compaction points (``--at recorded``): the median size
  of the context right after compaction (``post_tokens``) against the median
  of what Claude Code's next request carried there.

Run ``python benchmarks/bench_thread.py`` (or ``run.py --only thread``).
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from _common import Figure, claude_code_next_requests, main, missing, shared_sessions

FORCED_PCT = 25
SUMMARY_CHARS = 20_000


def _replay(session: Path, folder: Path, *, at: str, pct: float | None) -> Any:
    import ccr
    from compactor.claude_code.replay import replay
    from compactor.core.config import load_settings
    from compactor.summarizers import make_summarizer

    overrides: dict[str, object] = {} if pct is None else {"policy.autocompact_pct": pct}
    settings = load_settings(None, env={}, overrides=overrides)
    store = ccr.open_store(folder / f"{session.stem}-{at}-{pct}.db")
    try:
        return replay(session, settings=settings, store=store, at=at, summarizer=make_summarizer(settings))  # type: ignore[arg-type]
    finally:
        store.close()


def _share(kept: int, total: int) -> tuple[float, ...]:
    return (kept / total,) if total else ()


def figures(quick: bool = False) -> list[Figure]:
    sessions = shared_sessions()
    if not sessions:
        reason = "../shared/transcripts is not present"
        return [
            missing(f"forced compactions: last context keeps {k}", t, ">=", reason)
            for k, t in (("paths", 0.95), ("commands", 0.85), ("user messages", 1.0))
        ]
    out: list[Figure] = []
    pooled = {"paths": [0, 0], "commands": [0, 0], "user_messages": [0, 0], "request": [0, 0], "open": [0, 0]}
    ours: list[int] = []
    theirs: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for session in sessions:
            name = session.parent.name if session.name == "session.jsonl" else session.stem
            report = _replay(session, folder, at="auto", pct=FORCED_PCT)
            done = [c for c in report.compactions if c.retention is not None]
            for c in done:
                for kind in ("paths", "commands", "user_messages"):
                    part = getattr(c.retention, kind)
                    pooled[kind][0] += part.kept
                    pooled[kind][1] += part.total
                if c.continuation is not None:
                    if c.continuation.latest_request is not None:
                        pooled["request"][0] += int(c.continuation.latest_request)
                        pooled["request"][1] += 1
                    pooled["open"][0] += c.continuation.open_items.kept
                    pooled["open"][1] += c.continuation.open_items.total
            if len(done) < 2:
                continue
            last = done[-1]
            assert last.retention is not None
            tag = f"{name}, last of {len(done)} forced compactions"
            for kind, label, target in (
                ("paths", "paths", 0.95),
                ("commands", "commands", 0.85),
                ("user_messages", "user messages", 1.0),
            ):
                part = getattr(last.retention, kind)
                if part.total:
                    out.append(
                        Figure(
                            f"{tag}: {label} kept",
                            _share(part.kept, part.total),
                            target,
                            ">=",
                            detail=f"{part.kept} of {part.total}",
                        )
                    )
            chars = len(last.summary or "")
            out.append(
                Figure(
                    f"{tag}: summary chars / {SUMMARY_CHARS:,}",
                    (chars / SUMMARY_CHARS,),
                    1.0,
                    "<=",
                    detail=f"{chars:,} characters",
                )
            )
            if not quick:
                recorded = _replay(session, folder, at="recorded", pct=None)
                records = [
                    json.loads(line) for line in session.read_text(encoding="utf-8").splitlines() if line.strip()
                ]
                cc = claude_code_next_requests(records)
                for c, theirs_n in zip(recorded.compactions, cc, strict=False):
                    if c.ok and theirs_n:
                        ours.append(c.post_tokens)
                        theirs.append(theirs_n)
    for kind, label, target in (
        ("paths", "paths", 0.98),
        ("commands", "commands", 0.90),
        ("user_messages", "user messages", 1.0),
        ("request", "latest request named", 0.95),
        ("open", "open items named", 0.90),
    ):
        kept, total = pooled[kind]
        if total:
            out.append(
                Figure(
                    f"every forced compaction: {label}", _share(kept, total), target, ">=", detail=f"{kept} of {total}"
                )
            )
    if ours:
        ratio = statistics.median(ours) / statistics.median(theirs)
        out.append(
            Figure(
                "recorded points: median context after compaction / Claude Code's",
                (ratio,),
                1.0,
                "<=",
                detail=f"{statistics.median(ours):,.0f} against {statistics.median(theirs):,.0f} tokens, "
                f"{len(ours)} compactions",
            )
        )
    elif not quick:
        out.append(
            missing(
                "recorded points: median context after compaction / Claude Code's",
                1.0,
                "<=",
                "no recorded compaction to compare",
            )
        )
    return out


if __name__ == "__main__":
    raise SystemExit(main(figures))
