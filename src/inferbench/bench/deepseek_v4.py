"""DeepSeek-V4's prompt framing for one user turn (sa-bench's `--dsv4`).

DeepSeek-V4 ships no Jinja chat template: its reference message encoder (used by
sa-bench's `--dsv4` and by vLLM's `--tokenizer-mode deepseek_v4`) frames a conversation
with special tokens. A conversation starts with BOS; a user turn is `<｜User｜>` and the
text; the turn that asks for a reply ends with `<｜Assistant｜>` and, in thinking mode,
`<think>` to open the reasoning (`</think>` in chat mode, which skips it). sa-bench wraps
each random prompt as the only user turn of a conversation, in thinking mode.
"""

from __future__ import annotations

BOS = "<\uff5cbegin\u2581of\u2581sentence\uff5c>"
EOS = "<\uff5cend\u2581of\u2581sentence\uff5c>"
USER = "<\uff5cUser\uff5c>"
ASSISTANT = "<\uff5cAssistant\uff5c>"
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

# The framing tokens; DeepSeek-V4's tokenizer.json holds each as one added token.
SPECIAL_TOKENS = (BOS, EOS, USER, ASSISTANT, THINK_OPEN, THINK_CLOSE)


def user_turn(content: str, *, thinking: bool = True) -> str:
    """One user message as a whole conversation, ready for the assistant's reply."""
    return f"{BOS}{USER}{content}{ASSISTANT}{THINK_OPEN if thinking else THINK_CLOSE}"
