"""The typed form of a trace, whatever file it came from.

A prompt is a sequence of `Segment`s: runs of tokens whose content is a pure function
of (scope, key, position), so the first n tokens of a segment are the same whatever its
length. That makes "the whole conversation so far plus the new input" exact: turn k's
prompt repeats turn k-1's segments, then adds its output's and the new input's. A `Prompt`
shares the prompt it extends rather than copying it, so a conversation of n turns is held
in memory proportional to n (copies would take n^2: 200,000 turns of 2 segments each were
4e10 references), and knows its length without summing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

Scope = Literal["local", "global"]  # local: keys are private to a trace; global: shared


@dataclass(frozen=True, slots=True)
class Segment:
    key: int
    length: int


@dataclass(frozen=True, slots=True, eq=False)
class Prompt(Sequence[Segment]):
    """`base`'s segments, then `own`: a read-only sequence of segments whose earlier part is
    shared with the prompt it extends. Reading it whole (iterating, indexing) walks the
    chain: O(segments), as building the request from it is anyway."""

    base: Prompt | None
    own: tuple[Segment, ...]
    length: int  # tokens, base included
    n_segments: int  # base included

    @classmethod
    def of(cls, segments: Sequence[Segment]) -> Prompt:
        return cls(None, tuple(segments), sum(s.length for s in segments), len(segments))

    def extend(self, *segments: Segment) -> Prompt:
        """This prompt followed by `segments` (this one shared, not copied)."""
        tokens = sum(s.length for s in segments)
        return Prompt(self, segments, self.length + tokens, self.n_segments + len(segments))

    def segments(self) -> tuple[Segment, ...]:
        parts: list[tuple[Segment, ...]] = []
        node: Prompt | None = self
        while node is not None:  # a loop, not recursion: chains are 100,000s long
            parts.append(node.own)
            node = node.base
        return tuple(seg for part in reversed(parts) for seg in part)

    def __iter__(self) -> Iterator[Segment]:
        return iter(self.segments())

    def __len__(self) -> int:
        return self.n_segments

    @overload
    def __getitem__(self, index: int) -> Segment: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Segment, ...]: ...
    def __getitem__(self, index: int | slice) -> Segment | tuple[Segment, ...]:
        return self.segments()[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Prompt):
            return self.segments() == other.segments()
        if isinstance(other, tuple):
            return self.segments() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.segments())

    def __repr__(self) -> str:
        return f"Prompt({self.n_segments} segments, {self.length} tokens)"


EMPTY_PROMPT = Prompt(None, (), 0, 0)


def hashed_prompt(hash_ids: Sequence[int], length: int, block_size: int, tail_key: int) -> Prompt:
    """A prompt of `length` tokens whose blocks of `block_size` are named by `hash_ids` (the
    last cut to length); tokens beyond the hashed blocks are one segment keyed `tail_key`."""
    out: list[Segment] = []
    left = length
    for h in hash_ids:
        if left <= 0:
            break
        out.append(Segment(h, min(block_size, left)))
        left -= block_size
    if left > 0:
        out.append(Segment(tail_key, left))
    return Prompt.of(out)


@dataclass(frozen=True, slots=True)
class Turn:
    """One request: its full prompt, its output length, the idle time before it."""

    prompt: Prompt
    output: int
    delay_s: float  # after the previous step of the same stream ended
    line: int = 0  # where it was read (line of the file), for messages

    @property
    def input_len(self) -> int:
        return self.prompt.length


@dataclass(frozen=True, slots=True)
class Fork:
    """Subagents spawned together; with `join` the parent waits for all of them."""

    branches: tuple[Stream, ...]
    delay_s: float
    offsets_s: tuple[float, ...]  # each branch's start after the spawn
    join: bool = True


@dataclass(frozen=True, slots=True)
class Stream:
    """One conversation (the root agent or a subagent): turns and forks in order."""

    name: str
    steps: tuple[Turn | Fork, ...]

    def turns(self) -> Iterator[tuple[str, Turn]]:
        """Every turn of this stream and its subagents (depth first), with its stream."""
        for step in self.steps:
            if isinstance(step, Turn):
                yield self.name, step
            else:
                for branch in step.branches:
                    yield from branch.turns()


@dataclass(frozen=True, slots=True)
class Trace:
    id: str
    root: Stream
    scope: Scope = "local"
    source: str = ""

    def turns(self) -> list[tuple[str, Turn]]:
        return list(self.root.turns())

    @property
    def requests(self) -> int:
        return sum(1 for _ in self.root.turns())

    @property
    def longest(self) -> int:
        """The largest prompt + output of any request."""
        return max((t.input_len + t.output for _, t in self.root.turns()), default=0)


@dataclass(frozen=True)
class TraceSet:
    traces: tuple[Trace, ...]
    format: str  # weka, jsonl, mooncake, burstgpt or synth (mixed: several)
    source: str
    notes: tuple[str, ...] = field(default=())  # what the context rule trimmed or dropped

    def summary(self) -> dict[str, float | int | str]:
        turns = [t for tr in self.traces for _, t in tr.turns()]
        roots = [sum(1 for s in tr.root.steps if isinstance(s, Turn)) for tr in self.traces]
        forks = sum(1 for tr in self.traces for s in _all_steps(tr.root) if isinstance(s, Fork))
        n = max(len(turns), 1)
        return {
            "format": self.format,
            "traces": len(self.traces),
            "requests": len(turns),
            "root_turns_mean": sum(roots) / max(len(roots), 1),
            "subagent_forks": forks,
            "input_tokens_mean": sum(t.input_len for t in turns) / n,
            "output_tokens_mean": sum(t.output for t in turns) / n,
            "longest_request": max((tr.longest for tr in self.traces), default=0),
            "delay_s_mean": sum(t.delay_s for t in turns) / n,
        }


def _all_steps(stream: Stream) -> Iterator[Turn | Fork]:
    for step in stream.steps:
        yield step
        if isinstance(step, Fork):
            for branch in step.branches:
                yield from _all_steps(branch)
