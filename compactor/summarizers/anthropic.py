"""A summarizer that asks a model through the Anthropic Messages API.

Uses the official ``anthropic`` SDK, an optional extra
(``pip install 'context-compactor[anthropic]'``), imported only when a summarizer is
made. The SDK's own retries are off: the only retry is ours, for a request
rejected as too long, and every other failure fails closed.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from compactor.core.errors import ConfigError, SummarizerError
from compactor.summarizers.llm import (
    DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_TIMEOUT_SECONDS,
    LLMClientSummarizer,
    ModelClient,
    PromptTooLong,
    SummaryRequest,
    resolve_api_key,
)

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "PROVIDER_KEY_ENV", "AnthropicClient", "AnthropicSummarizer"]

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
"""The model asked when none is configured."""

PROVIDER_KEY_ENV = "ANTHROPIC_API_KEY"
"""The SDK's own key variable, read after ``COMPACTOR_LLM_API_KEY``."""

_TOO_LONG = "prompt is too long"


def _sdk() -> ModuleType:
    try:
        return importlib.import_module("anthropic")
    except ImportError as exc:
        raise ConfigError(
            "the anthropic summarizer needs the anthropic package: pip install 'context-compactor[anthropic]'"
        ) from exc


def make_client(
    summarizer: str, *, api_key: str | None, api_key_env: str | None, base_url: str | None, timeout: float
) -> tuple[ModuleType, anthropic.Anthropic]:
    """The SDK and a client for ``summarizer``, with the key found as the summarizers document it.

    Raises:
        ConfigError: the ``anthropic`` package is missing, or no API key is found.
    """
    key = resolve_api_key(api_key, provider_env=PROVIDER_KEY_ENV, api_key_env=api_key_env)
    if key is None:
        raise ConfigError(
            f"the {summarizer} summarizer has no API key: set {PROVIDER_KEY_ENV} or COMPACTOR_LLM_API_KEY"
        )
    sdk = _sdk()
    return sdk, sdk.Anthropic(api_key=key, base_url=base_url, timeout=timeout, max_retries=0)


class AnthropicClient(ModelClient):
    """An Anthropic SDK client under ``ModelClient``'s checked settings: what the
    ``anthropic`` and ``anthropic-compact`` summarizers share.

    ``base_url`` defaults to the SDK's (``ANTHROPIC_BASE_URL`` or the public
    API). The key comes from ``api_key``, else the variable named by
    ``api_key_env``, else ``COMPACTOR_LLM_API_KEY``, else ``ANTHROPIC_API_KEY``.

    Raises:
        ConfigError: the ``anthropic`` package is missing, no API key is
            found, or the timeout or output budget is out of range.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_ANTHROPIC_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
    ) -> None:
        super().__init__(model=model, timeout_seconds=timeout_seconds, max_output_tokens=max_output_tokens)
        self._sdk, self._client = make_client(
            self.name, api_key=api_key, api_key_env=api_key_env, base_url=base_url, timeout=self.timeout_seconds
        )

    def _close(self) -> None:
        self._client.close()


class AnthropicSummarizer(AnthropicClient, LLMClientSummarizer):
    """Summarizes through the Anthropic Messages API (or a server speaking it).

    Settings, key lookup and errors are ``AnthropicClient``'s.
    """

    name = "anthropic"

    def _send(self, request: SummaryRequest) -> str:
        sdk = self._sdk
        try:
            response = self._client.messages.create(
                model=self.model,
                max_tokens=self.max_output_tokens,
                system=request.system,
                messages=[{"role": "user", "content": request.prompt}],
                timeout=self.timeout_seconds,
            )
        except sdk.APITimeoutError as exc:
            raise SummarizerError(f"anthropic: no answer within {self.timeout_seconds:g} s") from exc
        except sdk.APIConnectionError as exc:
            raise SummarizerError(f"anthropic: could not reach {self._client.base_url}: {exc}") from exc
        except sdk.APIStatusError as exc:
            detail = _error_message(exc)
            if _is_too_long(exc.status_code, exc.body, detail):
                raise PromptTooLong(detail) from exc
            raise SummarizerError(f"anthropic: the server answered HTTP {exc.status_code}: {detail}") from exc
        except sdk.AnthropicError as exc:
            raise SummarizerError(f"anthropic: the request failed: {exc}") from exc
        return _answer_text(response)


def _error_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    if isinstance(body, str) and body.strip():
        return body.strip()
    return str(exc.message)


def _is_too_long(status: int, body: object, message: str) -> bool:
    """A 400 ``invalid_request_error`` saying the prompt is too long, or a 413 (request too large)."""
    if status == 413:
        return True
    if status != 400 or _TOO_LONG not in message.lower():
        return False
    error = body.get("error") if isinstance(body, dict) else None
    kind = error.get("type") if isinstance(error, dict) else None
    return kind in (None, "invalid_request_error")


def _answer_text(response: object) -> str:
    """The text blocks of a Messages response, joined.

    Raises:
        SummarizerError: the response holds no text (wrong shape, refusal).
    """
    content = getattr(response, "content", None)
    if not isinstance(content, list):
        raise SummarizerError("anthropic: the response has no content list")
    texts = [block.text for block in content if getattr(block, "type", None) == "text" and isinstance(block.text, str)]
    text = "".join(texts)
    if not text.strip():
        stop = getattr(response, "stop_reason", None)
        raise SummarizerError(f"anthropic: the response holds no text (stop reason {stop!r})")
    return text
