"""Loaded by the lm-eval process inferbench starts (first on its PYTHONPATH).

Reasoning models answer in the message's `reasoning_content` (SGLang, older vLLM) or
`reasoning` (newer vLLM) and leave `content` empty; lm-eval's chat-completions client reads
only `content`, so every such answer scored zero. InferenceX patches lm-eval the same way
(its `utils/evals/patches/lm_eval_sitecustomize.py`, which inferbench uses instead of this
file when a tree is given). Written to fail soft: another lm-eval keeps its own behaviour.
"""

from __future__ import annotations

from typing import Any


def _install() -> None:
    try:
        from lm_eval.models.openai_completions import (  # type: ignore[import-untyped]
            LocalChatCompletion,
        )
    except Exception:  # lm-eval absent or reorganised: leave it alone
        return
    original = LocalChatCompletion.parse_generations

    def parse_generations(*args: Any, **kwargs: Any) -> Any:
        outputs = kwargs.get("outputs", args[-1] if args else None)
        for out in outputs if isinstance(outputs, list) else [outputs]:
            choices = out.get("choices") if isinstance(out, dict) else None
            for choice in choices if isinstance(choices, list) else []:
                message = choice.get("message") if isinstance(choice, dict) else None
                if isinstance(message, dict) and message.get("content") in (None, "", []):
                    reasoning = message.get("reasoning_content") or message.get("reasoning")
                    if reasoning:
                        message["content"] = reasoning
        return original(*args, **kwargs)

    LocalChatCompletion.parse_generations = parse_generations


_install()
