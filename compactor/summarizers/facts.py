"""What the facts of a session are: the paths its tool calls touched and its shell commands.

``touched_path``, ``command_first_line`` and ``relative_path`` define the
facts; the session ledger (``compactor.summarizers.ledger``) records them
and ``compactor.engine.survival`` measures with the same definitions.
"""

from __future__ import annotations

import difflib
import re
import shlex

from compactor.core.messages import ToolUseBlock

__all__ = [
    "DEFAULT_COMMAND_LINE_CHARS",
    "EDIT_ACTIONS",
    "changes_state",
    "check_program",
    "OUTPUT_PLUMBING",
    "inspects",
    "plain_check",
    "command_first_line",
    "commits_work",
    "defined_names",
    "edit_lines",
    "edit_text",
    "relative_path",
    "shows_content",
    "removed_paths",
    "wraps_up",
    "wrap_up_steps",
    "touched_path",
]

_PATH_KEYS = ("file_path", "notebook_path")
EDIT_ACTIONS = {"Edit": "edited", "MultiEdit": "edited", "NotebookEdit": "edited", "Write": "written"}
"""The tools that change a file, and what each did to it."""
_SHELL_TOOLS = frozenset({"Bash"})

DEFAULT_COMMAND_LINE_CHARS = 240
"""A command whose first line is longer is shown cut; the ledger's listing keeps it whole."""


def touched_path(use: ToolUseBlock) -> str | None:
    """The file a tool call read, wrote or edited (its ``file_path``/``notebook_path``), if any."""
    for key in _PATH_KEYS:
        value = use.input.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def command_first_line(use: ToolUseBlock) -> str | None:
    """The first non-blank line of a shell tool call's command, stripped; None for other calls."""
    if use.name not in _SHELL_TOOLS:
        return None
    command = use.input.get("command")
    if not isinstance(command, str):
        return None
    return next((line.strip() for line in command.splitlines() if line.strip()), None)


def relative_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies under it (shorter), else unchanged."""
    if not cwd:
        return path
    prefix = cwd.rstrip("/") + "/"
    if path.startswith(prefix) and len(path) > len(prefix):
        return path[len(prefix) :]
    return path


_RUNNER = re.compile(
    r"^(?:(?:cd|pushd)\s+\S+\s*(?:&&|;)\s*)*(?:(?:\w+=\S*\s+)*)(?:(?:uv|poetry|pdm|hatch|pipenv|rye)\s+run\s+|npx\s+|"
    r"bunx\s+|bundle\s+exec\s+|time\s+|env\s+(?:\w+=\S*\s+)*)*"
)
"""What runs a program without being it: ``cd DIR &&``, variable assignments, ``uv run``, ``npx``, ``time``."""
_CHECK = re.compile(
    r"^(?:python3?\s+-m\s+)?(?:(?P<one>pytest|py\.test|tox|nox|mypy|pyright|ruff|flake8|pylint|black|isort|eslint|"
    r"prettier|tsc|jest|vitest|mocha|ava|rspec|rubocop|phpunit|ctest|shellcheck|golangci-lint|clippy|unittest|credo)\b"
    r"|(?P<two>(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:test|lint|build|check|typecheck|type-check)|"
    r"(?:make|just|task|mise\s+run)\s+(?:test|tests|check|lint|build|ci|typecheck|fmt)[\w:-]*|cargo\s+(?:test|check|build|clippy|nextest)|"
    r"go\s+(?:test|build|vet)|mix\s+(?:test|compile|credo|format\s+--check-formatted|dialyzer)|"
    r"(?:gradle|gradlew|\./gradlew)\s+(?:test|check|build)|mvn\s+(?:test|verify|package)|dotnet\s+(?:test|build)|"
    r"swift\s+(?:test|build)|deno\s+(?:test|lint|check)|bazel\s+(?:test|build)|zig\s+build))\b"
)
_STATE_CHANGING_PARTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        ("git",),
        r"\bgit\s+(?:commit|push|merge|rebase|reset|checkout\s+--\s|clean|tag|cherry-pick|stash|am|revert|rm|mv)\b",
    ),
    (("rm",), r"\brm\s"),
    (("mv",), r"\bmv\s+\S+\s+\S+"),
    (("gh",), r"\bgh\s+(?:pr|issue|release|repo)\s+(?:create|merge|close|edit|comment|delete|reopen)\b"),
    (("bd", "beads"), r"\b(?:bd|beads)\s+(?:close|update|create|delete|sync)\b"),
    (("publish",), r"\b(?:npm|pnpm|yarn|cargo|twine|poetry)\s+publish\b"),
    (("deploy",), r"\bdeploy\b"),
    (("kubectl",), r"\bkubectl\s+(?:apply|delete)\b"),
    (("terraform",), r"\bterraform\s+(?:apply|destroy)\b"),
    (("migrate",), r"\b(?:migrate|ecto\.migrate|db:migrate)\b"),
    (("install", "add", "remove", "get"), r"\b(?:pip|npm|pnpm|yarn|cargo|go)\s+(?:install|add|remove|uninstall|get)\b"),
    ((">",), r">\s*[^&|\s]"),
    (("tee",), r"\btee\s"),
    (("sed",), r"\bsed\s+-i\b"),
)
"""What a command that changes something beyond printing says: a commit, a push, a removal, a tracker
update, a publish, a migration, an install, a redirect into a file (never proposed as a check). Each
pattern with words that any text it matches contains: a pattern is tried only on a command that has
one of them, so that a command is not searched for every pattern at every character."""
_STATE_CHANGING = tuple((words, re.compile(pattern)) for words, pattern in _STATE_CHANGING_PARTS)
_HARMLESS_REDIRECT = re.compile(r"\d?>&\d|&?\d?>>?\s*/dev/null")
"""Redirections that write no file: ``2>&1``, ``> /dev/null``."""
_COMMIT = re.compile(r"\bgit\s+(?:commit|push)\b|\bgh\s+pr\s+(?:create|merge)\b")


_FORMATTERS = frozenset({"black", "isort", "prettier"})


def _program(command: str) -> str:
    return _RUNNER.sub("", command.strip(), count=1)


def check_program(command: str) -> str | None:
    """The check a shell command runs (``pytest``, ``mix test``, ``npm run lint``), or None when it runs
    no test, lint, type check or build, or when it also changes state (``changes_state``)."""
    if changes_state(command):
        return None
    program = _program(command)
    match = _CHECK.match(program)
    if match is None:
        return None
    if match.group("two"):
        return " ".join(match.group("two").split())
    name = match.group("one")
    rest = program[match.end() :].split()
    if name in _FORMATTERS and "--check" not in rest and "--check-only" not in rest and "--diff" not in rest:
        return None  # a formatter rewrites files unless told to check
    sub = rest[0] if rest and re.fullmatch(r"[a-z][a-z-]*", rest[0]) else None
    if name == "ruff" and sub == "format" and "--check" not in rest:
        return None
    return f"{name} {sub}" if sub else name


OUTPUT_PLUMBING = re.compile(r"(?:\s*(?:2>&1|\|\s*(?:tail|head|grep|less|tee)\b.*|>\s*/dev/null))+\s*$")
"""What trims a command's output (``2>&1 | tail -5``): not part of the check it runs."""


_READERS = r"cat|head|tail|less|grep|egrep|rg|ag|awk|sed -n|jq|diff|find|ls|tree|wc"
"""Programs that print what they read."""
_GIT_READS = r"diff|show|log|blame|grep|status"
"""git subcommands that print what they read."""
_SHOWS_CONTENT = re.compile(
    rf"^(?:cd\s+\S+\s*&&\s*)?(?:{_READERS}|more|zcat|git (?:{_GIT_READS})|"
    r"gh (?:pr|issue|run|api|release) (?:diff|view|list|checks|comments)|gh api|"
    r"curl|wget|bd (?:show|list|ready)|bat|nl|strings|xxd|od)\b"
)
_INSPECTS = re.compile(
    rf"^(?:cd\s+\S+\s*&&\s*)?(?:[A-Z_]+=\S+\s+)*(?:{_READERS}|"
    r"file|stat|which|type|echo|ps|lsof|env|printenv|md5|md5sum|sha\w*sum|python3? -c|node -e|"
    rf"git(?:\s+-C\s+\S+)?\s+(?:{_GIT_READS}|fsck|cat-file|ls-files|ls-tree|rev-parse|count-objects|"
    r"reflog|for-each-ref|describe|gc --auto --dry-run)|gh (?:pr|issue|run|api) (?:view|list|diff|checks))\b"
)


def shows_content(first: str) -> bool:
    """Whether a shell command (its first line) shows content: an error line in what it prints is the
    content's, not its own (a log read with ``tail``, a diff); only its own failure counts."""
    return _SHOWS_CONTENT.match(first) is not None


def inspects(command: str) -> bool:
    """Whether a shell command only looks at something (``git fsck``, ``grep``, ``python3 -c``): its
    failure is evidence for the work, not an error of it."""
    if _INSPECTS.match(command.strip()) is None or changes_state(command):
        return False
    return re.search(r"\s-(?:delete|exec|execdir|ok)\b|\s>>?\s*(?!/dev/null)\S", command) is None


def plain_check(command: str) -> bool:
    """Whether a shell command is checks alone, its output trimmed at most (``mise run lint && mise run
    test 2>&1 | tail``), not a check joined to a probe (``go build && ./app list | wc -l``)."""
    bare = OUTPUT_PLUMBING.sub("", command).strip()
    parts = [part.strip() for part in re.split(r"&&|\|\||;", bare)]
    return "|" not in bare.replace("||", "") and all(check_program(part) for part in parts if part)


def changes_state(command: str) -> bool:
    """Whether a shell command changes state beyond printing (see ``_STATE_CHANGING``)."""
    command = _HARMLESS_REDIRECT.sub(" ", command) if ">" in command else command
    return any(
        any(word in command for word in words) and pattern.search(command) is not None
        for words, pattern in _STATE_CHANGING
    )


def commits_work(command: str) -> bool:
    """Whether a shell command commits or pushes work (``git commit``, ``git push``, ``gh pr create``)."""
    return _COMMIT.search(command) is not None


_MESSAGE = re.compile(
    r"""\bgit\s+commit\b[^\n]*?\s-a?m\s*(?:"\$\(cat\s+<<-?\s*['"]?(\w+)['"]?\s*\n|"([^"]*)"|'([^']*)')"""
)
"""A ``git commit`` command's message: a heredoc's end word (its lines follow), or the quoted text of
its first ``-m``."""


def commit_subject(command: str) -> str | None:
    """The subject line of the message a ``git commit`` command gives (``-m "..."``, or a heredoc as
    ``-m "$(cat <<'EOF' ... EOF)"``), or None when it gives none (``--amend --no-edit``, a push)."""
    found = _MESSAGE.search(command)
    if found is None:
        return None
    if found.group(1):  # a heredoc: the lines up to its end word
        message = command[found.end() :].split(f"\n{found.group(1)}", 1)[0]
    else:
        message = found.group(2) if found.group(2) is not None else found.group(3)
    subject = next((line.strip() for line in message.splitlines() if line.strip()), "")
    return subject or None


_CLOSES_ITEM = re.compile(
    r"^(?:cd\s+\S+\s*&&\s*)?(?:(?:bd|beads)\s+close|gh\s+(?:issue|pr)\s+close|glab\s+issue\s+close|linear\s+issue\s+close)\b"
)


def wraps_up(command: str) -> bool:
    """Whether a shell command is one of those that finish a piece of work: a check, closing a tracker
    item, a commit or a push (what a session runs between its last edit and moving on)."""
    return check_program(command) is not None or commits_work(command) or _CLOSES_ITEM.match(command) is not None


def wrap_up_steps(command: str) -> list[str]:
    """The steps of a command line that wrap work up (``wraps_up``), each without its output plumbing,
    a commit without its message: ``git add x && git commit -m "..." && git push`` gives
    ``git commit``, ``git push``."""
    steps = []
    for part in re.split(r"&&|;", command):
        part = OUTPUT_PLUMBING.sub("", part).strip()
        if part and wraps_up(part) and not part.startswith("gh pr "):  # a branch's PR is opened once, not per task
            steps.append("git commit" if re.match(r"git\s+commit\b", part) else part)
    return steps


_REMOVES = re.compile(r"\b(?:rm|mv|unlink)\b")


def removed_paths(command: str) -> list[str]:
    """The paths a shell command removes (``rm``, ``git rm``) or moves away (``mv A B``, ``git mv``: A)."""
    if not _REMOVES.search(command):  # most commands: not worth splitting as a shell would
        return []
    found: list[str] = []
    for part in re.split(r"&&|\|\||;|\|", command):
        try:
            tokens = shlex.split(part)
        except ValueError:
            continue
        if tokens[:1] == ["git"]:
            tokens = tokens[1:]
        if not tokens or tokens[0] not in ("rm", "mv", "unlink"):
            continue
        args = [t for t in tokens[1:] if not t.startswith("-")]
        found.extend(args[:-1] if tokens[0] == "mv" else args)
    return found


_EDIT_LINES = 6
_EDIT_CHARS = 500
_DIFFED_LINES = 400


def edit_text(use: ToolUseBlock) -> str:
    """What an edit writes: its new strings (every one of a MultiEdit) or the content written."""
    if use.name == "Write":
        content = use.input.get("content")
        return content if isinstance(content, str) else ""
    edits = use.input.get("edits")
    parts = [e for e in edits if isinstance(e, dict)] if isinstance(edits, list) else [use.input]
    return "\n".join(str(p.get("new_string", "")) for p in parts if isinstance(p.get("new_string"), str))


def edit_lines(use: ToolUseBlock) -> str:
    """A small edit as the ``-``/``+`` lines it changed ("" when that is too large to show: it is in
    the stored head)."""
    edit: dict[str, object] = dict(use.input)
    edits = use.input.get("edits")
    if use.name == "MultiEdit" and isinstance(edits, list) and edits and isinstance(edits[-1], dict):
        edit = edits[-1]
    old, new = edit.get("old_string"), edit.get("new_string")
    if use.name == "Write":
        old, new = "", use.input.get("content")
    if not isinstance(old, str) or not isinstance(new, str):
        return ""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if (not new_lines and not old_lines) or len(old_lines) + len(new_lines) > _DIFFED_LINES:
        return ""  # nothing, or too large to compare at every merge
    # Only the lines that changed: an edit that removes one comment from a 20-line block is that line.
    changed: list[str] = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag != "equal":
            changed += [f"-{line}" for line in old_lines[a0:a1]] + [f"+{line}" for line in new_lines[b0:b1]]
    if not changed or len(changed) > 2 * _EDIT_LINES or sum(len(line) for line in changed) > _EDIT_CHARS:
        return ""
    return "\n".join(changed)


_DEFINES = re.compile(
    r"^[ \t]*(?:export\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|defp|defmacro|function|func(?:\s+\([^)]*\))?|fn|class|interface|struct|enum|trait|module|defmodule|"
    r"(?:abstract\s+)?class|type)\s+([A-Za-z_][\w.!?]*)"
    r"|^[ \t]*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_]\w*)\s*=\s*(?:async\s*)?(?:\(|function)"
    r"|handle_event\(\s*\"([\w:-]+)\"",
    re.M,
)
"""Where a line of code defines a name: a function, class, module or type, an arrow function, an event handler."""
_DEFINES_AT_LINES = re.compile(
    r"\n[ \t]*+(?:(?:export\s+)?(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?(?:static\s+)?"
    r"(?:def|defp|defmacro|function|func(?:\s+\([^)]*\))?|fn|class|interface|struct|enum|trait|module|defmodule|"
    r"(?:abstract\s+)?class|type)\s+([A-Za-z_][\w.!?]*)"
    r"|(?:export\s+)?(?:const|let|var)\s+([A-Za-z_]\w*)\s*=\s*(?:async\s*)?(?:\(|function))"
)
"""``_DEFINES`` without its event handlers, for a text that has none, read after a newline put before it:
each try starts at a newline, which the search finds quickly, rather than at every character (less
than half the time)."""


def defined_names(use: ToolUseBlock) -> list[str]:
    """The names an edit or write defines, in order (``Edit``'s new text, ``Write``'s content)."""
    texts: list[object] = [use.input.get("new_string"), use.input.get("content")]
    edits = use.input.get("edits")
    if isinstance(edits, list):
        texts += [e.get("new_string") for e in edits if isinstance(e, dict)]
    found: list[str] = []
    for text in texts:
        if isinstance(text, str):
            text = text[:50_000]
            matches = _DEFINES.finditer(text) if "handle_event" in text else _DEFINES_AT_LINES.finditer("\n" + text)
            for match in matches:
                name = next(g for g in match.groups() if g)
                if name not in found:
                    found.append(name)
    return found
