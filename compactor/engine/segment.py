"""``TranscriptSegment``: the part of a transcript a compaction stored, as its report and the hooks name it.

Apart from ``compactor.engine.report`` (which re-exports it) so that the
pre-compact hook, which records segments, does not define every report
model on its way.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["TranscriptSegment"]


class TranscriptSegment(BaseModel):
    """A transcript's own lines, stored byte-exact in CCR before a compaction (``compactor restore``).

    Lines ``first_line`` to ``last_line`` (1-based, inclusive): everything the
    file gained since the previous compaction's segment, so segments 1..N
    joined are the file as it stood when compaction N happened.
    """

    model_config = ConfigDict(extra="forbid")

    handle: str
    first_line: int
    last_line: int
    bytes: int
