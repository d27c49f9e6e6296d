"""Attachment and AttachmentSet: the messages restored after a compaction, with their report entries."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from attachments.entries import AttachmentEntry, AttachmentType, SkippedEntry
from attachments.messages import Message

__all__ = ["Attachment", "AttachmentSet"]


class Attachment(BaseModel):
    """One attachment message and what it restored.

    ``message`` is a user-role meta message whose text is wrapped in
    ``<system-reminder>`` tags; ``tokens`` is that text's count. ``entries``
    are the report entries: one per item, so a message holding several skills
    has one entry per skill.
    """

    model_config = ConfigDict(extra="forbid")

    type: AttachmentType
    message: Message
    tokens: int
    entries: list[AttachmentEntry] = Field(default_factory=list)


class AttachmentSet(BaseModel):
    """Every attachment of one compaction, in order, and the candidates left out."""

    model_config = ConfigDict(extra="forbid")

    attachments: list[Attachment] = Field(default_factory=list)
    skipped: list[SkippedEntry] = Field(default_factory=list)

    @property
    def messages(self) -> list[Message]:
        """The messages to append after the preserved tail, in order."""
        return [a.message for a in self.attachments]

    @property
    def entries(self) -> list[AttachmentEntry]:
        """The report's ``attachments`` list."""
        return [entry for a in self.attachments for entry in a.entries]

    @property
    def tokens(self) -> int:
        """Tokens of all attachment messages together."""
        return sum(a.tokens for a in self.attachments)

    def of_type(self, kind: AttachmentType) -> list[Attachment]:
        """The attachments of one type, in order."""
        return [a for a in self.attachments if a.type == kind]
