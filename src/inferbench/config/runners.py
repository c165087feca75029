"""The runner registry, `configs/runners.yaml`: labels -> runner names, GPU hardware facts.

Two layouts are read, as InferenceX's generator read them at the time: `labels:` (and
`hardware:`) since InferenceX's AgentX v1.0 (upstream #1970, 2026-07-02), and before it the
flat file, each top-level key a label and its value the list of machines (no hardware facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field, ValidationError, field_validator

from inferbench.config.base import FrozenModel, RuleViolation
from inferbench.config.validate import config_error_from, validate_doc
from inferbench.config.yamlio import KeyPath, PositionedDoc, load_yaml
from inferbench.core.errors import ConfigError, Location

# A runner label is a GitHub `runs-on` label and a machine name becomes RUNNER_NAME, which
# the workflow turns into `launch_${RUNNER_NAME%%_*}.sh`: plain names only (every label and
# machine of InferenceX's runners.yaml is one).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*\Z")
_NAME_HINT = "write a name of letters, digits and `-`, `_`, `.`, `:` (e.g. h200-nv_0)"


class HardwareSpec(FrozenModel):
    gpus_per_node: int = Field(alias="gpus-per-node", ge=1)
    available_cpu_dram_mib: int | None = Field(default=None, alias="available-cpu-dram-mib", ge=1)


class RunnerRegistry(FrozenModel):
    labels: dict[str, tuple[str, ...]]
    hardware: dict[str, HardwareSpec] = Field(default_factory=dict)

    @field_validator("labels")
    @classmethod
    def _non_empty(cls, labels: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for label, names in labels.items():
            if not _NAME.match(label):
                raise RuleViolation(
                    f"runner label {label!r} is not a plain name", at=(label,), hint=_NAME_HINT
                )
            if not names:
                raise RuleViolation(
                    f"label {label!r} lists no runner",
                    at=(label,),
                    hint="list the label's machines under it, or remove the label",
                )
            for index, name in enumerate(names):
                if not _NAME.match(name):
                    raise RuleViolation(
                        f"runner {name!r} of label {label!r} is not a plain name",
                        at=(label, index),
                        hint=_NAME_HINT,
                    )
        return labels

    def has_label(self, label: str) -> bool:
        return label in self.labels

    def hardware_for(self, label: str) -> HardwareSpec | None:
        """The hardware facts of a runner label.

        `hardware:` is keyed by the exact runner label (`cluster:mi355x-amds`,
        `b200-nscale`), which is how InferenceX's generator looks them up. Trees that key
        facts by GPU name instead (`b200`) are read too: the label's first dash-separated
        word, `cluster:` dropped (`b200-multinode` -> `b200`).
        """
        if label in self.hardware:
            return self.hardware[label]
        return self.hardware.get(label.removeprefix("cluster:").split("-")[0])


@dataclass(frozen=True)
class Runners:
    """The registry with where it was read from."""

    registry: RunnerRegistry
    doc: PositionedDoc
    flat: bool = False  # the layout from before `labels:` (labels at the top level)

    @property
    def file(self) -> Path:
        return self.doc.file

    def locate_label(self, label: str) -> Location:
        return self.doc.locate((label,) if self.flat else ("labels", label))


_REGISTRY_KEYS = frozenset(("labels", "hardware"))


def is_flat(data: dict[object, object]) -> bool:
    """The flat layout: no `labels:` or `hardware:`, every top-level key a label. (A file
    that has either key is the newer layout, and its other keys are unknown keys.)"""
    return bool(data) and not _REGISTRY_KEYS & set(data)


def load_runners(path: Path) -> Runners:
    doc = load_yaml(path)
    if not isinstance(doc.data, dict):
        raise ConfigError(
            "runners.yaml must be a mapping with `labels:` (and `hardware:`)",
            location=doc.locate(),
            hint="write `labels:` mapping each runner label to a list of machines",
        )
    if not is_flat(doc.data):
        return Runners(registry=validate_doc(doc, RunnerRegistry), doc=doc)
    try:
        registry = RunnerRegistry.model_validate({"labels": doc.data})
    except ValidationError as exc:

        def in_file(at: KeyPath) -> Location:  # the file has no `labels:` level
            return doc.locate(at[1:] if at[:1] == ("labels",) else at)

        raise config_error_from(
            exc, doc, RunnerRegistry, data={"labels": doc.data}, locator=in_file
        ) from None
    return Runners(registry=registry, doc=doc, flat=True)
