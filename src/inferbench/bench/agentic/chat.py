"""Chat-text mode: each conversation sent as chat messages, as InferenceX's aiperf scenario
sends it (`/v1/chat/completions`, text messages, streamed).

Every stream (the root conversation, each subagent) keeps its history: the user turns and
the assistant's recorded answers (aiperf's pre-canned mode: the trace's output, not the
server's, is what the next turn carries). Turn k's prompt ids repeat the history's ids and
add new ones: the first `output of turn k-1` of them are the assistant's answer, the rest the
new user message. Where a prompt does not continue the history, the history is kept up to
the last assistant message the prompt still repeats and the rest becomes one user message,
so roles always alternate. A message's text is made once (its ids decoded with the
tokenizer, re-encoded towards the same token count) and then sent verbatim, so the server
sees the same prefix turn after turn and its prefix cache can serve it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from inferbench.bench.datasets import load_tokenizer, text_of_length

# what a chat template adds around each message, beyond the fixed slack of a chat prompt
_TEMPLATE_TOKENS_PER_MESSAGE = 8
_CHAT_SLACK = 64


def chat_prompt_slack(messages: int) -> int:
    """Tokens the server may count beyond the ids' length: the chat template's framing."""
    return _CHAT_SLACK + _TEMPLATE_TOKENS_PER_MESSAGE * messages


class TextOfIds:
    """Token ids to text with a local tokenizer (the same ids always give the same text)."""

    def __init__(self, tokenizer: Path) -> None:
        self.tokenizer = tokenizer
        self._tok = load_tokenizer(tokenizer)

    def __call__(self, ids: np.ndarray) -> str:
        digest = hashlib.blake2b(np.ascontiguousarray(ids).tobytes(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        text, _ = text_of_length(self._tok, ids, len(ids), rng)
        return text


@dataclass(frozen=True, slots=True)
class _Message:
    role: str
    ids: np.ndarray
    text: str


class ChatConversation:
    """One stream's messages; `messages(ids, output)` per turn, in order."""

    def __init__(self, text: TextOfIds) -> None:
        self._text = text
        self.history: list[_Message] = []
        self._last_output = 0

    def _add(self, role: str, ids: np.ndarray) -> None:
        self.history.append(_Message(role, ids, self._text(ids)))

    def _repeated(self, ids: np.ndarray) -> tuple[int, int]:
        """How many history messages the prompt repeats from its start, and their tokens."""
        kept = offset = 0
        for m in self.history:
            end = offset + len(m.ids)
            if end > len(ids) or not np.array_equal(ids[offset:end], m.ids):
                break
            kept, offset = kept + 1, end
        return kept, offset

    def messages(self, ids: np.ndarray, output: int) -> list[dict[str, str]]:
        """The messages of the turn whose whole prompt is `ids` (and which asks `output`)."""
        kept, offset = self._repeated(ids)
        rest = len(ids) - offset
        if self.history and kept == len(self.history) and rest > 1:
            answer = min(self._last_output, rest - 1)
            if answer > 0:
                self._add("assistant", ids[offset : offset + answer])
            self._add("user", ids[offset + answer :])
        else:
            while kept and self.history[kept - 1].role != "assistant":
                kept -= 1
                offset -= len(self.history[kept].ids)
            del self.history[kept:]
            self._add("user", ids[offset:])
        self._last_output = output
        return [{"role": m.role, "content": m.text} for m in self.history]
