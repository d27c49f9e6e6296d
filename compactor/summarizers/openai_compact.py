"""``openai-compact``: OpenAI's ``POST /v1/responses/compact`` writes the summary.

The head goes as Responses ``input`` items (``model``, ``input``, and the
custom ``instructions`` when given); the answer,
``{"object": "response.compaction", "output": [...], "usage": ...}``, holds
the user messages followed by one opaque
``{"type": "compaction", "id", "encrypted_content"}`` item
(https://platform.openai.com/docs/api-reference/responses/compact). Those
output items open the summary message exactly as they came, so that the
Responses adapter sends them back as input in place of the head.

Uses the official ``openai`` SDK (extra ``openai``) for its HTTP client and
errors; the SDK's retries are off, and any failure fails closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from compactor.core.errors import SummarizerError
from compactor.core.messages import ContentBlock, Message, UnknownBlock
from compactor.summarizers._provider import ProviderCompactSummarizer
from compactor.summarizers.openai import OpenAIClient, _error_message
from compactor.summarizers.provider_compaction import COMPACTION_TYPE

__all__ = ["COMPACT_PATH", "OpenAICompactSummarizer"]

COMPACT_PATH = "/responses/compact"
"""The endpoint, under the SDK's base URL (which ends in ``/v1``)."""


class OpenAICompactSummarizer(OpenAIClient, ProviderCompactSummarizer):
    """OpenAI's compaction endpoint as the summarizer.

    Settings, key lookup and errors are ``OpenAIClient``'s;
    ``max_output_tokens`` is checked like the other summarizers' but not sent:
    the endpoint takes no output limit.
    """

    name = "openai-compact"

    def _compact(self, messages: Sequence[Message], instructions: str | None) -> list[ContentBlock]:
        from compactor.adapters.openai_responses import OpenAIResponsesAdapter

        body: dict[str, Any] = {"model": self.model, "input": OpenAIResponsesAdapter().from_messages(messages)}
        if instructions:
            body["instructions"] = instructions
        sdk = self._sdk
        try:
            answer = self._client.post(
                COMPACT_PATH, cast_to=object, body=body, options={"timeout": self.timeout_seconds}
            )
        except sdk.APITimeoutError as exc:
            raise SummarizerError(f"{self.name}: no answer within {self.timeout_seconds:g} s") from exc
        except sdk.APIConnectionError as exc:
            raise SummarizerError(f"{self.name}: could not reach {self._client.base_url}: {exc}") from exc
        except sdk.APIStatusError as exc:
            raise SummarizerError(
                f"{self.name}: the server answered HTTP {exc.status_code}: {_error_message(exc)}"
            ) from exc
        except sdk.OpenAIError as exc:
            raise SummarizerError(f"{self.name}: the request failed: {exc}") from exc
        return compacted_items(answer, self.name)


def compacted_items(answer: Any, name: str) -> list[ContentBlock]:
    """The ``output`` items of a compaction answer, each in a pass-through block, exactly as they came.

    Raises:
        SummarizerError: the answer is not a ``response.compaction`` whose
            output ends with one compaction item holding encrypted content.
    """
    if not isinstance(answer, dict) or answer.get("object") != "response.compaction":
        raise SummarizerError(f"{name}: the answer is not a response.compaction object")
    output = answer.get("output")
    if not isinstance(output, list) or not all(isinstance(item, dict) for item in output):
        raise SummarizerError(f"{name}: the answer has no list of output items")
    compactions = [item for item in output if item.get("type") == COMPACTION_TYPE]
    if (
        len(compactions) != 1
        or output[-1] is not compactions[0]
        or not isinstance(compactions[0].get("encrypted_content"), str)
        or not compactions[0]["encrypted_content"]
    ):
        raise SummarizerError(f"{name}: the answer does not end with one compaction item holding encrypted content")
    return [UnknownBlock.model_validate({"type": "compactor_passthrough", "item": item}) for item in output]
