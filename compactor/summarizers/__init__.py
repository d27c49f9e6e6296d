"""Summarizers: the ``Summarizer`` protocol and its implementations.

``extractive`` (default) is deterministic and offline. ``anthropic`` and
``openai`` call a model through the official SDKs, which are optional extras
imported only when such a summarizer is created.
"""

from __future__ import annotations

from compactor.config import Settings
from compactor.errors import ConfigError
from compactor.summarizers.anthropic import AnthropicSummarizer
from compactor.summarizers.base import SECTION_TITLES, Summarizer, Summary
from compactor.summarizers.extractive import ExtractiveSummarizer
from compactor.summarizers.openai import OpenAISummarizer
from compactor.tokens import make_counter

__all__ = [
    "AnthropicSummarizer",
    "ExtractiveSummarizer",
    "OpenAISummarizer",
    "SECTION_TITLES",
    "Summarizer",
    "Summary",
    "make_summarizer",
]


def make_summarizer(settings: Settings) -> Summarizer:
    """The summarizer ``settings.summarizer`` names, configured from ``settings.llm``.

    Raises:
        ConfigError: an LLM summarizer whose SDK is not installed, or bad LLM settings.
    """
    if settings.summarizer == "extractive":
        return ExtractiveSummarizer(
            facts_tokens=settings.pipeline.summary_facts_tokens, counter=make_counter(settings.counter)
        )
    llm = settings.llm.model_dump(exclude_none=True)
    if settings.summarizer == "anthropic":
        return AnthropicSummarizer(**llm)
    if settings.summarizer == "openai":
        return OpenAISummarizer(**llm)
    raise ConfigError(f"unknown summarizer {settings.summarizer!r}")
