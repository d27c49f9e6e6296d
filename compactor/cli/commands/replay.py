"""``compactor replay SESSION.jsonl``: replay a recorded session and report its compactions.

Prints a table (or, with ``--json``, the ``ReplayReport`` of
``compactor.claude_code.replay``: ``{session, compactions, failures, totals,
...}``, a ``CompactionReport`` per compaction, plus ``metrics``). Dropped
spans go to the CCR store (``--store`` or ``$COMPACTOR_HOME/ccr.db``), so
every handle in the report resolves with ``ccr get``. When the store
refuses a compaction's spans, the compaction fails closed, the replay goes
on without it, and the exit code is 73 (``ccr_budget_exceeded``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ccr import Store, default_store_path, open_store
from ccr.cli_kit import write_stdout
from ccr.progress import progress
from compactor.claude_code.replay import ReplayReport, replay
from compactor.cli.commands._warnings import add_reading_options, printed_warnings
from compactor.core.config import load_settings
from compactor.core.errors import InputInvalid, InputNotFound
from compactor.engine.pipeline import CompactionResult
from compactor.summarizers import make_summarizer

__all__ = ["register", "render_table", "run"]

_BUDGET_EXIT = 73


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    parser = subparsers.add_parser(
        "replay",
        help="replay a recorded Claude Code session and report each compaction",
        description="Replay a Claude Code JSONL session through the compactor, compacting where "
        "the policy fires (--at auto) or where Claude Code did (--at recorded), and print a "
        "report of every compaction.",
    )
    parser.add_argument("session", metavar="SESSION.jsonl", help="the session's JSONL transcript")
    parser.add_argument(
        "--session",
        dest="session_id",
        metavar="ID",
        help="replay this session of a file that holds several (default: the last one)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--at",
        choices=("auto", "recorded"),
        default="auto",
        help="compact where the policy fires (auto, default) or where the recording did (recorded)",
    )
    parser.add_argument("--store", type=Path, help="CCR store file (default: $COMPACTOR_HOME/ccr.db)")
    parser.add_argument("--config", type=Path, help="settings file (TOML or JSON)")
    parser.add_argument(
        "--summarizer",
        choices=("extractive", "anthropic", "openai", "anthropic-compact", "openai-compact"),
        help="summarizer (default: extractive; the *-compact ones have the provider compact the head itself)",
    )
    parser.add_argument("--counter", choices=("tiktoken", "rough"), help="token counter (default: tiktoken)")
    parser.add_argument("--no-dedup", action="store_true", help="leave repeated tool results alone")
    parser.add_argument(
        "--masking",
        choices=("on", "off"),
        help="mask old tool results between compactions (default: the masking.enabled setting)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        help="also write the compacted session as Claude Code JSONL (boundary, summary, tail, attachments); "
        "never the input file (exit 2)",
    )
    parser.add_argument("--html", type=Path, metavar="FILE", help="also write the report as a self-contained HTML page")
    add_reading_options(parser)
    parser.add_argument(
        "--memory-db",
        type=Path,
        metavar="PATH",
        help="memory store to recall from after each compaction, attached as 'memory' (see: compactor memory --help)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Replay the session and print the report; returns the exit code."""
    overrides: dict[str, object] = {}
    if args.summarizer:
        overrides["summarizer"] = args.summarizer
    if args.counter:
        overrides["counter"] = args.counter
    if args.no_dedup:
        overrides["dedup.enabled"] = False
    if args.masking:
        overrides["masking.enabled"] = args.masking == "on"
    if args.memory_db is not None:
        _check_memory_db(args.memory_db)
        overrides["pipeline.memory_db"] = str(args.memory_db)
    settings = load_settings(args.config, overrides=overrides)
    _refuse_outputs(args)
    from compactor.claude_code.transcript import check_transcript

    check_transcript(args.session)  # a file that is none fails before a store is made for it
    store = open_store(args.store)
    try:
        with (
            printed_warnings(verbose=args.verbose or args.strict) as warn,
            progress(f"replaying {Path(args.session).name}", None, unit="entries") as bar,
        ):
            report = replay(
                args.session,
                settings=settings,
                store=store,
                at=args.at,
                summarizer=make_summarizer(settings),
                strict=args.strict,
                warn=warn,
                on_compaction=_print_failure,
                output=args.output,
                on_entry=bar.update,
                session=args.session_id,
            )
        metrics = _metrics(report, store, args) if args.json else None
    finally:
        store.close()
    if args.store is not None:  # so that every 'ccr get' line the report prints names it
        report.store = str(Path(args.store).resolve())
    if args.html is not None:
        _write_html(args.html, report, [args.session])
    if args.json:
        data = {**report.model_dump(mode="json", exclude={"at"}), "metrics": metrics}
        write_stdout(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    else:
        write_stdout(render_table(report) + "\n")
    # Where the files went, on stderr: never in the --json output.
    _say_where_the_store_is(report, args.store)
    if args.output is not None:
        _say(f"wrote the compacted session to {args.output}")
    if args.html is not None:
        _say(f"wrote the report page to {args.html}")
    if any(f.error_id == "ccr_budget_exceeded" for f in report.failures):
        return _BUDGET_EXIT
    return 1 if report.failures else 0


def _refuse_outputs(args: argparse.Namespace) -> None:
    """Check ``--output`` and ``--html`` by the output rule before any work (``ccr.files``).

    Raises:
        OutputRefused: an output is the transcript, a store or memory database,
            not a regular file, or both outputs name one file.
    """
    from compactor.claude_code.transcript import refuse_overwriting

    named = [p for p in (args.output, args.html) if p is not None]
    for output in named:
        refuse_overwriting(args.session, output, protected=[args.store, args.memory_db, args.config])
    if len(named) == 2 and Path(named[0]).resolve() == Path(named[1]).resolve():
        from ccr.errors import OutputRefused

        raise OutputRefused(f"{args.output}: --output and --html name the same file; choose two paths")


def _check_memory_db(path: Path) -> None:
    """Refuse a ``--memory-db`` that cannot be recalled from, before the replay starts.

    The user named it, so a typo must not pass as "no memories": a missing
    file is ``input_not_found`` (66), a folder or a file that is not a memory
    database ``input_invalid`` (65). (A store configured in the settings that
    fails at compaction time is a skipped ``memory`` entry instead.) The file
    is opened read-only: nothing is created or changed.

    Raises:
        InputNotFound: nothing is there.
        InputInvalid: a folder, or not a memory database.
        compactor.memory.errors.StoreError: it cannot be read (exit 73).
    """
    from compactor.memory.errors import NotAStore, UnsafeStorePath
    from compactor.memory.store import open_memory

    target = path.expanduser()
    if not os.path.lexists(target):
        raise InputNotFound(f"memory database {path} does not exist")
    if target.is_dir():
        raise InputInvalid(f"memory database {path} is a folder, not a file")
    try:
        open_memory(target, readonly=True).close()
    except (NotAStore, UnsafeStorePath) as exc:
        raise InputInvalid(f"{path} cannot be used as the memory database: {exc}") from exc


def _write_html(path: Path, report: ReplayReport, inputs: list[str]) -> None:
    from compactor.view.html_report import write_report_html

    write_report_html(
        path,
        inputs=inputs,
        session=report.session,
        compactions=report.compactions,
        failures=report.failures,
        timeline=report.timeline,
        threshold=report.totals.threshold,
        totals=report.totals.model_dump(mode="json"),
        masking=report.masking,
        store=report.store,
    )


def _metrics(report: ReplayReport, store: Store, args: argparse.Namespace) -> dict[str, object]:
    """The figures ``compactor tune`` judges trials by, with the same definitions (``compactor.tune.metrics``).

    At recorded points they include the context against Claude Code's next request, read from the
    transcript as ``compactor tune`` reads it."""
    from compactor.claude_code.transcript import read_sessions, read_transcript
    from compactor.tune.metrics import next_requests, replay_metrics

    recorded = None
    if args.at == "recorded" and report.compactions:
        if args.session_id is None:
            transcript = read_transcript(args.session, subagents=False, state=False)
        else:
            transcript = next(t for t in read_sessions(args.session) if t.session_id == args.session_id)
        recorded = next_requests(transcript)
    return replay_metrics(report, store, recorded_next=recorded).as_json()


def _say(text: str) -> None:
    print(f"compactor: {text}", file=sys.stderr)


def _say_where_the_store_is(report: ReplayReport, store: Path | None) -> None:
    """One line on stderr naming the store the replay's dropped spans went to (nothing when none was stored)."""
    from compactor.view.html_report import get_command

    t = report.totals
    if not (t.dropped_spans or t.masked_results):
        return
    path = Path(store).resolve() if store is not None else default_store_path()
    _say(f"the dropped spans are stored in {path} (get one back: {get_command(report.store)} HANDLE)")


def _print_failure(result: CompactionResult, line: int) -> None:
    if not result.ok:
        report = result.report
        print(
            f"compactor: {report.error_id}: compaction at line {line} failed closed, "
            f"messages kept unchanged: {report.error}",
            file=sys.stderr,
        )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def render_table(report: ReplayReport) -> str:
    """A readable table of the report: one row per compaction, then totals."""
    header = ("line", "trigger", "pre", "post", "summary", "head", "dropped", "attach", "skipped", "reread", "+tail")
    rows = [header]
    for c in report.compactions:
        rows.append(
            (
                str(c.at_line or ""),
                c.trigger,
                f"{c.pre_tokens:,}",
                f"{c.post_tokens:,}",
                f"{c.summary_tokens:,}",
                f"{c.head_tokens:,}",
                f"{len(c.dropped)} / {sum(d.bytes for d in c.dropped if d.piece_of is None):,} B",
                str(len(c.attachments)),
                str(len(c.skipped)),
                _percent(c.reread_coverage),
                _percent(c.reread_coverage_with_tail),
            )
        )
    t = report.totals
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"session: {report.session}", ""]
    if report.compactions:
        lines += ["  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in rows]
    elif report.at == "recorded" and not report.failures:
        lines.append("no compaction: the recording holds no compact_boundary")
    elif not report.failures:
        lines.append(
            f"no compaction: the context peaked at {t.peak_tokens:,} tokens, below the {t.threshold:,}-token threshold"
        )
    lines += [
        "",
        f"compactions: {t.compactions}   failed: {t.failures}   messages: {t.messages}   tool calls: {t.tool_calls}",
        f"dropped: {t.dropped_spans} spans, {t.dropped_bytes:,} bytes (all in CCR)   "
        f"dedup: {t.dedup_hits} hits, {t.dedup_saved_bytes:,} bytes saved",
        f"context at the end: {t.final_tokens:,} tokens   re-read coverage: {_percent(t.reread_coverage)} "
        f"(with the preserved tail: {_percent(t.reread_coverage_with_tail)})",
        f"tokens are {t.counter} tokens; savings are inferred",
    ]
    if report.masking:
        policies = ", ".join(sorted({s.policy for s in report.masking if s.ok}))
        lines.insert(
            -1,
            f"masking: {t.masking_steps} steps ({policies or '-'}), {t.masked_results} results, "
            f"{t.masking_tokens_saved:,} tokens saved (all in CCR)",
        )
    if t.requests:
        per_100 = 100 * t.cache_invalidated_tokens / t.requests
        lines.insert(
            -1,
            f"prompt cache: {t.cache_invalidated_tokens:,} cached tokens invalidated "
            f"({per_100:,.0f} per 100 requests), {t.cache_kept_tokens:,} kept",
        )
    for f in report.failures:
        lines.append(f"failed at line {f.at_line}: {f.error_id}: {f.error}")
    if t.stopped:
        lines.append(f"stopped at line {t.stopped_at_line}: {t.stopped}")
    return "\n".join(lines)
