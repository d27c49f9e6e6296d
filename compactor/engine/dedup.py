"""Tool-result dedup: a repeated tool result becomes a short reference to its first copy.

Applied to each tool result before it is counted or checked against a
threshold. A result is eligible when it is a string,
not an error, not recovered content (CCR retrieval), longer than 256 UTF-16
code units (JavaScript's string length, not bytes), and its length + 26 is
within its tool's persistence threshold: Claude Code's, 30,000 for Bash,
20,000 for Grep, none for Read, 50,000 for every other tool (see
``DedupSettings``).

The key is djb2 over UTF-16 code units with 32-bit wrap-around, the value
JavaScript's ``h = ((h << 5) + h + c) | 0`` gives, but a hash match alone
never dedups: the content is compared too, so colliding results (``"Ez"`` and
``"FY"`` collide) stay two results. The first occurrence gets a trailing
``[result-id: rN]`` line (N counts up per session); a repeat is replaced by
a one-line reference naming ``rN`` and the tool.

After a compaction the seen-set is cleared and the counter keeps counting
(``reset_after_compaction``); ``expand_references`` makes sure no preserved
reference points at a first occurrence that was dropped, and
``expand_all`` turns a deduplicated history back into the original exactly.

``djb2`` gives exactly JavaScript's value for any string (how it avoids a
per-character loop: ``_poly``, and docs/ARCHITECTURE.md, "Why it is fast").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from compactor.core.config import DedupSettings
from compactor.core.errors import DanglingReference
from compactor.core.messages import Message, ToolResultBlock
from compactor.core.session import DedupEntry, DedupState
from compactor.core.tokens import utf16_length

__all__ = [
    "DedupOutcome",
    "Deduper",
    "RESULT_ID_OVERHEAD",
    "djb2",
    "expand_all",
    "expand_references",
    "is_eligible",
    "reference_text",
    "reset_after_compaction",
    "result_id_line",
    "resume_counter",
    "resume_state",
    "tool_name_map",
    "without_result_id",
]

RESULT_ID_OVERHEAD = 26
"""Characters a result may grow by when it is tagged; counted against the threshold."""

UNKNOWN_TOOL = "unknown"

_M32 = 0xFFFFFFFF
_SMALL = 64
"""Below this many code units the plain loop is faster than the folding."""
_BLOCK = 8_192
"""Bytes of code units hashed as one integer (see ``_poly``)."""

_RESULT_ID = re.compile(r"\n\[result-id: (r\d+)\]\Z")
_REFERENCE = re.compile(
    r"\A\[(?P<tool>[^\n]+?) returned the same output as \[result-id: (?P<rid>r\d+)\]"
    r"(?: above; not repeated|, which is no longer in context; recover it with "
    r"<<ccr:(?P<handle>ccr_[0-9a-f]{32})>>)\]\Z"
)


class DedupOutcome(BaseModel):
    """What dedup did to one tool result."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    content: str
    result_id: str | None = None
    hit: bool = False
    saved_bytes: int = 0


class _Block(NamedTuple):
    """Masks and powers for hashing a block of a given size and code unit width (see ``_block``)."""

    bytes_even: int
    """Bytes 0, 2, 4, ... (one-byte code units)."""
    pairs_even: int
    """16-bit fields 0 and 2 of every 64-bit lane."""
    pairs_odd: int
    """16-bit fields 1 and 3 of every 64-bit lane."""
    lanes: int
    """Bits 16 to 47 of every 64-bit lane: where each lane keeps its partial hash."""
    halves: tuple[tuple[int, int, int], ...]
    """(bits, all ones below bits, 33**units in the high half) per halving fold, widest first."""
    step: int
    """33**units in the whole block, mod 2**32."""


@functools.cache
def _block(nbytes: int, width: int) -> _Block:
    """The plan for blocks of ``nbytes`` bytes (a power of two, 8 to ``_BLOCK``) of ``width``-byte units."""

    def repeat(pattern: bytes) -> int:
        return int.from_bytes(pattern * (nbytes // len(pattern)), "little")

    units_per_lane = 8 // width
    halves = [nbytes // 16 >> k for k in range((nbytes // 16).bit_length())]
    return _Block(
        bytes_even=repeat(b"\xff\x00"),
        pairs_even=repeat(b"\xff\xff\x00\x00"),
        pairs_odd=repeat(b"\x00\x00\xff\xff"),
        lanes=repeat(b"\x00\x00\xff\xff\xff\xff\x00\x00"),
        halves=tuple((64 * h, (1 << 64 * h) - 1, pow(33, units_per_lane * h, 1 << 32)) for h in halves),
        step=pow(33, nbytes // width, 1 << 32),
    )


def _lanes(x: int, block: _Block, width: int) -> int:
    """One block's code units (unit i in field i of ``x``) combined into 64-bit lanes.

    Each lane ends up holding the partial hash of the units it covers, mod
    2**32, in its bits 16 to 47. One-byte units are first paired into 16-bit
    fields; then adjacent 16-bit fields A, B become ``A * p + B`` in the place
    of B by one multiplication by ``p << 16`` (no shift), and the two results
    of a lane are combined with one shift. The top of a lane's value may
    spill into the low 16 bits of the next lane, which the masks never read.
    """
    if width == 1:
        x = (x & block.bytes_even) * 33 + ((x >> 8) & block.bytes_even)
    pair: int = 33 ** (2 // width)  # int ** int is typed Any (a negative power is a float)
    x = (x & block.pairs_even) * (pair << 16) + (x & block.pairs_odd)
    return ((x & block.lanes) * (pair * pair) + ((x >> 32) & block.lanes)) & block.lanes


def _fold(x: int, block: _Block) -> int:
    """Fold the lanes of a block down to one partial hash, halves at a time.

    Lane j of the low half holds earlier code units than lane j of the high
    half, so it is multiplied by 33 to the power of the units the high half
    spans: ``lo * 33**k + hi`` per lane, lane-wise mod 2**32. A product is
    below 2**64 and starts at bit 16, so it spills at most into the next
    lane's unused low 16 bits.
    """
    for bits, low, power in block.halves:
        x = ((x & low) * power + (x >> bits)) & block.lanes
    return x >> 16


def _poly(data: bytes, width: int) -> int:
    """sum(c_i * 33**(n-1-i)) mod 2**32 over the ``width``-byte (1 or 2) code units of ``data``.

    A long text is cut into blocks of ``_BLOCK`` bytes because big-integer
    operations on a block stay in the CPU cache: on texts of 30,000 UTF-16
    units that is about 1.3 times faster than one integer for the whole text
    (8 KB measured best of 4 to 32 KB). The blocks' lanes are combined lane by
    lane (``acc * 33**units_per_block + lanes``), so only the last result is
    folded. The first, shorter part is a block of its own, padded in front
    with zero code units (which add nothing to the sum).
    """
    head = len(data) % _BLOCK
    h = 0
    if head:
        size = max(8, 1 << (head - 1).bit_length())
        block = _block(size, width)
        x = int.from_bytes(bytes(size - head) + data[:head], "little")
        h = _fold(_lanes(x, block, width), block)
    if len(data) > head:
        block = _block(_BLOCK, width)
        view = memoryview(data)
        acc = 0
        for start in range(head, len(data), _BLOCK):
            x = int.from_bytes(view[start : start + _BLOCK], "little")
            acc = (acc * block.step + _lanes(x, block, width)) & block.lanes
        h = h * pow(33, (len(data) - head) // width, 1 << 32) + _fold(acc, block)
    return h & _M32


def djb2(text: str) -> int:
    """djb2 of ``text``'s UTF-16 code units, as a signed 32-bit int, equal to JavaScript's
    ``h = 5381; for each code unit c: h = ((h << 5) + h + c) | 0``.

    The value is 5381 * 33**n + sum(c_i * 33**(n-1-i)) mod 2**32. Instead of a
    loop per code unit, the units of a block are read into one integer
    (little-endian, unit i in field i) and adjacent fields are combined in
    place with a few big-integer operations per doubling of the field width:
    8 -> 16 -> 32 -> 64 bits (``_lanes``); blocks are combined lane by lane,
    then halves are folded onto each other (``_poly``, ``_fold``). The work
    per character happens inside CPython's integer arithmetic.
    """
    return _djb2_units(*_code_units(text))


@functools.lru_cache(maxsize=1024)
def _length_and_key(content: str) -> tuple[int, int]:
    """``content``'s length in UTF-16 code units and its ``djb2``, from one encoding of it, remembered
    for the last 1,024 results: a session meets a result again after each compaction forgets what it
    had seen, and a tuning run's trials dedup the very same results (the same strings, whose hash
    Python keeps, so a lookup costs no pass over the text)."""
    data, wide = _code_units(content)
    return (len(data) >> 1 if wide else len(data)), _djb2_units(data, wide)


def _code_units(text: str) -> tuple[bytes, bool]:
    """``text`` as one byte per code unit when it is Latin-1, else as UTF-16LE (wide)."""
    if text.isascii():
        return text.encode("ascii"), False
    try:
        return text.encode("latin-1"), False
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass"), True


def _djb2_units(data: bytes, wide: bool) -> int:
    n = len(data) >> 1 if wide else len(data)
    if n < _SMALL:
        h = 5381
        units: Iterable[int] = memoryview(data).cast("H") if wide else data
        for unit in units:
            h = (h * 33 + unit) & _M32
    else:
        poly = _poly(data, 2 if wide else 1)
        h = (5381 * pow(33, n, 1 << 32) + poly) & _M32
    return h - (1 << 32) if h & 0x80000000 else h


def result_id_line(result_id: str) -> str:
    """The line appended to a first occurrence: ``\\n[result-id: rN]``."""
    return f"\n[result-id: {result_id}]"


def without_result_id(content: str) -> str:
    """``content`` without a trailing ``[result-id: rN]`` tag (unchanged when it has none)."""
    match = _tag(content)
    return content if match is None else content[: match.start()]


def reference_text(tool: str, result_id: str, handle: str | None = None) -> str:
    """The one-line stand-in for a repeated result (or, with ``handle``, for a dropped original)."""
    if handle is None:
        return f"[{tool} returned the same output as [result-id: {result_id}] above; not repeated]"
    return (
        f"[{tool} returned the same output as [result-id: {result_id}], which is no longer "
        f"in context; recover it with <<ccr:{handle}>>]"
    )


def is_eligible(
    tool: str,
    content: object,
    settings: DedupSettings,
    *,
    is_error: bool = False,
    recovered: bool = False,
) -> bool:
    """Whether a tool result may be deduplicated at all (see the module docstring)."""
    if not isinstance(content, str) or not _may_dedup(tool, settings, is_error, recovered):
        return False
    return _length_fits(tool, utf16_length(content), settings)


def _may_dedup(tool: str, settings: DedupSettings, is_error: bool, recovered: bool) -> bool:
    return settings.enabled and not is_error and not recovered and not settings.is_recovery_tool(tool)


def _length_fits(tool: str, length: int, settings: DedupSettings) -> bool:
    if length <= settings.min_length:
        return False
    limit = settings.threshold_for(tool)
    return limit is None or length + RESULT_ID_OVERHEAD <= limit


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _tag(content: str) -> re.Match[str] | None:
    """The trailing ``\n[result-id: rN]`` of ``content``, found without scanning all of it."""
    if not content.endswith("]"):
        return None
    start = content.rfind("\n[result-id: ", max(0, len(content) - 40))
    return None if start < 0 else _RESULT_ID.match(content, start)


def _first_occurrence_id(content: str, state: DedupState) -> str | None:
    """``rN`` when ``content`` is the tagged first occurrence of ``rN`` (checked against state)."""
    match = _tag(content)
    if match is None:
        return None
    result_id = match.group(1)
    if state.originals.get(result_id) != content[: match.start()]:
        return None
    return result_id


def _reference_id(content: str, state: DedupState) -> str | None:
    match = _REFERENCE.match(content)
    if match is None or match.group("rid") not in state.originals:
        return None
    return match.group("rid")


class Deduper:
    """Applies dedup to tool results, recording ids and stats in a ``DedupState``.

    Besides the state's hash table it keeps an index by content, so that a
    repeat is recognised without hashing it again; an index hit counts only
    while the state still lists that entry (a compaction clears it).
    """

    def __init__(self, state: DedupState, settings: DedupSettings | None = None) -> None:
        self.state = state
        self.settings = settings or DedupSettings()
        self._known: dict[str, tuple[int, DedupEntry]] = {
            entry.content: (key, entry) for key, entries in state.seen.items() for entry in entries
        }

    def _seen(self, content: str) -> tuple[DedupEntry, int] | None:
        """The entry for ``content`` and its length, when the state still lists it."""
        known = self._known.get(content)
        if known is None:
            return None
        key, entry = known
        if any(e is entry for e in self.state.seen.get(key, ())):
            return entry, utf16_length(content)
        del self._known[content]
        return None

    def apply(self, tool_name: str, content: str, *, is_error: bool = False, recovered: bool = False) -> DedupOutcome:
        """Tag a first occurrence, replace a repeat by its reference, or leave it alone.

        Content that already is a tag or reference this state issued is left
        as it is, so applying dedup twice changes nothing.
        """
        state = self.state
        if not isinstance(content, str) or not _may_dedup(tool_name, self.settings, is_error, recovered):
            return DedupOutcome(content=content)
        seen = self._seen(content)
        if seen is not None:
            entry, length = seen
            if not _length_fits(tool_name, length, self.settings):
                return DedupOutcome(content=content)
        else:
            if content.isascii() and not _length_fits(tool_name, len(content), self.settings):
                return DedupOutcome(content=content)  # told without encoding it
            if _first_occurrence_id(content, state) or _reference_id(content, state):
                return DedupOutcome(content=content)
            length, key = _length_and_key(content)
            if not _length_fits(tool_name, length, self.settings):
                return DedupOutcome(content=content)
            match = next((e for e in state.seen.get(key, ()) if e.content == content), None)
            if match is None:
                state.counter += 1
                result_id = f"r{state.counter}"
                first = DedupEntry(result_id=result_id, tool=tool_name, content=content)
                state.seen.setdefault(key, []).append(first)
                state.originals[result_id] = content
                self._known[content] = (key, first)
                return DedupOutcome(content=content + result_id_line(result_id), result_id=result_id)
            entry = match
            self._known[content] = (key, entry)
        reference = reference_text(tool_name, entry.result_id)
        saved = _utf8_size(content) - _utf8_size(reference)
        state.hits[tool_name] = state.hits.get(tool_name, 0) + 1
        state.saved_bytes[tool_name] = state.saved_bytes.get(tool_name, 0) + saved
        return DedupOutcome(content=reference, result_id=entry.result_id, hit=True, saved_bytes=saved)

    def apply_to_message(self, message: Message, tool_names: Mapping[str, str]) -> Message:
        """``message`` with each of its string tool results deduplicated.

        ``tool_names`` maps ``tool_use_id`` to the tool's name (see
        ``tool_name_map``); an unknown id counts as tool ``"unknown"``. A
        message with nothing to change is returned as the same object.
        """
        if isinstance(message.content, str):
            return message
        blocks = list(message.content)
        changed = False
        for index, block in enumerate(blocks):
            if not isinstance(block, ToolResultBlock) or not isinstance(block.content, str):
                continue
            tool = tool_names.get(block.tool_use_id, UNKNOWN_TOOL)
            outcome = self.apply(tool, block.content, is_error=block.is_error)
            if outcome.content != block.content:
                blocks[index] = block.model_copy(update={"content": outcome.content})
                changed = True
        return message.model_copy(update={"content": blocks}) if changed else message

    def apply_to_messages(self, messages: Sequence[Message]) -> list[Message]:
        """Deduplicate a whole history in order, learning tool names from its tool calls."""
        names: dict[str, str] = {}
        out = []
        for message in messages:
            names.update(tool_name_map([message]))
            out.append(self.apply_to_message(message, names))
        return out


def tool_name_map(messages: Iterable[Message]) -> dict[str, str]:
    """``tool_use_id`` -> tool name for every tool call in ``messages``."""
    return {use.id: use.name for message in messages for use in message.tool_uses()}


def reset_after_compaction(state: DedupState) -> None:
    """Forget which results were seen (the context no longer shows them); keep the counter.

    Originals and handles are kept so that references in preserved messages
    can still be expanded.
    """
    state.seen.clear()


def _map_results(messages: Sequence[Message], rewrite: Callable[[str], str]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if isinstance(message.content, str):
            out.append(message)
            continue
        blocks = list(message.content)
        changed = False
        for index, block in enumerate(blocks):
            if isinstance(block, ToolResultBlock) and isinstance(block.content, str):
                new = rewrite(block.content)
                if new != block.content:
                    blocks[index] = block.model_copy(update={"content": new})
                    changed = True
        out.append(message.model_copy(update={"content": blocks}) if changed else message)
    return out


def expand_references(
    messages: Sequence[Message],
    state: DedupState,
    handle_for_rid: Mapping[str, str] | None = None,
) -> list[Message]:
    """Make every reference in ``messages`` resolvable within ``messages``.

    For a reference to ``rN`` whose tagged first occurrence is not among
    ``messages`` (a compaction dropped it): when a CCR handle of the original
    is known (``handle_for_rid``, else ``state.handles``) the reference is
    rewritten to name that handle; otherwise the first such reference is
    replaced by the original content, tagged ``rN``, and later ones keep
    pointing at it.

    Raises:
        DanglingReference: a reference names an ``rN`` whose content the
            state does not hold (it came from another session).
    """
    handles = {**state.handles, **(handle_for_rid or {})}
    present: set[str] = set()
    for message in messages:
        for block in message.tool_results():
            if isinstance(block.content, str):
                found = _first_occurrence_id(block.content, state)
                if found:
                    present.add(found)

    def expand(content: str) -> str:
        match = _REFERENCE.match(content)
        if match is None:
            return content
        result_id, tool = match.group("rid"), match.group("tool")
        if result_id in present or match.group("handle"):
            return content
        if result_id in handles:
            return reference_text(tool, result_id, handles[result_id])
        original = state.originals.get(result_id)
        if original is None:
            raise DanglingReference(f"a preserved tool result refers to {result_id}, whose content is unknown")
        present.add(result_id)
        return original + result_id_line(result_id)

    return _map_results(messages, expand)


def expand_all(messages: Sequence[Message], state: DedupState) -> list[Message]:
    """The history before dedup: references replaced by originals, tags removed.

    Raises:
        DanglingReference: a reference names an ``rN`` whose content the state does not hold.
    """

    def restore(content: str) -> str:
        result_id = _first_occurrence_id(content, state)
        if result_id is not None:
            return state.originals[result_id]
        match = _REFERENCE.match(content)
        if match is None:
            return content
        original = state.originals.get(match.group("rid"))
        if original is None:
            raise DanglingReference(f"a tool result refers to {match.group('rid')}, whose content is unknown")
        return original

    return _map_results(messages, restore)


def resume_counter(messages: Iterable[Message]) -> int:
    """The highest N of any ``[result-id: rN]`` tag or reference in ``messages`` (0 if none).

    A session resumed from a saved history continues numbering after it.
    """
    highest = 0
    for message in messages:
        for block in message.tool_results():
            if not isinstance(block.content, str):
                continue
            tag = _tag(block.content)
            if tag is not None:
                highest = max(highest, int(tag.group(1)[1:]))
            reference = _REFERENCE.match(block.content)
            if reference is not None:
                highest = max(highest, int(reference.group("rid")[1:]))
    return highest


def resume_state(messages: Sequence[Message]) -> DedupState:
    """A ``DedupState`` rebuilt from a saved, deduplicated history.

    The counter continues after the highest ``rN`` present; every tagged
    first occurrence becomes an original again and is seen, so a repeat of it
    is still recognised.
    """
    state = DedupState(counter=resume_counter(messages))
    names = tool_name_map(messages)
    for message in messages:
        for block in message.tool_results():
            if not isinstance(block.content, str):
                continue
            match = _tag(block.content)
            if match is None:
                continue
            result_id, original = match.group(1), block.content[: match.start()]
            if result_id in state.originals:
                continue
            state.originals[result_id] = original
            entry = DedupEntry(result_id=result_id, tool=names.get(block.tool_use_id, UNKNOWN_TOOL), content=original)
            state.seen.setdefault(djb2(original), []).append(entry)
    return state
