"""The replay report as a self-contained HTML page (``replay --html``, ``show --html``).

One file, no network: inline CSS, the context-size chart as inline SVG, and
for each compaction the summary, the preserved tail, every attachment and
skipped candidate, and every dropped span with a ``ccr get`` line to copy.
The page is rendered from ``compactor/templates/report.html.j2`` with every value
HTML-escaped.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

from compactor.core.errors import OutputWriteError
from compactor.core.templating import render_html
from compactor.engine.report import CompactionReport, MaskingReport
from compactor.view.chart import LineChart, line_chart

__all__ = ["context_chart", "get_command", "render_report_html", "write_report_html"]


def context_chart(
    timeline: Sequence[tuple[int, int]],
    compactions: Sequence[CompactionReport],
    threshold: int,
    masking: Sequence[MaskingReport] = (),
) -> LineChart:
    """The context size over the session (by transcript line), the threshold, each compaction and masking step.

    Without a timeline (a report made elsewhere) the line joins each
    compaction's size before and after.
    """
    points: list[tuple[float, float]] = [(float(line), float(tokens)) for line, tokens in timeline]
    if not points:
        for report in compactions:
            line = float(report.at_line or 0)
            points += [(line, float(report.pre_tokens)), (line, float(report.post_tokens))]
    marks = [(float(c.at_line or 0), f"#{n} {c.trigger}") for n, c in enumerate(compactions, start=1)] + [
        (float(m.at_line or 0), "masked") for m in masking if m.ok and m.at_line
    ]
    horizontal = [(float(threshold), f"threshold {threshold:,}")] if threshold else []
    return line_chart(points, vertical=marks, horizontal=horizontal)


def get_command(store: str | None) -> str:
    """The ``ccr get`` command line (without the handle) that reads ``store`` (None: the default store)."""
    return "ccr get" if store is None else f"ccr get --store {shlex.quote(store)}"


def render_report_html(
    *,
    session: str,
    compactions: Sequence[CompactionReport],
    failures: Sequence[CompactionReport] = (),
    timeline: Sequence[tuple[int, int]] = (),
    threshold: int = 0,
    totals: dict[str, object] | None = None,
    masking: Sequence[MaskingReport] = (),
    store: str | None = None,
) -> str:
    """The whole page for one replayed session (or one compaction: pass it alone).

    ``store`` is the store the handles are in when it is not the default one.
    """
    return render_html(
        "report.html.j2",
        get=get_command(store),
        session=session,
        compactions=list(compactions),
        failures=list(failures),
        masking=list(masking),
        chart=context_chart(timeline, compactions, threshold, masking),
        threshold=threshold,
        totals=totals or {},
    )


def write_report_html(path: Path, *, inputs: Sequence[str | Path] = (), **report: object) -> None:
    """Render the page (``render_report_html``'s arguments) and write it to ``path``.

    The write follows the project's output rule (``ccr.files``): never over
    a database, one of ``inputs`` or a device; whole or not at all; 0600.

    Raises:
        OutputRefused: ``path`` is a database, an input or not a regular file (a ``UsageError``, exit 2).
        OutputWriteError: ``path`` cannot be written.
    """
    from ccr.files import describe_os_error, write_output

    page = render_report_html(**report)  # type: ignore[arg-type]
    try:
        write_output(path, [page.encode("utf-8")], inputs=inputs, what="HTML report")
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot write the HTML report: {describe_os_error(exc)}") from exc
