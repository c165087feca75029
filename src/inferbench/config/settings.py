"""`additional-settings`: the `KEY=VALUE` strings a master worker block exports to the launcher.

Known keys are typed; any other key is kept, in order, as passthrough. An item that is not
`KEY=VALUE` is kept in `raw` only: InferenceX's generator passes it on as written, so it is a
finding of `check` (IB151), not a reason to refuse a sweep.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, model_validator

from inferbench.config.base import FrozenModel, RuleViolation

_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_KNOWN = {
    "CONFIG_FILE": "config-file",
    "EVAL_CONFIG_FILE": "eval-config-file",
    "SYNTHETIC_ACCEPTANCE": "synthetic-acceptance",
    "PREFILL_NODES": "prefill-nodes",
    "DECODE_NODES": "decode-nodes",
    "SLURM_PARTITION": "slurm-partition",
}
_INT_KEYS = {"PREFILL_NODES", "DECODE_NODES"}


class RecipeRef(FrozenModel):
    """`recipes/<path>.yaml[:selector]` as written in CONFIG_FILE."""

    path: str
    selector: str | None = None

    @classmethod
    def parse(cls, text: str) -> RecipeRef:
        path, sep, selector = text.rpartition(":")
        if sep and path and selector and "/" not in selector:
            return cls(path=path, selector=selector)
        return cls(path=text)

    def __str__(self) -> str:
        return f"{self.path}:{self.selector}" if self.selector else self.path


class AdditionalSettings(FrozenModel):
    """Parsed `additional-settings`; `raw` keeps the strings as written."""

    config_file: RecipeRef | None = Field(default=None, alias="config-file")
    eval_config_file: str | None = Field(default=None, alias="eval-config-file")
    synthetic_acceptance: str | None = Field(default=None, alias="synthetic-acceptance")
    prefill_nodes: int | None = Field(default=None, alias="prefill-nodes", ge=1)
    decode_nodes: int | None = Field(default=None, alias="decode-nodes", ge=0)
    slurm_partition: str | None = Field(default=None, alias="slurm-partition")
    passthrough: tuple[tuple[str, str], ...] = ()
    raw: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _from_list(cls, data: Any) -> Any:
        if isinstance(data, list | tuple):
            return parse_settings(list(data))
        return data

    def get(self, key: str) -> str | None:
        """The value exported for `key` (known or passthrough), as a string."""
        for name, value in self.pairs():
            if name == key:
                return value
        return None

    def pairs(self) -> list[tuple[str, str]]:
        """Every well-formed `KEY=VALUE` item, in order, as (KEY, VALUE)."""
        return [pair for pair in map(key_value, self.raw) if pair is not None]

    def malformed(self) -> list[tuple[int, str]]:
        """The items that are not `KEY=VALUE`, with their index."""
        return [(i, item) for i, item in enumerate(self.raw) if key_value(item) is None]


def key_value(item: str) -> tuple[str, str] | None:
    """`"KEY=VALUE"` -> (KEY, VALUE), stripped; None when `item` is not of that form."""
    name, sep, value = item.partition("=")
    name = name.strip()
    return (name, value.strip()) if sep and _KEY.match(name) else None


def parse_settings(items: list[Any]) -> dict[str, Any]:
    """`["CONFIG_FILE=recipes/x.yaml:sel", "FOO=1"]` -> AdditionalSettings fields."""
    out: dict[str, Any] = {"raw": [], "passthrough": []}
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise RuleViolation(
                "an additional setting must be a 'KEY=VALUE' string",
                at=(index,),
                hint='quote it: - "KEY=VALUE"',
            )
        out["raw"].append(item)
        pair = key_value(item)
        if pair is None:
            continue  # passed on as written (InferenceX's generator does): `check` reports it
        name, value = pair
        if name in seen:
            raise RuleViolation(f"{name} is set twice", at=(index,), hint="keep one of the two")
        seen.add(name)
        field = _KNOWN.get(name)
        if field is None:
            out["passthrough"].append((name, value))
        elif name == "CONFIG_FILE":
            if not value:
                raise RuleViolation("CONFIG_FILE is empty", at=(index,))
            out[field] = RecipeRef.parse(value)
        elif name in _INT_KEYS:
            if not value.isdigit():
                raise RuleViolation(f"{name} must be a whole number, got {value!r}", at=(index,))
            out[field] = int(value)
        else:
            out[field] = value
    return out
