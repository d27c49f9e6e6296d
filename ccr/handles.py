"""Handles, markers and references: how CCR content is named.

A handle is ``ccr_`` + the first 16 bytes of sha256(original) in lowercase
hex, so the same bytes always get the same handle. A typed object's id is
``ccr_obj_`` + 32 lowercase hex (see ``ccr.objects``). The model sees a
handle as the marker ``<<ccr:ccr_...>>``.

``parse_ref`` accepts exactly these shapes, and nothing else:

- the bare handle or object id: ``ccr_<32 hex>``, ``ccr_obj_<32 hex>``
- the marker: ``<<ccr:ccr_...>>``
- the half-stripped marker: ``ccr:ccr_...``
- a pointer into a stored JSON value: ``ccr://<id>[/field/path]`` (path
  segments are percent-decoded, so ``%2F`` selects a key containing ``/``)
- TinyJuice's marker ``tj:<32 hex>`` (also inside one pair of brackets,
  ``[tj:...]``, ``⟦tj:...⟧``, ``【tj:...】``, ``⟨tj:...⟩``, ``«tj:...»``), and
  its legacy form ``retrieve_tool_output("<32 hex>")`` (either quote, the
  token bare or as ``tj:<32 hex>``): the hex is a blob handle's, so both
  name ``ccr_<32 hex>`` (``tinyjuice_marker`` writes the marker)

It never touches storage, so a malformed reference fails before any I/O.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal
from urllib.parse import quote, unquote

from pydantic import BaseModel, ConfigDict

from ccr.errors import InvalidHandle

__all__ = [
    "HANDLE_PREFIX",
    "OBJECT_PREFIX",
    "Ref",
    "RefKind",
    "find_handles",
    "handle_for",
    "is_handle",
    "is_object_id",
    "marker",
    "parse_ref",
    "tinyjuice_marker",
]

HANDLE_PREFIX = "ccr_"
OBJECT_PREFIX = "ccr_obj_"

_HEX32 = "[0-9a-f]{32}"
_ID = rf"ccr_(?:obj_)?{_HEX32}"
_ID_RE = re.compile(rf"{_ID}")
_HANDLE_RE = re.compile(rf"ccr_{_HEX32}")
_OBJECT_RE = re.compile(rf"ccr_obj_{_HEX32}")
_FIND_RE = re.compile(rf"(?<![0-9A-Za-z_]){_ID}(?![0-9A-Za-z_])")
_MARKER_RE = re.compile(rf"<<ccr:({_ID})>>")
_HALF_RE = re.compile(rf"ccr:({_ID})")
_POINTER_RE = re.compile(rf"ccr://({_ID})((?:/[^/]+)*)/?")
_TJ = rf"tj:({_HEX32})"
_TJ_BRACKETS = ("[]", "⟦⟧", "【】", "⟨⟩", "«»")
_TJ_RE = re.compile("|".join([_TJ, *(re.escape(b[0]) + _TJ + re.escape(b[1]) for b in _TJ_BRACKETS)]))
_LEGACY = rf"""retrieve_tool_output\(\s*(["'])(?:tj:)?({_HEX32})\1\s*\)"""
_LEGACY_RE = re.compile(_LEGACY)
_FIND_TJ_RE = re.compile(rf"(?<![0-9A-Za-z_]){_TJ}(?![0-9A-Za-z_])|{_LEGACY}")

RefKind = Literal["blob", "object"]


class Ref(BaseModel):
    """A parsed reference: which record, and an optional path into its JSON value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    handle: str
    kind: RefKind
    path: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.path:
            return self.handle
        return "ccr://" + self.handle + "".join("/" + quote(p, safe="") for p in self.path)


def handle_for(data: bytes | bytearray | memoryview) -> str:
    """The handle of ``data``: ``ccr_`` + the first 16 bytes of its sha256, in hex."""
    return HANDLE_PREFIX + hashlib.sha256(data).hexdigest()[:32]


def marker(handle: str) -> str:
    """The model-visible marker for a handle or object id, ``<<ccr:ccr_...>>``.

    Raises:
        InvalidHandle: ``handle`` is not a bare handle or object id.
    """
    if not _ID_RE.fullmatch(handle):
        raise InvalidHandle(f"not a handle: {_shorten(handle)!r}")
    return f"<<ccr:{handle}>>"


def tinyjuice_marker(handle: str) -> str:
    """TinyJuice's marker for a blob handle, ``tj:<32 hex>`` (``parse_ref`` reads it back).

    Raises:
        InvalidHandle: ``handle`` is not a bare blob handle.
    """
    if not _HANDLE_RE.fullmatch(handle):
        raise InvalidHandle(f"not a blob handle: {_shorten(handle)!r}")
    return "tj:" + handle.removeprefix(HANDLE_PREFIX)


def is_handle(text: str) -> bool:
    """Whether ``text`` is exactly a bare blob handle (``ccr_`` + 32 hex)."""
    return _HANDLE_RE.fullmatch(text) is not None


def is_object_id(text: str) -> bool:
    """Whether ``text`` is exactly a typed object id (``ccr_obj_`` + 32 hex)."""
    return _OBJECT_RE.fullmatch(text) is not None


def parse_ref(ref: str) -> Ref:
    """Parse any accepted reference shape (surrounding whitespace is ignored).

    Raises:
        InvalidHandle: the value is not text, or none of the accepted shapes.
    """
    if not isinstance(ref, str):
        raise InvalidHandle(f"a CCR reference must be text, not {type(ref).__name__}")
    text = ref.strip()
    path: tuple[str, ...] = ()
    if (match := _MARKER_RE.fullmatch(text)) or (match := _HALF_RE.fullmatch(text)):
        handle = match.group(1)
    elif match := _POINTER_RE.fullmatch(text):
        handle = match.group(1)
        path = tuple(unquote(seg) for seg in match.group(2).split("/")[1:])
    elif _ID_RE.fullmatch(text):
        handle = text
    elif match := _TJ_RE.fullmatch(text):
        handle = HANDLE_PREFIX + next(g for g in match.groups() if g)
    elif match := _LEGACY_RE.fullmatch(text):
        handle = HANDLE_PREFIX + match.group(2)
    else:
        raise InvalidHandle(
            f"not a CCR reference: {_shorten(text)!r} (expected ccr_<32 hex>, <<ccr:...>>, ccr:ccr_..., "
            'ccr://<id>[/path], tj:<32 hex> or retrieve_tool_output("<32 hex>"))'
        )
    kind: RefKind = "object" if handle.startswith(OBJECT_PREFIX) else "blob"
    return Ref(handle=handle, kind=kind, path=path)


def find_handles(text: str) -> list[str]:
    """Every handle or object id named in ``text`` (bare or in any marker form, TinyJuice's included).

    De-duplicated, in order of first appearance.
    """
    found = [(m.start(), m.group(0)) for m in _FIND_RE.finditer(text)]
    if "tj:" in text or "retrieve_tool_output" in text:
        found += [(m.start(), HANDLE_PREFIX + (m.group(1) or m.group(3))) for m in _FIND_TJ_RE.finditer(text)]
        found.sort()
    return list(dict.fromkeys(handle for _, handle in found))


def _shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
