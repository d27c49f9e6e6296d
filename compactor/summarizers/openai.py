"""A summarizer that asks a model through an OpenAI-compatible chat completions API.

Uses the official ``openai`` SDK, an optional extra
(``pip install 'context-compactor[openai]'``), imported only when a summarizer is
made. Besides OpenAI itself it covers local servers that speak the same
protocol (Ollama, vLLM, llama.cpp) through ``base_url``, for example
``http://127.0.0.1:11434/v1``. The SDK's own retries are off: the only retry
is ours, for a request rejected as too long, and every other failure fails
closed.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

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
    import openai

__all__ = ["DEFAULT_OPENAI_MODEL", "LOCAL_SERVER_KEY", "PROVIDER_KEY_ENV", "OpenAIClient", "OpenAISummarizer"]

DEFAULT_OPENAI_MODEL = "gpt-5.4-mini"
"""The model asked when none is configured (a local server needs its own model name)."""

PROVIDER_KEY_ENV = "OPENAI_API_KEY"
"""The SDK's own key variable, read after ``COMPACTOR_LLM_API_KEY``."""

LOCAL_SERVER_KEY = "no-key"
"""Key sent to a custom ``base_url`` when none is configured: local servers ignore it."""

TokenField = Literal["max_tokens", "max_completion_tokens"]

_TOO_LONG_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
_TOO_LONG_PHRASES = (
    "maximum context length",
    "context length exceeded",
    "exceeds the available context size",
    "context window",
)


def _sdk() -> ModuleType:
    try:
        return importlib.import_module("openai")
    except ImportError as exc:
        raise ConfigError(
            "the openai summarizer needs the openai package: pip install 'context-compactor[openai]'"
        ) from exc


def make_client(
    summarizer: str, *, api_key: str | None, api_key_env: str | None, base_url: str | None, timeout: float
) -> tuple[ModuleType, openai.OpenAI]:
    """The SDK and a client for ``summarizer``, with the key found as the summarizers document it (a
    placeholder for a custom ``base_url`` with no key: local servers ignore it).

    Raises:
        ConfigError: the ``openai`` package is missing, or no API key is found for OpenAI's own API.
    """
    key = resolve_api_key(api_key, provider_env=PROVIDER_KEY_ENV, api_key_env=api_key_env)
    if key is None:
        if base_url is None:
            raise ConfigError(
                f"the {summarizer} summarizer has no API key: set {PROVIDER_KEY_ENV} or COMPACTOR_LLM_API_KEY"
            )
        key = LOCAL_SERVER_KEY
    sdk = _sdk()
    options: dict[str, Any] = {"api_key": key, "timeout": timeout, "max_retries": 0}
    if base_url is not None:
        options["base_url"] = base_url
    return sdk, sdk.OpenAI(**options)


class OpenAIClient(ModelClient):
    """An OpenAI SDK client under ``ModelClient``'s checked settings: what the
    ``openai`` and ``openai-compact`` summarizers share.

    ``base_url`` defaults to the SDK's (``OPENAI_BASE_URL`` or OpenAI's API).
    The key comes from ``api_key``, else the variable named by
    ``api_key_env``, else ``COMPACTOR_LLM_API_KEY``, else ``OPENAI_API_KEY``;
    with a custom ``base_url`` and no key at all, a placeholder is sent.

    Raises:
        ConfigError: the ``openai`` package is missing, no API key is found
            for OpenAI's own API, or the timeout or output budget is out of range.
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_OPENAI_MODEL,
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


class OpenAISummarizer(OpenAIClient, LLMClientSummarizer):
    """Summarizes through an OpenAI-compatible chat completions endpoint.

    Settings, key lookup and errors are ``OpenAIClient``'s; besides them,
    ``token_field`` names the output limit field: OpenAI's current
    ``max_completion_tokens`` by default, the older ``max_tokens`` that local
    servers understand when a ``base_url`` is given.

    Raises:
        ConfigError: ``token_field`` is neither of those, or as ``OpenAIClient``.
    """

    name = "openai"

    def __init__(
        self,
        *,
        model: str = DEFAULT_OPENAI_MODEL,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS,
        token_field: TokenField | None = None,
    ) -> None:
        if token_field not in (None, "max_tokens", "max_completion_tokens"):
            raise ConfigError(f"token_field must be max_tokens or max_completion_tokens, not {token_field!r}")
        super().__init__(
            model=model,
            base_url=base_url,
            api_key=api_key,
            api_key_env=api_key_env,
            timeout_seconds=timeout_seconds,
            max_output_tokens=max_output_tokens,
        )
        self.token_field: TokenField = token_field or ("max_completion_tokens" if base_url is None else "max_tokens")

    def _send(self, request: SummaryRequest) -> str:
        sdk = self._sdk
        limit: dict[str, Any] = {self.token_field: self.max_output_tokens}
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": request.system},
                    {"role": "user", "content": request.prompt},
                ],
                timeout=self.timeout_seconds,
                **limit,
            )
        except sdk.APITimeoutError as exc:
            raise SummarizerError(f"openai: no answer within {self.timeout_seconds:g} s") from exc
        except sdk.APIConnectionError as exc:
            raise SummarizerError(f"openai: could not reach {self._client.base_url}: {exc}") from exc
        except sdk.APIStatusError as exc:
            detail = _error_message(exc)
            if _is_too_long(exc.status_code, exc.code, detail):
                raise PromptTooLong(detail) from exc
            raise SummarizerError(f"openai: the server answered HTTP {exc.status_code}: {detail}") from exc
        except sdk.OpenAIError as exc:
            raise SummarizerError(f"openai: the request failed: {exc}") from exc
        return _answer_text(response)


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    if isinstance(error, str):
        return error
    return str(exc.message)


def _is_too_long(status: int, code: str | None, message: str) -> bool:
    """A 400 whose code or message says the prompt exceeds the model's context."""
    if status == 413:
        return True
    if status != 400:
        return False
    lowered = message.lower()
    return code in _TOO_LONG_CODES or any(phrase in lowered for phrase in _TOO_LONG_PHRASES)


def _answer_text(response: object) -> str:
    """The first choice's message text.

    Raises:
        SummarizerError: the response has no choices or no text.
    """
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise SummarizerError("openai: the response has no choices")
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if not isinstance(text, str) or not text.strip():
        reason = getattr(choices[0], "finish_reason", None)
        raise SummarizerError(f"openai: the response holds no text (finish reason {reason!r})")
    return text
