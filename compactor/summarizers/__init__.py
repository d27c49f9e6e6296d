"""Summarizers: the ``Summarizer`` protocol and its implementations.

``extractive`` (default) is deterministic and offline. ``anthropic`` and
``openai`` call a model through the official SDKs, which are optional extras
imported only when such a summarizer is created. ``anthropic-compact`` and
``openai-compact`` have the provider compact the head itself (Anthropic's
on-demand compaction, OpenAI's ``/v1/responses/compact``) and carry its
compaction verbatim.

Public names are imported on first use (``_EXPORTS``): importing a helper
module of this package (``compactor.engine.survival`` uses ``facts``, and every
report uses ``compactor.engine.survival``) must not load the summarizers, their
templates (jinja2) and their HTTP clients.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ccr.lazy import lazy_exports as _lazy_exports
from compactor.core.errors import ConfigError

if TYPE_CHECKING:
    from compactor.core.config import Settings
    from compactor.summarizers.anthropic import AnthropicSummarizer
    from compactor.summarizers.anthropic_compact import AnthropicCompactSummarizer
    from compactor.summarizers.base import SECTION_TITLES, Summarizer, Summary
    from compactor.summarizers.extractive import ExtractiveSummarizer
    from compactor.summarizers.openai import OpenAISummarizer
    from compactor.summarizers.openai_compact import OpenAICompactSummarizer

__all__ = [
    "AnthropicCompactSummarizer",
    "AnthropicSummarizer",
    "ExtractiveSummarizer",
    "OpenAICompactSummarizer",
    "OpenAISummarizer",
    "SECTION_TITLES",
    "Summarizer",
    "Summary",
    "make_summarizer",
]

_EXPORTS: dict[str, str] = {
    "AnthropicCompactSummarizer": "compactor.summarizers.anthropic_compact",
    "AnthropicSummarizer": "compactor.summarizers.anthropic",
    "ExtractiveSummarizer": "compactor.summarizers.extractive",
    "OpenAICompactSummarizer": "compactor.summarizers.openai_compact",
    "OpenAISummarizer": "compactor.summarizers.openai",
    "SECTION_TITLES": "compactor.summarizers.base",
    "Summarizer": "compactor.summarizers.base",
    "Summary": "compactor.summarizers.base",
}
"""Public name -> module defining it (add a line here with each new export)."""


__getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS, __all__)


def make_summarizer(settings: Settings) -> Summarizer:
    """The summarizer ``settings.summarizer`` names, configured from ``settings.llm``.

    Raises:
        ConfigError: an LLM summarizer whose SDK is not installed, or bad LLM settings.
    """
    from compactor.core.tokens import make_counter

    if settings.summarizer == "extractive":
        from compactor.summarizers.extractive import ExtractiveSummarizer

        return ExtractiveSummarizer(
            facts_tokens=settings.pipeline.summary_facts_tokens, counter=make_counter(settings.counter)
        )
    llm = settings.llm.model_dump(exclude_none=True)
    if settings.summarizer == "anthropic":
        from compactor.summarizers.anthropic import AnthropicSummarizer

        return AnthropicSummarizer(**llm)
    if settings.summarizer == "openai":
        from compactor.summarizers.openai import OpenAISummarizer

        return OpenAISummarizer(**llm)
    if settings.summarizer == "anthropic-compact":
        from compactor.summarizers.anthropic_compact import AnthropicCompactSummarizer

        return AnthropicCompactSummarizer(**llm)
    if settings.summarizer == "openai-compact":
        from compactor.summarizers.openai_compact import OpenAICompactSummarizer

        return OpenAICompactSummarizer(**llm)
    raise ConfigError(f"unknown summarizer {settings.summarizer!r}")
