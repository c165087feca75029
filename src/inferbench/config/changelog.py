"""The perf changelog (`perf-changelog.yaml`): an append-only list of entries, oldest first.

Each entry names config keys (exact or globs with `*`, `?`) that CI benchmarks.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from inferbench.config.base import FrozenModel
from inferbench.config.validate import validate_doc
from inferbench.config.yamlio import PositionedDoc, load_yaml, parse_yaml
from inferbench.core.errors import ConfigError, Location

GLOB_CHARS = frozenset("*?[")


class ChangelogEntry(FrozenModel):
    config_keys: tuple[str, ...] = Field(alias="config-keys", min_length=1)
    description: tuple[str, ...] = Field(min_length=1)
    pr_link: str | None = Field(default=None, alias="pr-link")
    evals_only: bool = Field(default=False, alias="evals-only")
    all_evals: bool = Field(default=False, alias="all-evals")
    append_only: bool = Field(default=False, alias="append-only")
    # multinode eval rows whose prefill ep is below this are dropped after eval selection
    eval_min_prefill_ep: int | None = Field(default=None, alias="eval-min-prefill-ep", ge=1)
    scenario_type: tuple[Literal["fixed-seq-len", "agentic-coding"], ...] | None = Field(
        default=None, alias="scenario-type", min_length=1
    )

    @field_validator("config_keys", "description", "scenario_type", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("config_keys")
    @classmethod
    def _no_empty_key(cls, keys: tuple[str, ...]) -> tuple[str, ...]:
        if any(not key.strip() for key in keys):
            raise ValueError("config-keys holds an empty key")
        return keys

    @model_validator(mode="after")
    def _append_only_measures_throughput(self) -> ChangelogEntry:
        if self.append_only and (
            self.evals_only or self.all_evals or self.eval_min_prefill_ep is not None
        ):
            raise ValueError("append-only cannot be combined with eval selection fields")
        return self

    @property
    def text(self) -> str:
        return " ".join(self.description)

    def matches(self, config_key: str) -> bool:
        return any(changelog_key_matches(pattern, config_key) for pattern in self.config_keys)


def is_glob(pattern: str) -> bool:
    return any(c in GLOB_CHARS for c in pattern)


def changelog_key_matches(pattern: str, config_key: str) -> bool:
    """How InferenceX's changelog processing matches a changelog key: `*` is the only
    wildcard (any run of characters, the whole key matched); `?` and `[` are literal."""
    if "*" not in pattern:
        return pattern == config_key
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), config_key) is not None


def key_matches(pattern: str, config_key: str) -> bool:
    """Exact match, or a glob (`*`, `?`) match; case-sensitive."""
    if is_glob(pattern):
        return fnmatch.fnmatchcase(config_key, pattern)
    return pattern == config_key


@dataclass(frozen=True)
class ChangelogItem:
    """One entry with its index in the list and its first line in the file."""

    index: int
    entry: ChangelogEntry
    line: int | None
    location: Location


@dataclass(frozen=True)
class Changelog:
    items: tuple[ChangelogItem, ...]
    doc: PositionedDoc

    @property
    def file(self) -> Path:
        return self.doc.file

    @property
    def entries(self) -> tuple[ChangelogEntry, ...]:
        return tuple(item.entry for item in self.items)

    def resolve(self, item: ChangelogItem, config_keys: Iterable[str]) -> list[str]:
        """The config keys (from `config_keys`) that `item` names."""
        return [key for key in config_keys if item.entry.matches(key)]


def parse_changelog(text: str, file: Path) -> Changelog:
    """Parse changelog text (e.g. the base revision's copy, read with git)."""
    return _from_doc(parse_yaml(text, file))


def load_changelog(path: Path) -> Changelog:
    return _from_doc(load_yaml(path))


def _from_doc(doc: PositionedDoc) -> Changelog:
    if doc.data is None:  # InferenceX's validate_perf_changelog.py refuses it too
        raise ConfigError(
            "the perf changelog is empty",
            location=doc.locate(),
            hint="write at least one entry `- config-keys: [...]` with description and "
            "pr-link under it, or delete the file",
        )
    if not isinstance(doc.data, list):
        raise ConfigError(
            "the perf changelog must be a list of entries",
            location=doc.locate(),
            hint="start each entry with `- config-keys: [...]`",
        )
    items = []
    for index, raw in enumerate(doc.data):
        if not isinstance(raw, dict):
            raise ConfigError(
                "a changelog entry must be a mapping",
                location=doc.locate((index,)),
                hint="write `- config-keys: [...]` with description and pr-link under it",
            )
        entry = validate_doc(doc, ChangelogEntry, path=(index,))
        location = doc.locate((index,))
        items.append(ChangelogItem(index, entry, location.line, location))
    return Changelog(items=tuple(items), doc=doc)
