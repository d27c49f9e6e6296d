"""The settings reference: every field of ``compactor.core.config.Settings``, its default, bounds and variable."""

from __future__ import annotations

import ast
import inspect
import itertools
import re
import types
from collections.abc import Iterator
from typing import Any, Literal, Union, get_args, get_origin

from generator._common import HEADER
from generator._common import cell as _cell


def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstring under each annotated attribute of ``cls`` (``name: T = ...`` then ``\"\"\"...\"\"\"``)."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    docs = {}
    for node, following in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[node.target.id] = " ".join(following.value.value.split())
    return docs


def _constant_docs(module: types.ModuleType) -> dict[str, str]:
    """The docstring under each module-level constant of ``module`` (``DEFAULT_X = ...`` then a string)."""
    tree = ast.parse(inspect.getsource(module))
    docs = {}
    for node, following in zip(tree.body, tree.body[1:], strict=False):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        if (
            len(targets) == 1
            and isinstance(targets[0], ast.Name)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
        ):
            docs[targets[0].id] = " ".join(following.value.value.split())
    return docs


def _default_constants(cls: type) -> dict[str, str]:
    """Field name -> the ``DEFAULT_*`` constant its default is written as, in ``cls``'s source."""
    try:
        tree = ast.parse(inspect.getsource(cls))
    except (OSError, TypeError):
        return {}
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Name) and sub.id.startswith("DEFAULT_"):
                    found[node.target.id] = sub.id
                    break
    return found


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return " \\| ".join(f'`"{a}"`' if isinstance(a, str) else f"`{a}`" for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(a) for a in get_args(annotation))
    if annotation is type(None):
        return "none"
    if origin is dict:
        key, value = get_args(annotation)
        return f"table of {_type_name(key)} to {_type_name(value)}"
    if origin is list:
        return f"list of {_type_name(get_args(annotation)[0])}"
    if origin is not None and get_args(annotation):  # Annotated[int, Gt(0)] and the like
        return _type_name(get_args(annotation)[0])
    return {"int": "integer", "float": "number", "str": "string", "bool": "boolean"}.get(
        getattr(annotation, "__name__", str(annotation)), str(annotation)
    )


def _bounds(field: Any) -> str:
    import annotated_types as at

    words = []
    for meta in field.metadata:
        for attr, sign in (("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<=")):
            value = getattr(meta, attr, None)
            if isinstance(meta, at.Gt | at.Ge | at.Lt | at.Le | at.Interval) and value is not None:
                words.append(f"{sign} {value:,}" if isinstance(value, int) else f"{sign} {value}")
    annotation = field.annotation
    for arg in (*get_args(annotation), annotation):
        for meta in getattr(arg, "__metadata__", ()):
            if isinstance(meta, at.Gt) and meta.gt is not None:
                words.append(f"> {meta.gt}")
    return ", ".join(dict.fromkeys(words))


def _default(field: Any) -> str:
    from pydantic_core import PydanticUndefined

    if field.default_factory is not None:
        value = field.default_factory()
    elif field.default is PydanticUndefined:
        return ""
    else:
        value = field.default
    if isinstance(value, dict):
        return ", ".join(f"{k} {'unbounded' if v is None else f'{v:,}'}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(f"`{v}`" for v in value)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:g}"


def leaf_fields(model: type, prefix: str = "") -> Iterator[tuple[str, type, str, Any]]:
    """(dotted name, owning model, field name, field) for every setting that is not a section."""
    from pydantic import BaseModel

    for name, field in model.model_fields.items():  # type: ignore[attr-defined]
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            yield from leaf_fields(annotation, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", model, name, field


MEANINGS: dict[str, str] = {
    "counter": "How tokens are counted: tiktoken's cl100k_base, or Claude Code's rough estimate (characters / 4).",
    "summarizer": "Who writes the summary: extractive (offline, deterministic), an LLM, or the provider's own compaction.",
    "policy.context_window": "The model's context window in tokens.",
    "policy.summary_reserve_cap": "The most of the window reserved for the summary's output.",
    "policy.autocompact_buffer": "Auto-compaction fires this many tokens below the effective window.",
    "policy.warning_buffer": "A warning is due this many tokens below the auto-compact threshold.",
    "policy.error_buffer": "An error is due this many tokens below the auto-compact threshold.",
    "policy.blocking_buffer": "Past the effective window less this, a request is blocked until compaction.",
    "policy.autocompact_pct": "Auto-compact at this percentage of the effective window; it can only lower the threshold.",
    "policy.auto_compact": "Compact automatically when the threshold is reached.",
    "policy.compact": "Compact at all (false: never, not even on request).",
    "policy.max_consecutive_failures": "Auto-compaction stops after this many failures in a row.",
    "policy.thrash_turns": "A compaction within this many turns of the last one counts as thrashing.",
    "policy.thrash_limit": "Auto-compaction stops after this many thrashing compactions in a row.",
    "dedup.enabled": "Deduplicate repeated tool results.",
    "attachments.max_files": "At most this many read files are restored after a compaction.",
    "attachments.file_tokens": "Each restored file is cut to this many tokens (the rest stored and named).",
    "attachments.files_total": "Restored files take at most this many tokens together.",
    "attachments.skill_tokens": "Each invoked skill is cut to this many tokens, keeping its head.",
    "attachments.skills_total": "Restored skills take at most this many tokens together.",
    "attachments.selection.strategy": "Which read files come first: recent (Claude Code's order) or activity.",
    "pipeline.tail_tokens": "The most recent complete rounds kept verbatim take at most this many tokens.",
    "masking.enabled": "Mask old tool results between compactions.",
    "masking.cache_policy": "When masking may run, given the prompt cache: cold, batch or eager.",
    "llm.base_url": "Base URL of the LLM summarizer's API (an OpenAI-compatible local server, for example).",
    "llm.model": "The model the LLM summarizer asks.",
    "llm.api_key_env": "The name of the environment variable that holds the API key.",
    "llm.timeout_seconds": "Seconds one summary request may take.",
    "llm.max_output_tokens": "Output tokens a summary may use.",
    "background.enabled": "With an LLM summarizer, summarize the aged-out head in the background.",
}
"""Meanings for the settings whose code carries no docstring; the code's own wins where there is one."""


def env_meanings(doc: str) -> dict[str, str]:
    """Variable -> meaning, from the table of environment variables in ``compactor.core.config``'s docstring."""
    found: dict[str, str] = {}
    current = None
    for line in doc.splitlines():
        match = re.match(r"``(COMPACTOR_[A-Z_]+)``\s+(.*)", line)
        if match:
            current = match.group(1)
            found[current] = match.group(2).strip()
        elif current and line.startswith(" " * 20) and line.strip() and not line.strip().startswith("="):
            found[current] += " " + line.strip()
        else:
            current = None
    return found


def settings_reference() -> str:
    """Every setting: section, name, type, default, bounds, environment variable and meaning."""
    from attachments import bounds
    from compactor.core import config

    env_of = {dotted: name for name, (dotted, _) in config.ENV_VARS.items()}
    constants = _constant_docs(config)
    env_docs = env_meanings(config.__doc__ or "")
    lines = [
        HEADER.format(source="compactor.core.config.Settings"),
        "In a settings file a setting is written in its section's table: `policy.context_window` is",
        "`context_window` under `[policy]`, `attachments.selection.strategy` is `strategy` under",
        "`[attachments.selection]`, and a top-level one (`counter`) comes before any table. "
        f"Every number is at most {bounds.MAX_SETTING_NUMBER:,}.",
        "",
    ]
    section = None
    for dotted, model, name, field in leaf_fields(config.Settings):
        here = dotted.rsplit(".", 1)[0] if "." in dotted else ""
        if here != section:
            section = here
            title = f"`[{here}]`" if here else "Top level"
            doc = (inspect.getdoc(model) or "").split("\n\n")[0] if here else ""
            lines += ["", f"### {title}", ""]
            if doc:
                lines += [_cell(doc), ""]
            lines += ["| setting | type | default | bounds | env var | meaning |", "|---|---|---|---|---|---|"]
        const = _default_constants(model).get(name)
        doc = (
            field.description
            or _attribute_docs(model).get(name)
            or constants.get(const or "", "")
            or env_docs.get(env_of.get(dotted, ""), "")
            or MEANINGS.get(dotted, "")
        )
        env = f"`{env_of[dotted]}`" if dotted in env_of else ""
        lines.append(
            f"| `{dotted}` | {_type_name(field.annotation)} | {_cell(_default(field))} | {_bounds(field)} | {env} | {_cell(doc)} |"
        )
    lines.append("")
    lines += [
        "### Environment variables",
        "",
        "Each variable sets one setting; an empty one counts as unset, and a boolean reads",
        "`1/0`, `true/false`, `yes/no` or `on/off`. `DISABLE` variables set the negation.",
        "",
        "| variable | setting |",
        "|---|---|",
        *(f"| `{name}` | `{dotted}` |" for name, (dotted, _) in config.ENV_VARS.items()),
        f"| `{config.CONFIG_ENV}` | the settings file read when none is given |",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"
