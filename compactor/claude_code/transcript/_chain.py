"""Which records of a transcript file form its session's main chain.

Records appended twice are read once (``_first_of_each_uuid``); a file
holding two sessions is read as its last (``_one_session``); the chain is
walked back by ``parentUuid`` from the last message record (``_main_chain``),
following what Claude Code meant where its links fall short
(``_implied_parent``), and the sibling records of parallel tool calls are
taken in (``_recover_parallel_calls``). The helpers that look into a raw
record (``_is_message_record``, ``_message_id``, ``_block_ids``) are shared
with ``_entries``.
"""

from __future__ import annotations

from typing import Any

from compactor.claude_code.transcript._lines import Record, Reporter

__all__ = [
    "_MESSAGE_TYPES",
    "_block_ids",
    "_first_of_each_uuid",
    "_is_message_record",
    "_main_chain",
    "_message_id",
    "_one_session",
    "_session_of_each",
]

_MESSAGE_TYPES = frozenset({"user", "assistant"})


def _first_of_each_uuid(records: list[Record], report: Reporter) -> tuple[list[Record], list[Record]]:
    """Records appended twice (same ``uuid``): keep the first, set the others aside."""
    first: dict[str, int] = {}
    kept: list[Record] = []
    repeats: list[Record] = []
    for record in records:
        key = record.data.get("uuid")
        if not isinstance(key, str):
            kept.append(record)
        elif key in first:
            report(
                record.line, "duplicate_uuid", f"uuid {key} already read at line {first[key]}; the repeat is ignored"
            )
            repeats.append(record)
        else:
            first[key] = record.line
            kept.append(record)
    return kept, repeats


def _one_session(records: list[Record], report: Reporter) -> tuple[str | None, list[Record], list[Record]]:
    """The records of the file's last session, and those of any other (see ``read_sessions``).

    A record without a ``sessionId`` (a ``file-history-snapshot``, say)
    belongs to the session of the records around it: the last one seen.
    """
    ids = _session_of_each(records)
    sessions = list(dict.fromkeys(i for i in ids if i is not None))
    if len(sessions) < 2:
        return (sessions[0] if sessions else None), records, []
    chosen = sessions[-1]
    report(
        None,
        "mixed_sessions",
        f"the file holds {len(sessions)} sessions ({', '.join(sessions)}); reading {chosen}, "
        "the others are set aside (`compactor replay --session ID` replays another; read_sessions reads each)",
    )
    mine = [r for r, i in zip(records, ids, strict=True) if i in (chosen, None)]
    others = [r for r, i in zip(records, ids, strict=True) if i not in (chosen, None)]
    return chosen, mine, others


def _session_of_each(records: list[Record]) -> list[str | None]:
    ids: list[str | None] = []
    current: str | None = None
    for record in records:
        value = record.data.get("sessionId")
        if isinstance(value, str):
            current = value
        ids.append(current)
    # Records before the first sessionId belong to the first session.
    first = next((i for i in ids if i is not None), None)
    return [first if i is None else i for i in ids]


def _is_message_record(data: dict[str, Any]) -> bool:
    return data.get("type") in _MESSAGE_TYPES and isinstance(data.get("message"), dict)


def _content_list(data: dict[str, Any]) -> list[Any]:
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _block_ids(data: dict[str, Any], block_type: str, key: str) -> list[str]:
    return [
        b[key]
        for b in _content_list(data)
        if isinstance(b, dict) and b.get("type") == block_type and isinstance(b.get(key), str)
    ]


def _message_id(data: dict[str, Any]) -> str | None:
    message = data.get("message")
    value = message.get("id") if isinstance(message, dict) else None
    return value if isinstance(value, str) else None


def _main_chain(records: list[Record], by_uuid: dict[str, int], report: Reporter) -> tuple[set[int], int | None]:
    """Indexes of the main chain's records (walked back from the last message), and its root.

    A compaction boundary whose logical parent was never written, and a
    1.0.x compact summary (a root with no boundary before it), link to the
    last main-chain record before them in file order: that is what Claude
    Code meant, and following the links alone would lose everything before.
    """
    leaf = _leaf(records)
    if leaf is None:
        return set(), None
    sidechain = records[leaf].data.get("isSidechain") is True
    chain: set[int] = set()
    index: int | None = leaf
    root: int | None = None
    while index is not None and index not in chain:
        chain.add(index)
        root = index
        data = records[index].data
        parent = data.get("parentUuid") or data.get("logicalParentUuid")
        index = by_uuid.get(parent) if isinstance(parent, str) else None
        if index is not None and index in chain:
            index = _broken_loop(records, root, index, chain, report)
        elif index is None and not sidechain:
            index = _implied_parent(records, root, report)
    _recover_parallel_calls(records, chain, sidechain)
    return chain, root


def _broken_loop(records: list[Record], index: int, named: int, chain: set[int], report: Reporter) -> int | None:
    """A record whose parent link leads back into the chain (its own uuid, a loop): damaged links.

    Following them would end the chain there and lose everything before, so
    the record follows the last record before it in file order that is not
    on the chain yet, as for a parent that was never written.
    """
    before = _record_before(records, index, skip=chain)
    record = records[index]
    itself = "its own uuid" if named == index else f"the record at line {records[named].line}, later in the chain"
    to = f"linked to line {records[before].line}" if before is not None else "the chain starts here"
    report(record.line, "parent_cycle", f"parentUuid names {itself}, a loop; {to}")
    return before


def _record_before(records: list[Record], index: int, skip: set[int] | frozenset[int] = frozenset()) -> int | None:
    """The last main-chain kind of record (a message, system or attachment record) before ``index``."""
    return next(
        (
            i
            for i in range(index - 1, -1, -1)
            if i not in skip
            and records[i].data.get("isSidechain") is not True
            and isinstance(records[i].data.get("uuid"), str)
            and (_is_message_record(records[i].data) or records[i].data.get("type") in ("system", "attachment"))
        ),
        None,
    )


def _implied_parent(records: list[Record], index: int, report: Reporter) -> int | None:
    """The record that a record whose link is missing follows: the last main-chain record before it.

    That is a boundary whose logical parent was never written, a 1.0.x
    compact summary (a root), or a record whose parent was never written
    (seen on progress records around a compaction). A record with no
    main-chain record before it starts the file: the chain's true root, or
    a fragment's first record.
    """
    data = records[index].data
    parent = data.get("parentUuid")
    boundary = data.get("type") == "system" and data.get("subtype") == "compact_boundary"
    legacy = data.get("type") == "user" and data.get("isCompactSummary") is True and parent is None
    if not boundary and not legacy and not isinstance(parent, str):
        return None
    before = _record_before(records, index)
    if before is None:
        return None
    line = records[index].line
    if boundary:
        named = data.get("logicalParentUuid")
        report(
            line,
            "dangling_logical_parent",
            f"compact_boundary's logicalParentUuid {named} is not in the file; linked to line {records[before].line}",
        )
    elif legacy:
        report(
            line,
            "legacy_compaction",
            f"compact summary with no compact_boundary (1.0.x); linked to line {records[before].line}",
        )
    else:
        report(
            line, "dangling_parent", f"parentUuid {parent} is not in the file; linked to line {records[before].line}"
        )
    return before


def _leaf(records: list[Record]) -> int | None:
    last_any: int | None = None
    for index in range(len(records) - 1, -1, -1):
        data = records[index].data
        if not _is_message_record(data) or not isinstance(data.get("uuid"), str):
            continue
        if data.get("isSidechain") is not True:
            return index
        if last_any is None:
            last_any = index
    return last_any


def _recover_parallel_calls(records: list[Record], chain: set[int], sidechain: bool) -> None:
    """Take in sibling records of chain answers and the results answering them."""
    same_side = [i for i, r in enumerate(records) if (r.data.get("isSidechain") is True) == sidechain]
    answer_ids = {
        mid for i in chain if records[i].data.get("type") == "assistant" and (mid := _message_id(records[i].data))
    }
    for i in same_side:
        data = records[i].data
        if i not in chain and data.get("type") == "assistant" and _message_id(data) in answer_ids:
            chain.add(i)
    calls = {cid for i in chain for cid in _block_ids(records[i].data, "tool_use", "id")}
    answered = {rid for i in chain for rid in _block_ids(records[i].data, "tool_result", "tool_use_id")}
    for i in same_side:
        data = records[i].data
        if i in chain or data.get("type") != "user":
            continue
        ids = _block_ids(data, "tool_result", "tool_use_id")
        if ids and all(rid in calls and rid not in answered for rid in ids):
            chain.add(i)
            answered.update(ids)
