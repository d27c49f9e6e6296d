"""What the provider summarizers share: the provider compacts the head, the ledger rides along.

``anthropic-compact`` and ``openai-compact`` do not ask a model for text:
they ask the provider's own compaction endpoint for its compaction of the
head (``compactor.summarizers.provider_compaction`` cites the formats), and the summary
message carries what it returned verbatim, first, as the provider wants it
sent back. The session ledger's facts follow as the summary's text, so that
no path, command or error rests on an opaque blob.

Any failure (HTTP error, timeout, refused connection, an answer with no
compaction) is a ``SummarizerError``: the pipeline then fails closed, with
every byte of the head still stored before anything is dropped.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from compactor.core.errors import SummarizerError
from compactor.core.ledger import SessionLedger
from compactor.core.messages import ContentBlock, Message
from compactor.engine.spans import Span
from compactor.summarizers.base import Summary
from compactor.summarizers.llm import ModelClient

__all__ = ["ProviderCompactSummarizer"]


class ProviderCompactSummarizer(ModelClient):
    """A summarizer whose summary is the provider's own compaction of the head.

    ``reads_provider_blocks`` tells the pipeline to hand it the head from the
    last provider compaction on, block included: the provider compacts its own
    earlier compaction again, and the new one replaces it.

    Raises:
        ConfigError: the timeout or output budget is out of range, or the
            model name is empty.
    """

    reads_provider_blocks = True

    def summarize(
        self,
        messages: Sequence[Message],
        instructions: str | None = None,
        *,
        spans: Sequence[Span] | None = None,
        cwd: str | None = None,
        ledger: SessionLedger | None = None,
        tail: Sequence[Message] = (),
    ) -> Summary:
        """The provider's compaction of ``messages`` (``provider_blocks``); the pipeline adds the index.

        Raises:
            SummarizerError: nothing to compact, or the provider failed or
                answered without a compaction.
        """
        if not messages:
            raise SummarizerError(f"{self.name}: there is nothing to compact")
        blocks = self._compact(messages, instructions.strip() if instructions and instructions.strip() else None)
        return Summary(text="", summarizer=self.name, provider_blocks=blocks)

    @abstractmethod
    def _compact(self, messages: Sequence[Message], instructions: str | None) -> list[ContentBlock]:
        """One compaction request; the blocks to send back, verbatim (raises ``SummarizerError``)."""
