"""inferbench's own trace format: one turn per JSONL line, simple to write by hand.

    {"session": "fix-bug", "input": 2000, "output": 150}
    {"session": "fix-bug", "input": 300, "output": 80, "delay": 4.5}
    {"session": "fix-bug", "subagent": "explore", "input": 900, "output": 40, "shared_prefix": 1000}
    {"session": "fix-bug", "subagent": "explore", "input": 200, "output": 30, "delay": 0.5}
    {"session": "fix-bug", "subagent": "grep", "input": 700, "output": 20}
    {"session": "fix-bug", "input": 150, "output": 60, "delay": 1.0}

Fields: `session` (string, required), `input` (new tokens this turn adds, >= 1),
`output` (tokens to generate, >= 1), `delay` (seconds of idle time after the previous
turn of the same conversation ended, >= 0, default 0; on a subagent's first line, after
the parent's last turn ended), `subagent` (a branch name),
`shared_prefix` (a subagent's first line only: its conversation starts with the first N
tokens of the parent's conversation, such as a shared system prompt). Blank lines and
lines starting with `#` are skipped.

Semantics: a conversation's turn k sends everything before it in that conversation (every
earlier input and output, in order) plus its own input. A run of consecutive subagent lines
between two parent turns is one fork: each subagent name is its own conversation, the
subagents run concurrently, and the parent's next turn waits until all of them ended. The
lines of one session keep their order; sessions may be interleaved in the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from inferbench.bench.traces.errors import json_record, trace_error
from inferbench.bench.traces.model import EMPTY_PROMPT, Fork, Prompt, Segment, Stream, Trace, Turn
from inferbench.core.limits import MAX_TOKENS
from inferbench.core.model import FrozenModel


class TurnLine(FrozenModel):
    session: str = Field(min_length=1)
    input: int = Field(ge=1)
    output: int = Field(ge=1)
    delay: float = Field(default=0.0, ge=0, allow_inf_nan=False)
    subagent: str | None = Field(default=None, min_length=1)
    shared_prefix: int | None = Field(default=None, ge=0)


@dataclass
class _Conversation:
    """Segments so far of one conversation (shared with its last turn's prompt), and its
    turns."""

    name: str
    context: Prompt = EMPTY_PROMPT
    steps: list[Turn | Fork] = field(default_factory=list)


class _SessionBuilder:
    def __init__(self, session: str, path: Path) -> None:
        self.session = session
        self.path = path
        self.root = _Conversation("main")
        self.fork: dict[str, _Conversation] | None = None
        self.offsets: dict[str, float] = {}
        self.next_key = 0

    def _segment(self, length: int) -> Segment:
        self.next_key += 1
        return Segment(self.next_key, length)

    def _turn(self, conv: _Conversation, row: TurnLine, line: int) -> None:
        prompt = conv.context.extend(self._segment(row.input))
        if prompt.length + row.output > MAX_TOKENS:
            # no server holds such a context; reading on would only grow the trace in memory
            raise trace_error(
                self.path,
                line,
                "input",
                f"session {self.session!r} ({conv.name}) reaches {prompt.length + row.output:,}"
                f" tokens of context at this turn, more than the {MAX_TOKENS:,} inferbench"
                " replays",
                hint="split the session into shorter ones, or cut its turns",
            )
        conv.steps.append(Turn(prompt, row.output, row.delay, line=line))
        conv.context = prompt.extend(self._segment(row.output))

    def add(self, row: TurnLine, line: int) -> None:
        if row.subagent is None:
            self._close_fork()
            if row.shared_prefix is not None:
                raise trace_error(
                    self.path, line, "shared_prefix", "shared_prefix is only for a subagent"
                )
            self._turn(self.root, row, line)
            return
        if self.fork is None:
            self.fork, self.offsets = {}, {}
        conv = self.fork.get(row.subagent)
        if conv is None:
            conv = self.fork[row.subagent] = _Conversation(row.subagent)
            conv.context = self._shared(row, line)
            self.offsets[row.subagent] = row.delay  # its start after the parent's turn ended
            row = row.model_copy(update={"delay": 0.0})
        elif row.shared_prefix is not None:
            raise trace_error(
                self.path, line, "shared_prefix", "shared_prefix only on a subagent's first line"
            )
        self._turn(conv, row, line)

    def _shared(self, row: TurnLine, line: int) -> Prompt:
        want = row.shared_prefix or 0
        have = self.root.context.length
        if want > have:
            raise trace_error(
                self.path,
                line,
                "shared_prefix",
                f"shared_prefix {want} is longer than the parent's conversation ({have} tokens)",
            )
        out: list[Segment] = []
        for seg in self.root.context:
            if want <= 0:
                break
            out.append(Segment(seg.key, min(seg.length, want)))
            want -= seg.length
        return Prompt.of(out)

    def _close_fork(self) -> None:
        if self.fork:
            branches = tuple(Stream(c.name, tuple(c.steps)) for c in self.fork.values())
            offsets = tuple(self.offsets[c.name] for c in self.fork.values())
            self.root.steps.append(Fork(branches, 0.0, offsets_s=offsets))
        self.fork = None

    def build(self, source: str) -> Trace:
        self._close_fork()
        return Trace(self.session, Stream("main", tuple(self.root.steps)), "local", source)


def read_turn_lines(path: Path, lines: list[tuple[int, bytes]]) -> list[Trace]:
    sessions: dict[str, _SessionBuilder] = {}
    first_line: dict[str, int] = {}
    for number, raw in lines:
        row = json_record(path, number, raw, TurnLine, "a turn")
        builder = sessions.get(row.session)
        if builder is None:
            builder = sessions[row.session] = _SessionBuilder(row.session, path)
            first_line[row.session] = number
        builder.add(row, number)
    return [b.build(f"{path}:{first_line[name]}") for name, b in sessions.items()]
