"""Masking between compactions, on against off, on the long fixture and the shared real sessions.

Each session is replayed twice with the same settings but ``masking.enabled``
(``compactor replay --masking on|off``), and the table shows, per session:
full compactions (on / off), masking steps and the policies that ran,
masked results, and cached-prefix tokens invalidated per 100 requests (on /
off). The figures judged are ratios of the two runs:

- compactions with masking on / off, summed over the sessions that compact
  with masking off (target at most 0.5);
- cached-prefix tokens invalidated per 100 requests, on / off, per session
  that compacts (target at most 1.0);
- the share of masked results whose stored bytes equal the recorded result
  (target 1.0);
- the share of the masked part's paths, command first lines and user
  messages still in context verbatim, with masking at every chance (an
  Orchestrator that masks eagerly and never compacts; target 1.0).

The replays are deterministic, so each ratio is measured once. One figure
pair is timed: feeding the long fixture to an Orchestrator with masking on
against one with masking off (never compacting), interleaved, with the
default settings and with masking at every chance (a step at almost every
tool result, the worst case); target at most 2.0 for both. Part of the cost
is not masking's own: a repeat of a masked result comes in whole (the model
needs it) instead of as a dedup reference, so it is counted and followed.
``--set masking.keep_rounds=2`` (repeatable) tries other settings.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from _common import REPO, SHARED_TRANSCRIPTS, Figure, interleaved, main, shared_sessions

from attachments import RecordedFiles
from ccr import open_store
from compactor.claude_code.replay import ReplayReport, replay
from compactor.claude_code.transcript import read_transcript
from compactor.core.config import load_settings
from compactor.core.messages import Message
from compactor.engine.dedup import without_result_id
from compactor.engine.orchestrator import Orchestrator
from compactor.engine.survival import head_facts
from compactor.summarizers.prompts import typed

LONG_FIXTURE = REPO / "fixtures" / "sessions" / "long.jsonl"


def _replay(session: Path, folder: Path, masking: bool, overrides: dict[str, Any]) -> tuple[ReplayReport, float]:
    """The replay's report and the share of its masked results stored byte-exact."""
    settings = load_settings(env={}, overrides={**overrides, "masking.enabled": masking})
    store = open_store(folder / f"{session.stem}-{masking}.db")
    try:
        report = replay(session, settings=settings, store=store, warn=lambda _w: None)
        return report, _exact_share(session, report, store)
    finally:
        store.close()


def _exact_share(session: Path, report: ReplayReport, store: Any) -> float:
    recorded = {
        block.tool_use_id: block
        for entry in read_transcript(session, subagents=False, state=False).entries
        if entry.message is not None
        for block in entry.message.tool_results()
    }
    handles = [h for step in report.masking for h in step.handles]
    if not handles:
        return 1.0
    exact = 0
    for handle in handles:
        data = store.get(handle).decode("utf-8", "surrogatepass")
        block = recorded.get((store.record(handle).metadata or {}).get("tool_use_id", ""))
        text = block.text() if block is not None else None
        if text is not None and (data == text or (data != without_result_id(data) == text)):
            exact += 1
    return exact / len(handles)


def _facts_kept(session: Path, folder: Path) -> tuple[int, int]:
    """(kept, total) paths, command first lines and user messages of the masked part, masking eagerly."""
    settings = load_settings(
        env={},
        overrides={
            "masking": {"enabled": True, "cache_policy": "eager", "soft_share": 0.001, "batch_share": 0.001},
            "policy.compact": False,
        },
    )
    store = open_store(folder / f"{session.stem}-facts.db")
    try:
        orch = Orchestrator(settings=settings, store=store, files=RecordedFiles())
        fed: list[Message] = [
            orch.add_message(e.message)
            for e in read_transcript(session, subagents=False, state=False).entries
            if e.message is not None and not e.message.is_compact_summary
        ]
        masked = orch.messages
    finally:
        store.close()
    changed = [n for n, (a, b) in enumerate(zip(fed, masked, strict=True)) if a != b]
    if not changed:
        return 0, 0
    before, after = fed[: changed[-1] + 1], masked[: changed[-1] + 1]
    facts = head_facts(before)
    flat = json.dumps([m.to_api() for m in after], ensure_ascii=False)
    kept = sum(json.dumps(v, ensure_ascii=False)[1:-1] in flat for k in ("paths", "commands") for v in facts[k])
    prompts = [n for n, m in enumerate(before) if typed(m) is not None]
    kept_prompts = {typed(before[n]).text for n in prompts if after[n] == before[n]}  # type: ignore[union-attr]
    kept += sum(v in kept_prompts for v in facts["user_messages"])
    return kept, sum(len(v) for v in facts.values())


def _feeding_ratios(runs: int, *, eager: bool) -> list[float]:
    """Time to feed the long fixture with masking / without (compaction off in both)."""
    messages = [
        e.message
        for e in read_transcript(LONG_FIXTURE, subagents=False, state=False).entries
        if e.message is not None and not e.message.is_compact_summary
    ]

    def feed(masking: bool) -> None:
        chances = {"cache_policy": "eager", "soft_share": 0.001, "batch_share": 0.001} if eager else {}
        settings = load_settings(
            env={},
            overrides={
                "masking": {"enabled": masking, **chances},
                "policy.compact": False,
            },
        )
        orch = Orchestrator(settings=settings, store=open_store(":memory:"), files=RecordedFiles())
        for message in messages:
            orch.add_message(message)
        assert not masking or orch.masking_steps

    return interleaved(lambda: feed(True), lambda: feed(False), runs=runs)


def _name(session: Path) -> str:
    try:
        return str(session.relative_to(SHARED_TRANSCRIPTS).with_suffix(""))
    except ValueError:
        return session.stem


def compare(sessions: list[Path], overrides: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per session: the on and off replays' figures."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for session in sessions:
            off, _ = _replay(session, Path(tmp), False, overrides)
            on, exact = _replay(session, Path(tmp), True, overrides)
            rows.append(
                {
                    "session": _name(session),
                    "facts": _facts_kept(session, Path(tmp)),
                    "on": on.totals,
                    "off": off.totals,
                    "policies": sorted({s.policy for s in on.masking if s.ok}),
                    "exact": exact,
                }
            )
    return rows


def _per_100(totals: Any) -> float:
    return 100 * totals.cache_invalidated_tokens / totals.requests if totals.requests else 0.0


def table(rows: list[dict[str, Any]]) -> str:
    header = (
        "session",
        "compactions on/off",
        "masking steps",
        "policies",
        "masked",
        "saved tokens",
        "invalidated/100 req on",
        "off",
        "byte-exact",
        "facts kept",
    )
    lines = [header]
    for row in rows:
        on, off = row["on"], row["off"]
        lines.append(
            (
                row["session"],
                f"{on.compactions} / {off.compactions}",
                str(on.masking_steps),
                ",".join(row["policies"]) or "-",
                str(on.masked_results),
                f"{on.masking_tokens_saved:,}",
                f"{_per_100(on):,.0f}",
                f"{_per_100(off):,.0f}",
                f"{row['exact']:.0%}",
                f"{row['facts'][0]} of {row['facts'][1]}" if row["facts"][1] else "-",
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths, strict=True)) for line in lines)


def _sessions() -> list[Path]:
    return [LONG_FIXTURE, *shared_sessions()]


def figures(quick: bool = False, overrides: dict[str, Any] | None = None) -> list[Figure]:
    rows = compare(_sessions(), overrides or {})
    print(table(rows))
    compacting = [r for r in rows if r["off"].compactions]
    on = sum(r["on"].compactions for r in compacting)
    off = sum(r["off"].compactions for r in compacting)
    out = [
        Figure(
            "compactions, masking on / off",
            [on / off] if off else [],
            0.5,
            "<=",
            detail=f"{on} vs {off} over {len(compacting)} sessions",
            missing=None if off else "no session compacts with masking off",
        )
    ]
    for r in compacting:
        before = _per_100(r["off"])
        out.append(
            Figure(
                f"cache invalidated per 100 requests, on / off: {r['session']}",
                [_per_100(r["on"]) / before] if before else [0.0],
                1.0,
                "<=",
            )
        )
    out.append(Figure("masked results stored byte-exact", [min(r["exact"] for r in rows)], 1.0, ">="))
    runs = 3 if quick else 7
    out.append(Figure("feeding the long fixture, masking / off", _feeding_ratios(runs, eager=False), 2.0, "<="))
    out.append(Figure("the same, masking at every chance / off", _feeding_ratios(runs, eager=True), 2.0, "<="))
    kept, total = sum(r["facts"][0] for r in rows), sum(r["facts"][1] for r in rows)
    out.append(
        Figure(
            "facts of the masked part still in context",
            [kept / total] if total else [],
            1.0,
            ">=",
            detail=f"{kept} of {total}",
            missing=None if total else "nothing was masked",
        )
    )
    return out


def _parse(argv: list[str]) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a setting for both runs")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = value
    return overrides


if __name__ == "__main__":
    chosen = _parse(sys.argv[1:])
    raise SystemExit(main(lambda quick=False: figures(quick, chosen)))
