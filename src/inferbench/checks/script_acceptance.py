"""Synthetic acceptance in single-node benchmark scripts, read without running them.

InferenceX's scripts write the target a few ways: `export SGLANG_SIMULATE_ACC_LEN=2.49`, a
variable (`SYNTHETIC_ACCEPT_LEN=2.78`) put into vLLM's `--speculative-config` JSON by
`$SYNTHETIC_ACCEPT_LEN` or by `printf '..."synthetic_acceptance_length":%.2f}' ... "$VAR"`,
`--spec-decode-acceptance-length "$SPEC_DECODE_AL"`; the draft length likewise
(`NUM_SPEC_TOKENS=3`, `--speculative-num-steps 3`). A value is followed through variable
assignments to the line that writes it as a number; one the script computes at run time
(`$(awk ...)`) or takes from the environment is not judged. Where a script sets the draft
length in several branches (`if [ "$CONC" -le 8 ]; then NUM_SPEC_TOKENS=7;
SYNTHETIC_ACCEPT_LEN=3.84; elif ...`), each target is paired with the draft length written
nearest to it (the one before it on a tie): the one of its branch.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from inferbench.checks.acceptance import (
    ATOM,
    ATOM_RATE,
    SGLANG,
    TRTLLM,
    VLLM,
    AcceptanceSetting,
    Knob,
    number,
    thinking_of,
)
from inferbench.config.golden_al import GoldenSet
from inferbench.core.errors import Location

_VALUE = (  # a number, a $VARIABLE (with a default), or a printf placeholder
    r"""(-?\d+(?:\.\d+)?|\$\{?[A-Za-z_]\w*(?::?-[^}"'\s]*)?\}?"""
    r"""|%[-+ #0]*\d*(?:\.\d+)?[dfgis])"""
)
_SITES: tuple[tuple[Knob, re.Pattern[str]], ...] = (
    (VLLM, re.compile(r"""synthetic_acceptance_length["']?\s*:\s*["']?""" + _VALUE)),
    (SGLANG, re.compile(r"""\bSGLANG_SIMULATE_ACC_LEN\s*[=:]\s*["']?""" + _VALUE)),
    (TRTLLM, re.compile(rf"""\b{TRTLLM.name}\s*[=:]\s*["']?""" + _VALUE)),
    (ATOM, re.compile(r"""--spec-decode-acceptance-length(?:=|\s+)["']?""" + _VALUE)),
    (ATOM_RATE, re.compile(r"""--spec-decode-acceptance-rate(?:=|\s+)["']?""" + _VALUE)),
)
_DRAFTS = re.compile(
    r"""(?:--speculative-num-steps(?:=|\s+)|["']?num_speculative_tokens["']?\s*:\s*"""
    r"""|--num-speculative-tokens(?:=|\s+)|\bmax_draft_len\s*:\s*|\bnum_nextn_predict_layers\s*:\s*)"""
    r"""["']?""" + _VALUE
)
_ASSIGN = re.compile(
    r"^\s*(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_]\w*)=(.*)$"
)
_VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)(?::?-([^}]*))?\}?\Z")
_PRINTF = re.compile(r"""printf\s+(?:--\s+)?(['"])(.*?)\1\s+([^)]*)""")
_PLACEHOLDER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%]")


_Found = tuple[str, int, str | None]  # (number as written, its line, variable carrying it)


@dataclass(frozen=True)
class _Line:
    number: int  # the first physical line of a logical (continued) line
    text: str


def _logical_lines(text: str) -> list[_Line]:
    """The script's lines, continuations joined, comment lines left out, `\\"` unescaped."""
    lines: list[_Line] = []
    pending: list[str] = []
    start = 0
    for at, raw in enumerate(text.splitlines(), 1):
        if not pending and raw.lstrip().startswith("#"):
            continue
        if not pending:
            start = at
        if raw.rstrip().endswith("\\"):
            pending.append(raw.rstrip()[:-1])
            continue
        pending.append(raw)
        lines.append(_Line(start, " ".join(pending).replace('\\"', '"')))
        pending = []
    if pending:
        lines.append(_Line(start, " ".join(pending).replace('\\"', '"')))
    return lines


def _first_word(text: str) -> str:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return text.strip()
    return words[0] if words else ""


class _Script:
    def __init__(self, text: str) -> None:
        self.lines = _logical_lines(text)
        self.assignments: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for line in self.lines:
            match = _ASSIGN.match(line.text)
            if match:
                self.assignments[match.group(1)].append((line.number, _first_word(match[2])))

    def resolve(self, token: str, line: _Line, at: int, depth: int = 0) -> list[_Found]:
        """The numbers `token` (written at offset `at` of `line`) may stand for, each with
        the line that writes it and the variable that carries it there."""
        if number(token) is not None:
            return [(token, line.number, None)]
        if depth > 8:
            return []
        variable = _VARIABLE.match(token)
        if variable:
            name = variable.group(1)
            found: list[_Found] = []
            for where, value in self.assignments.get(name, []):
                home = next((x for x in self.lines if x.number == where), line)
                found += [
                    (text, at_line, via or name)
                    for text, at_line, via in self.resolve(value, home, 0, depth + 1)
                ]
            if not found and variable.group(2) and number(variable.group(2)) is not None:
                found = [(variable.group(2), line.number, None)]
            return found
        if token.startswith("%"):
            return self._printf_argument(line, at, depth)
        return []

    def _printf_argument(self, line: _Line, at: int, depth: int) -> list[_Found]:
        for call in _PRINTF.finditer(line.text):
            start, end = call.span(2)
            if not start <= at < end:
                continue
            slots = [m for m in _PLACEHOLDER.finditer(call.group(2)) if m.group() != "%%"]
            index = next((i for i, m in enumerate(slots) if start + m.start() == at), None)
            try:
                arguments = shlex.split(call.group(3))
            except ValueError:
                return []
            if index is None or index >= len(arguments):
                return []
            return self.resolve(arguments[index], line, -1, depth + 1)
        return []

    def sites(self, pattern: re.Pattern[str]) -> Iterator[_Found]:
        """(number as written, its line, the variable carrying it) for each use."""
        for line in self.lines:
            for match in pattern.finditer(line.text):
                yield from self.resolve(match.group(1), line, match.start(1))


def script_settings(
    path: Path, text: str, golden: GoldenSet, shown: str
) -> Iterator[AcceptanceSetting]:
    """Every acceptance target the script at `path` (named `shown`) writes as a number."""
    script = _Script(text)
    drafts = sorted(
        {
            (where, int(value))
            for value, where, _ in script.sites(_DRAFTS)
            if (n := number(value)) is not None and n == int(n) and n > 0
        }
    )
    code = "\n".join(line.text for line in script.lines)
    seen: set[tuple[str, int]] = set()
    for knob, pattern in _SITES:
        for written, where, via in script.sites(pattern):
            if (knob.name, where) in seen:
                continue
            seen.add((knob.name, where))
            key = knob.name if via is None else f"{knob.name} ({via})"
            yield AcceptanceSetting(
                knob=knob,
                written=written,
                location=Location(path, where, key=key),
                owner=f"script {shown}",
                model_prefix=path.name.split("_")[0],
                draft_length=_paired(drafts, where),
                thinking=thinking_of(code),
                speculative=code,
                golden=golden,
                engine=knob.engine,
                via=via,
            )


def _paired(drafts: list[tuple[int, int]], line: int) -> int | None:
    """The draft length written nearest `line` (before it on a tie): the branch it is in."""
    if not drafts:
        return None
    return min(drafts, key=lambda d: (abs(d[0] - line), d[0] > line))[1]
