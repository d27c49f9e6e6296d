"""The status line's text: ``compactor.claude_code.live_state.Figures`` as one line, plain or coloured,
within a width. Pure, standard library only (the status line runs after every answer)."""

from __future__ import annotations

from compactor.claude_code.compaction_gauge import Figures

__all__ = ["BAR_CELLS", "format_tokens", "status_line"]

BAR_CELLS = 10
_RESET = "\033[0m"
_DIM = "\033[2m"
_GREEN = "\033[32m"
_YELLOW = "\033[33m"
_RED = "\033[31m"
_SEPARATOR = " · "


def format_tokens(tokens: int) -> str:
    """``tokens`` for a narrow line: 950, 12.3k, 167k, 1.2M."""
    if tokens < 1_000:
        return str(tokens)
    if tokens < 100_000:
        return f"{tokens / 1_000:.1f}k"
    if tokens < 1_000_000:
        return f"{tokens // 1_000}k"
    return f"{tokens / 1_000_000:.1f}M"


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {one if count == 1 else (many or one + 's')}"


def _colour(figures: Figures) -> str:
    if figures.used >= 0.9:
        return _RED
    if figures.tokens >= figures.limits.warning:
        return _YELLOW
    return _GREEN


def _bar(share: float) -> str:
    filled = max(0, min(BAR_CELLS, round(share * BAR_CELLS)))
    return "█" * filled + "░" * (BAR_CELLS - filled)


def _segments(figures: Figures) -> list[tuple[str, bool]]:
    """The line's parts, most important first, each with whether it is the gauge (coloured)."""
    percent = int(figures.used * 100)
    what = "auto-compact" if figures.limits.auto_enabled else "window (auto-compact off)"
    gauge = f"{format_tokens(figures.tokens)}/{format_tokens(figures.threshold)} {percent}% of {what}"
    parts: list[tuple[str, bool]] = [(gauge, True)]
    if figures.limits.auto_enabled:
        if figures.tokens_left == 0:
            parts.append(("compacts before the next turn", False))
        elif figures.answers_left is not None:
            parts.append(
                (f"~{_plural(figures.answers_left, 'turn')} ({format_tokens(figures.tokens_left)}) to go", False)
            )
        else:
            parts.append((f"{format_tokens(figures.tokens_left)} to go", False))
    parts.append(
        (
            f"keeps {_plural(figures.paths, 'path')}, {_plural(figures.commands, 'command')}, "
            f"{_plural(figures.messages, 'message')}",
            False,
        )
    )
    parts.append((f"restores {_plural(len(figures.files), 'file')}", False))
    parts.append((f"{figures.stored} stored", False))
    if figures.compactions:
        parts.append((_plural(figures.compactions, "compaction"), False))
    return parts


def status_line(figures: Figures, *, width: int = 120, colour: bool = True) -> str:
    """One line for ``figures``: the gauge always, then as many parts as ``width`` columns hold."""
    parts = _segments(figures)
    gauge = parts[0][0]
    bar = _bar(figures.used)
    head = f"{bar} {gauge}"
    if len(head) > width:
        head = gauge if len(gauge) <= width else f"{int(figures.used * 100)}%"
    shown = [head]
    length = len(head)
    for text, _ in parts[1:]:
        if length + len(_SEPARATOR) + len(text) > width:
            break
        shown.append(text)
        length += len(_SEPARATOR) + len(text)
    if not colour:
        return _SEPARATOR.join(shown)
    painted = f"{_colour(figures)}{shown[0]}{_RESET}"
    rest = "".join(f"{_DIM}{_SEPARATOR}{_RESET}{text}" for text in shown[1:])
    return painted + rest
