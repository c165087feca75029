"""The golden acceptance lengths (AL) InferenceX pins synthetic speculative decoding to.

`golden_al_distribution/<prefix>_<method>[_<qualifier>...].yaml` (InferenceX's README there):
one mean AL per model, thinking mode and draft length (`num_speculative_tokens`), measured on
SPEED-Bench's coding category::

    deepseek-v4-pro:          # the model the curve was measured on
      thinking_on:
        1: 1.79               # draft length -> golden AL, in [1, draft length + 1]

A file's name says which runs it is for: the model prefix InferenceX's master entries and
scripts use (`dsv4`, `qwen3.5`; up to the first `_` or `-`), the speculative method (`mtp`,
`eagle3`, `dspark`) and, where a model has several curves for one method, the token after
the method (`gqa`: the GQA draft head; `probabilistic`: probabilistic draft sampling).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import Field, model_validator

from inferbench.config.base import FrozenModel
from inferbench.config.yamlio import PositionedDoc, load_yaml
from inferbench.core.errors import ConfigError, Location

ThinkingMode = Literal["thinking_on", "thinking_off"]
THINKING_MODES: tuple[ThinkingMode, ...] = get_args(ThinkingMode)
METHODS = ("mtp", "eagle3", "dspark")
_TOKEN = re.compile(r"[^_-]+")
_SHAPE_HINT = "write `<model>: {thinking_on: {1: 1.84, 2: 2.45, ...}}` as the README there shows"


class GoldenCurve(FrozenModel):
    """One model's curve in one golden file: AL by thinking mode and draft length."""

    file: Path
    model: str = Field(min_length=1)
    lengths: Mapping[ThinkingMode, Mapping[int, float]]
    lines: Mapping[str, int] = Field(default_factory=dict)  # "<mode>:<draft length>" -> line

    @model_validator(mode="after")
    def _within_reach(self) -> GoldenCurve:
        # AL = 1 + accepted drafts / verification steps: at least 1, at most draft length + 1
        for mode, by_length in self.lengths.items():
            for length, al in by_length.items():
                if length < 1 or not 1 <= al <= length + 1:
                    raise ValueError(
                        f"{mode} {length}: {al} is not an acceptance length for draft length "
                        f"{length} (must be in [1, {length + 1}])"
                    )
        return self

    @property
    def tokens(self) -> tuple[str, ...]:
        return tuple(t.lower() for t in _TOKEN.findall(self.file.stem))

    @property
    def prefix(self) -> str:
        """The model prefix the file is for (`qwen3.5_mtp.yaml` -> `qwen3.5`)."""
        return self.tokens[0]

    @property
    def method(self) -> str | None:
        return next((t for t in self.tokens[1:] if t in METHODS), None)

    @property
    def qualifier(self) -> str | None:
        """The token after the method: which of a model's curves for one method this is."""
        tokens = self.tokens
        if self.method is None:
            return None
        after = tokens.index(self.method) + 1
        return tokens[after] if after < len(tokens) else None

    def al(self, mode: ThinkingMode, draft_length: int) -> float | None:
        return self.lengths.get(mode, {}).get(draft_length)

    def locate(self, mode: ThinkingMode, draft_length: int) -> Location:
        return Location(self.file, self.lines.get(f"{mode}:{draft_length}"), key=self.model)

    def where(self, mode: ThinkingMode, draft_length: int) -> str:
        """`golden_al_distribution/dsv4_mtp.yaml:13` (the folder and file name)."""
        line = self.lines.get(f"{mode}:{draft_length}")
        name = f"{self.file.parent.name}/{self.file.name}"
        return f"{name}:{line}" if line else name


@dataclass(frozen=True)
class GoldenSet:
    """Every curve of a tree's golden files."""

    curves: tuple[GoldenCurve, ...] = ()
    folder: str = "golden_al_distribution"

    def for_prefix(self, prefix: str) -> tuple[GoldenCurve, ...]:
        return tuple(c for c in self.curves if c.prefix == prefix.lower())

    def select(self, prefix: str, speculative: str) -> tuple[GoldenCurve, ...]:
        """The curves of `prefix` for the run whose speculative setup `speculative` spells
        (flags, JSON, draft model name): its method where the model has curves for several,
        then the curve of the qualifier (`gqa`, `probabilistic`) it names; a run that names
        none may be any of them (ATOM spells no draft sampling, InferenceX pins its DSpark
        runs to the probabilistic curve), so all are kept."""
        curves = self.for_prefix(prefix)
        text = speculative.lower()
        if len({c.method for c in curves}) > 1:
            wanted = next((m for m in ("dspark", "eagle3") if m in text), "mtp")
            curves = tuple(c for c in curves if c.method == wanted)
        qualifiers = {c.qualifier for c in curves} - {None}
        named = {q for q in qualifiers if q is not None and q in text}
        if qualifiers:
            curves = tuple(c for c in curves if c.qualifier in named) or curves
        return curves


def load_golden(paths: Iterable[Path]) -> GoldenSet:
    """Read the golden files (ConfigError, with file, line and key, on a malformed one)."""
    curves: list[GoldenCurve] = []
    for path in sorted(paths):
        curves.extend(read_golden_file(path))
    return GoldenSet(tuple(curves))


def read_golden_file(path: Path) -> list[GoldenCurve]:
    doc = load_yaml(path)
    if not isinstance(doc.data, dict) or not doc.data:
        raise ConfigError(
            "a golden AL file maps a model to its curves", location=doc.locate(), hint=_SHAPE_HINT
        )
    return [_curve(doc, str(model), modes) for model, modes in doc.data.items()]


def _curve(doc: PositionedDoc, model: str, modes: Any) -> GoldenCurve:
    if not isinstance(modes, dict) or not modes:
        raise ConfigError(
            f"{model!r} must map thinking_on / thinking_off to AL by draft length",
            location=doc.locate((model,)),
            hint=_SHAPE_HINT,
        )
    lengths: dict[str, dict[int, float]] = {}
    lines: dict[str, int] = {}
    for mode, by_length in modes.items():
        where = doc.locate((model, mode))
        if mode not in THINKING_MODES:
            raise ConfigError(
                f"unknown thinking mode {mode!r}",
                location=where,
                hint="the modes are " + " and ".join(THINKING_MODES),
            )
        if not isinstance(by_length, dict) or not by_length:
            raise ConfigError(
                f"{mode} must map each draft length to its AL", location=where, hint=_SHAPE_HINT
            )
        lengths[mode] = {}
        for length, al in by_length.items():
            at = doc.locate((model, mode, length))
            if isinstance(length, bool) or not isinstance(length, int):
                raise ConfigError(
                    f"draft length {length!r} is not a whole number",
                    location=at,
                    hint="keys are num_speculative_tokens: 1, 2, ... 8",
                )
            if isinstance(al, bool) or not isinstance(al, int | float):
                raise ConfigError(
                    f"AL {al!r} is not a number", location=at, hint="write the mean AL, e.g. 2.49"
                )
            if length < 1 or not 1 <= al <= length + 1:
                raise ConfigError(
                    f"{al} is not an acceptance length for draft length {length} "
                    f"(AL = 1 + accepted drafts per step: in [1, {max(length, 0) + 1}])",
                    location=at,
                    hint="copy the values from the speedbench-al.yml artifact the file names",
                )
            lengths[mode][length] = float(al)
            if at.line is not None:
                lines[f"{mode}:{length}"] = at.line
    return GoldenCurve(file=doc.file, model=model, lengths=lengths, lines=lines)
