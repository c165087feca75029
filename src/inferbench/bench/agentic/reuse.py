"""Client-side prefix reuse: how many prompt tokens repeat the start of an earlier prompt.

Prompts are segment lists whose token content is prefix-stable (`tokens.py`), so the
longest common prefix of two prompts is found segment by segment: a trie keyed by segment
key holds, at each node, the longest run of that segment sent at that position. A prompt's
reused tokens are its longest common prefix with any earlier prompt of the same salt scope,
which is what an unbounded, never-evicting prefix cache could serve (tokens, not blocks).
"""

from __future__ import annotations

from collections.abc import Sequence

from inferbench.bench.traces.model import Segment


class _Node:
    __slots__ = ("children", "longest")

    def __init__(self) -> None:
        self.longest = 0
        self.children: dict[int, _Node] = {}


class PrefixTrie:
    def __init__(self) -> None:
        self.root = _Node()

    def reuse_and_add(self, prompt: Sequence[Segment]) -> int:
        """Tokens of `prompt` shared with an earlier prompt; then remember `prompt`."""
        shared = 0
        matching = True
        node = self.root
        for seg in prompt:
            child = node.children.get(seg.key)
            if child is None:
                child = node.children[seg.key] = _Node()
                matching = False
            elif matching:
                shared += min(seg.length, child.longest)
                if child.longest < seg.length:
                    matching = False
            child.longest = max(child.longest, seg.length)
            node = child
        return shared
