"""OpenAI-protocol request parsing and response shapes, as vLLM sends them."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

# Without a tokenizer a text prompt is counted as one token per 4 characters
# (the usual English average for BPE vocabularies); token-id prompts are exact.
CHARS_PER_TOKEN = 4
CHAT_TOKENS_PER_MESSAGE = 4  # role and separator tokens a chat template adds


class RequestError(Exception):
    """A request the server refuses, with the HTTP status and vLLM's error type."""

    def __init__(self, status: int, message: str, kind: str = "BadRequestError") -> None:
        super().__init__(message)
        self.status, self.message, self.kind = status, message, kind


def error_body(status: int, message: str, kind: str) -> dict[str, Any]:
    """vLLM's error response: {"error": {"message", "type", "param", "code"}}."""
    return {"error": {"message": message, "type": kind, "param": None, "code": status}}


def text_tokens(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


@dataclass(frozen=True)
class ParsedRequest:
    chat: bool
    model: str
    prompt_tokens: int
    max_tokens: int
    stream: bool
    include_usage: bool
    continuous_usage: bool


def _int_field(body: dict[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise RequestError(400, f"{name} must be a positive integer, got {value!r}")
    return value


def _token_ids(values: list[Any]) -> bool:
    """A list of token ids (checked at C speed: 1k-token prompts arrive by the thousand)."""
    try:
        return bool(values) and isinstance(values[0], int) and sum(values) >= 0
    except TypeError:
        return False


def _prompt_tokens(body: dict[str, Any], chat: bool) -> int:
    if chat:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError(400, "messages must be a non-empty list")
        total = 0
        for message in messages:
            content = message.get("content") if isinstance(message, dict) else None
            if isinstance(content, list):  # content parts
                content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            total += text_tokens(str(content or "")) + CHAT_TOKENS_PER_MESSAGE
        return total
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        return text_tokens(prompt)
    if isinstance(prompt, list) and prompt and _token_ids(prompt):
        return len(prompt)
    if isinstance(prompt, list) and len(prompt) == 1:
        inner = prompt[0]
        if isinstance(inner, str):
            return text_tokens(inner)
        if isinstance(inner, list) and inner and _token_ids(inner):
            return len(inner)
    raise RequestError(
        400, "prompt must be a string, a list of token ids, or a list of one of those"
    )


def parse_request(body: Any, *, chat: bool, max_model_len: int) -> ParsedRequest:
    if not isinstance(body, dict):
        raise RequestError(400, "request body must be a JSON object")
    prompt = _prompt_tokens(body, chat)
    if body.get("n", 1) != 1:
        raise RequestError(400, "only n=1 is supported by the simulator")
    asked = _int_field(body, "max_completion_tokens") if chat else None
    asked = asked or _int_field(body, "max_tokens")
    max_tokens = asked or (max(max_model_len - prompt, 1) if chat else 16)
    if prompt + max_tokens > max_model_len:
        raise RequestError(
            400,
            f"This model's maximum context length is {max_model_len} tokens. However, you "
            f"requested {prompt + max_tokens} tokens ({prompt} in the messages, {max_tokens} in "
            f"the completion). Please reduce the length of the messages or completion.",
        )
    options = body.get("stream_options") or {}
    stream = bool(body.get("stream", False))
    return ParsedRequest(
        chat=chat,
        model=str(body.get("model", "")),
        prompt_tokens=prompt,
        max_tokens=max_tokens,
        stream=stream,
        include_usage=stream and bool(options.get("include_usage")),
        continuous_usage=stream and bool(options.get("continuous_usage_stats")),
    )


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def filler(count: int) -> str:
    """The generated text: one short word per token (the simulator has no vocabulary)."""
    return " tok" * count


def stream_chunk(
    req: ParsedRequest,
    rid: str,
    model: str,
    *,
    text: str | None,
    role: bool = False,
    finish: str | None = None,
    usage_now: dict[str, int] | None = None,
) -> dict[str, Any]:
    created = int(time.time())
    if req.chat:
        delta: dict[str, Any] = {"role": "assistant", "content": ""} if role else {"content": text}
        choice: dict[str, Any] = {
            "index": 0,
            "delta": delta,
            "logprobs": None,
            "finish_reason": finish,
        }
        out: dict[str, Any] = {
            "id": rid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [choice],
        }
    else:
        choice = {
            "index": 0,
            "text": text or "",
            "logprobs": None,
            "finish_reason": finish,
            "stop_reason": None,
        }
        out = {
            "id": rid,
            "object": "text_completion",
            "created": created,
            "model": model,
            "choices": [choice],
        }
    if usage_now is not None:
        out["usage"] = usage_now
    return out


def usage_chunk(req: ParsedRequest, rid: str, model: str, use: dict[str, int]) -> dict[str, Any]:
    kind = "chat.completion.chunk" if req.chat else "text_completion"
    return {
        "id": rid,
        "object": kind,
        "created": int(time.time()),
        "model": model,
        "choices": [],
        "usage": use,
    }


def full_response(req: ParsedRequest, rid: str, model: str, completion: int) -> dict[str, Any]:
    created = int(time.time())
    use = usage(req.prompt_tokens, completion)
    if req.chat:
        message = {"role": "assistant", "content": filler(completion)}
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "logprobs": None,
            "finish_reason": "length",
        }
        return {
            "id": rid,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [choice],
            "usage": use,
        }
    choice = {
        "index": 0,
        "text": filler(completion),
        "logprobs": None,
        "finish_reason": "length",
        "stop_reason": None,
    }
    return {
        "id": rid,
        "object": "text_completion",
        "created": created,
        "model": model,
        "choices": [choice],
        "usage": use,
    }
