"""``compactor show REPORT.json``: what a compaction did, for a person to read.

REPORT.json is what ``compactor replay --json`` printed (one replay, many
compactions) or a single compaction report. By default each compaction is
listed with its sizes, attachments, skipped candidates and every dropped span
with the ``ccr get`` line that brings it back; ``--summary`` prints the
summary, ``--context`` the whole compacted context, ``--json`` the report
as JSON, and ``--html FILE`` writes the self-contained page that
``replay --html`` writes.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ccr.cli_kit import write_stdout
from compactor.claude_code.transcript import refuse_overwriting
from compactor.core.errors import InputError, InputInvalid, InputNotFound, UsageError
from compactor.engine.report import CompactionReport, MaskingReport
from compactor.view.html_report import get_command, write_report_html

__all__ = ["ShownReport", "load_report", "register", "render_overview", "run"]


class ShownReport(BaseModel):
    """The parts of a replay report that ``show`` reads (extra fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    session: str = ""
    compactions: list[CompactionReport] = Field(default_factory=list)
    failures: list[CompactionReport] = Field(default_factory=list)
    timeline: list[tuple[int, int]] = Field(default_factory=list)
    masking: list[MaskingReport] = Field(default_factory=list)
    store: str | None = None
    totals: dict[str, Any] = Field(default_factory=dict)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``show`` subcommand."""
    parser = subparsers.add_parser(
        "show",
        help="show what a compaction did: summary, context, dropped spans (or an HTML page)",
        description="Read a report printed by 'compactor replay --json' (or one compaction's report) "
        "and show each compaction: sizes, attachments, skipped candidates and every dropped span "
        "with the 'ccr get' line that brings it back.",
    )
    parser.add_argument("report", metavar="REPORT.json", help="a report from 'compactor replay --json'")
    parser.add_argument("-n", "--compaction", type=int, metavar="N", help="only compaction N (1 is the first)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--summary", action="store_true", help="print the summary the compaction wrote")
    what.add_argument("--context", action="store_true", help="print the compacted context, message by message")
    what.add_argument("--html", type=Path, metavar="FILE", help="write a self-contained HTML page of the report")
    what.add_argument("--json", action="store_true", help="print the report (or compaction N's) as JSON")
    parser.set_defaults(func=run)


REPORT_MAX_BYTES = 1 << 30
"""Largest report file read (1 GiB); a larger one is refused (exit 65)."""


def load_report(path: Path) -> ShownReport:
    """Read a replay report, or a single compaction report, from ``path``.

    Raises:
        InputNotFound: no such file.
        InputError: the file cannot be read (a folder, a device, too large).
        InputInvalid: not JSON, or not a report.
    """
    from ccr.files import read_regular

    try:
        raw = read_regular(path, max_bytes=REPORT_MAX_BYTES)  # a FIFO or a device is refused, never read
    except (FileNotFoundError, NotADirectoryError) as exc:
        raise InputNotFound(f"{path}: no such report") from exc
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise InputNotFound(f"{str(path)[:60]}...: no such report: the name is too long for a file") from exc
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputInvalid(f"{path}: not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputInvalid(f"{path}: not a report (a JSON object is expected)")
    if "compactions" not in data and "trigger" not in data:
        raise InputInvalid(f"{path}: not a compactor report (no compactions; write one with 'compactor replay --json')")
    try:
        if "trigger" in data and "compactions" not in data:
            one = CompactionReport.model_validate(data)
            return ShownReport(compactions=[one] if one.ok else [], failures=[] if one.ok else [one])
        return ShownReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InputInvalid(f"{path}: not a compactor report: {where}: {first['msg']}") from exc


def run(args: argparse.Namespace) -> int:
    """Show the report; returns the exit code."""
    if args.html is not None:
        refuse_overwriting(args.report, args.html, what="report")
    report = load_report(Path(args.report))
    numbered = list(enumerate(report.compactions, start=1))
    if args.compaction is not None:
        if not 1 <= args.compaction <= len(report.compactions):
            raise UsageError(f"--compaction {args.compaction}: the report has {len(report.compactions)} compaction(s)")
        numbered = [numbered[args.compaction - 1]]
    chosen = [c for _, c in numbered]
    if args.html is not None:
        write_report_html(
            args.html,
            inputs=[args.report],
            session=report.session,
            compactions=chosen,
            failures=report.failures if args.compaction is None else [],
            timeline=report.timeline if args.compaction is None else [],
            threshold=chosen[0].threshold if chosen else int(report.totals.get("threshold") or 0),
            totals=report.totals,
            masking=report.masking if args.compaction is None else [],
            store=report.store,
        )
        print(f"compactor: wrote the report page to {args.html}", file=sys.stderr)
        return 0
    if args.json:
        shown = report.model_copy(update={"compactions": chosen}) if args.compaction is not None else report
        exclude = {"failures", "timeline", "masking"} if args.compaction is not None else set()
        write_stdout(json.dumps(shown.model_dump(mode="json", exclude=exclude), indent=2, ensure_ascii=False) + "\n")
    elif (args.summary or args.context) and not chosen:
        write_stdout(_NO_COMPACTION + "\n")
    elif args.summary:
        write_stdout("\n\n".join(_titled(n, c, c.summary or "(no summary in this report)") for n, c in numbered) + "\n")
    elif args.context:
        write_stdout("\n\n".join(_titled(n, c, _context_text(c)) for n, c in numbered) + "\n")
    else:
        write_stdout(render_overview(report, numbered) + "\n")
    return 0


def _titled(n: int, c: CompactionReport, body: str) -> str:
    where = f" at line {c.at_line}" if c.at_line else ""
    return f"=== compaction {n}{where} ({c.trigger}) ===\n{body}"


def _context_text(c: CompactionReport) -> str:
    if not c.context:
        return "(no context in this report)"
    return "\n\n".join(f"--- {e.part}: {e.role}, {e.tokens:,} tokens ---\n{e.text}" for e in c.context)


_NO_COMPACTION = "no compaction in this report"


def render_overview(report: ShownReport, numbered: list[tuple[int, CompactionReport]]) -> str:
    """Each compaction given with its number (1 is the report's first): sizes, attachments,
    skipped candidates, dropped spans with ``ccr get`` lines."""
    lines = [f"session: {report.session}"] if report.session else []
    if not numbered:
        lines.append(_NO_COMPACTION)
    for n, c in numbered:
        where = f" at line {c.at_line}" if c.at_line else ""
        lines += [
            "",
            f"compaction {n}{where} ({c.trigger}): {c.pre_tokens:,} -> {c.post_tokens:,} tokens "
            f"(threshold {c.threshold:,}); summary {c.summary_tokens:,}, head {c.head_tokens:,} {c.counter} tokens",
            "  attachments:",
        ]
        # A candidate restored under another kind (the plan file, read as a file too) is said on
        # its attachment's row, not listed again as skipped.
        attached = {a.path for a in c.attachments if a.path}
        also = {s.path: s for s in c.skipped if s.path in attached}
        skipped = [s for s in c.skipped if s.path not in attached]
        labels = [(a.type, a.path or a.name or "") for a in c.attachments]
        labels += [(s.type, s.path or s.name or "") for s in skipped]
        kinds = max((len(kind) for kind, _ in labels), default=0)
        names = max((len(name) for _, name in labels), default=0)
        lines += [
            f"    {a.type:<{kinds}}  {a.path or a.name or '':<{names}}  {a.tokens:>7,} tokens"
            + (f"  cut, rest: {a.handle}" if a.truncated and a.handle else "")
            + (f"  (also read as a {also[a.path].type}: restored once, here)" if a.path in also else "")
            for a in c.attachments
        ] or ["    (none)"]
        lines.append("  skipped:")
        lines += [f"    {s.type:<{kinds}}  {s.path or s.name or '':<{names}}  {s.reason}" for s in skipped] or [
            "    (none)"
        ]
        lines.append("  dropped (bring back with the command shown):")
        for d in c.dropped:
            piece = "  (part of the head)" if d.piece_of else ""
            how = f"{get_command(report.store)} {d.handle}" if d.handle else "not recoverable: not in the transcript"
            lines.append(f"    {d.kind:<12} {d.tokens:>8,} tokens {d.bytes:>10,} bytes  {how}{piece}")
    for f in report.failures:
        lines.append(f"failed at line {f.at_line}: {f.error_id}: {f.error} (messages kept unchanged)")
    done = [m for m in report.masking if m.ok]
    if done:
        lines += [
            "",
            f"masking: {len(done)} steps, {sum(m.results for m in done)} results, "
            f"{sum(m.tokens_saved for m in done):,} tokens saved (originals: {get_command(report.store)} HANDLE)",
        ]
        lines += [f"  line {m.at_line}: {m.results} results, {m.tokens_saved:,} tokens ({m.policy})" for m in done]
    return "\n".join(lines)
