"""Typed objects: structured observations the store keeps alongside raw blobs.

A typed object is a JSON value of one of a closed set of types (a file
observation, a test result, ...). Its id is ``ccr_obj_`` + 32 hex of the
sha256 over its type, session id, source, repository state and content hash,
so the same observation in the same repository state gets the same id.

Two states are kept outside the identity and change only through explicit
store calls, never as a side effect of storing again:

- currentness: ``current`` -> ``stale`` / ``archived`` (is it still true?)
- lifecycle: ``hot`` / ``warm`` / ``cold`` / ``archived`` (how close to hand?)

``select`` resolves a ``ccr://`` field path inside any JSON value; a
segment that selects nothing is an error, never a guess.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ccr.errors import InvalidRequest, InvalidSelector, UnknownObjectType
from ccr.handles import OBJECT_PREFIX

__all__ = [
    "CURRENTNESS",
    "Currentness",
    "LIFECYCLES",
    "Lifecycle",
    "OBJECT_TYPES",
    "ObjectType",
    "StoredObject",
    "TypedObject",
    "canonical_json",
    "check_state",
    "content_hash",
    "make_object",
    "object_id",
    "render_selection",
    "select",
]

ObjectType = Literal[
    "file_observation",
    "search_result",
    "command_result",
    "test_result",
    "build_result",
    "diff_snapshot",
    "task_contract",
    "task_decision",
    "execution_state",
    "documentation_excerpt",
    "browser_snapshot",
    "repository_map",
    "evidence_bundle",
]
Currentness = Literal["current", "stale", "archived"]
Lifecycle = Literal["hot", "warm", "cold", "archived"]

OBJECT_TYPES: frozenset[str] = frozenset(get_args(ObjectType))
CURRENTNESS: frozenset[str] = frozenset(get_args(Currentness))
LIFECYCLES: frozenset[str] = frozenset(get_args(Lifecycle))


def canonical_json(value: Any) -> bytes:
    """The canonical UTF-8 JSON form hashed for ids: sorted keys, no spaces.

    Raises:
        InvalidRequest: the value is not JSON-serializable (or holds NaN/infinity).
    """
    try:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest(f"not a JSON value: {exc}") from exc
    return text.encode("utf-8")


def content_hash(content: Any) -> str:
    """sha256 hex of the content's canonical JSON."""
    return hashlib.sha256(canonical_json(content)).hexdigest()


class TypedObject(BaseModel):
    """An observation to store; its id follows from its identity fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: ObjectType
    session_id: str
    source: str
    repo_state: str = ""
    content: JsonValue

    @property
    def content_hash(self) -> str:
        return content_hash(self.content)

    @property
    def id(self) -> str:
        return object_id(self.type, self.session_id, self.source, self.repo_state, self.content_hash)


class StoredObject(BaseModel):
    """A typed object as the store holds it, with its current states."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    type: ObjectType
    session_id: str
    source: str
    repo_state: str
    content_hash: str
    content: JsonValue
    currentness: Currentness = "current"
    lifecycle: Lifecycle = "hot"
    created_at: datetime
    updated_at: datetime

    def document(self) -> dict[str, Any]:
        """The JSON value a ``ccr://`` pointer selects into."""
        return self.model_dump(mode="json")


def object_id(type: str, session_id: str, source: str, repo_state: str, content_sha256: str) -> str:
    """``ccr_obj_`` + 32 hex of sha256 over the identity fields."""
    identity = canonical_json([type, session_id, source, repo_state, content_sha256])
    return OBJECT_PREFIX + hashlib.sha256(identity).hexdigest()[:32]


def make_object(type: str, *, session_id: str, source: str, content: Any, repo_state: str = "") -> TypedObject:
    """Build a ``TypedObject``, refusing types outside the closed set.

    Raises:
        UnknownObjectType: ``type`` is not one of ``OBJECT_TYPES``.
        InvalidRequest: another field is invalid (content not JSON, ...).
    """
    if type not in OBJECT_TYPES:
        raise UnknownObjectType(f"unknown object type {type!r}; known: {', '.join(sorted(OBJECT_TYPES))}")
    canonical_json(content)
    try:
        return TypedObject.model_validate(
            {
                "type": type,
                "session_id": session_id,
                "source": source,
                "repo_state": repo_state,
                "content": content,
            }
        )
    except ValidationError as exc:
        raise InvalidRequest(f"invalid typed object: {exc}") from exc


def check_state(currentness: str | None = None, lifecycle: str | None = None) -> None:
    """Validate state names before any write.

    Raises:
        InvalidRequest: a value is not one of the known states.
    """
    if currentness is not None and currentness not in CURRENTNESS:
        raise InvalidRequest(f"unknown currentness {currentness!r}; known: {sorted(CURRENTNESS)}")
    if lifecycle is not None and lifecycle not in LIFECYCLES:
        raise InvalidRequest(f"unknown lifecycle {lifecycle!r}; known: {sorted(LIFECYCLES)}")


def select(value: Any, path: tuple[str, ...]) -> Any:
    """The field or subtree of ``value`` that ``path`` names.

    A segment selects a key of an object, or a decimal index (no sign, no
    leading zeros) of an array.

    Raises:
        InvalidSelector: a segment names no key or index of the value it is applied to.
    """
    current = value
    for depth, segment in enumerate(path):
        where = "/" + "/".join(path[: depth + 1])
        if isinstance(current, dict):
            if segment not in current:
                raise InvalidSelector(f"no field {segment!r} at {where}")
            current = current[segment]
        elif isinstance(current, list):
            if not _is_index(segment) or int(segment) >= len(current):
                raise InvalidSelector(f"{segment!r} is not an index of the {len(current)}-item array at {where}")
            current = current[int(segment)]
        else:
            raise InvalidSelector(f"cannot select {segment!r} inside a {_kind(current)} at {where}")
    return current


def render_selection(value: Any) -> bytes:
    """A selected value as bytes: strings as their UTF-8 text, anything else as JSON."""
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


def _is_index(segment: str) -> bool:
    return segment.isascii() and segment.isdigit() and (segment == "0" or not segment.startswith("0"))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return "string" if isinstance(value, str) else type(value).__name__
