"""Load the hardware and model catalogs and resolve the names users write.

The packaged `hardware.yaml` and `models.yaml` are read first; extra user catalog
files (``--catalog FILE`` or ``$INFERBENCH_CATALOG``, several joined by the OS path
separator) are read after them, so their entries add GPUs and models or replace
packaged ones with the same key. A file may hold `gpus:`, `models:` or both.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from inferbench.catalog.schema import PRECISION_SPELLINGS, GpuSpec, ModelSpec, Precision
from inferbench.core.errors import InputError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file

CATALOG_ENV = "INFERBENCH_CATALOG"
_PRECISION_SUFFIX = re.compile(
    r"[-_.](?:nvfp4|mxfp4|fp4|mxfp8|fp8(?:-dynamic)?|bf16|fp16|int4|awq|gptq|v\d+|preview|kv)$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Catalog:
    """All known GPUs and models, with their lookup tables."""

    gpus: dict[str, GpuSpec]
    models: dict[str, ModelSpec]

    def gpu(self, name: str) -> GpuSpec:
        """The GPU a name (catalog key, alias, or runner label like `b200-multinode`) means."""
        found = _lookup(name, self.gpus, lambda g: g.aliases)
        if found is None and "-" in name:  # a runner label: the GPU, then the site or role
            found = _lookup(name.split("-", 1)[0], self.gpus, lambda g: g.aliases)
        if found is None:
            raise InputError(
                f"unknown GPU {name!r}",
                hint=f"known GPUs: {', '.join(sorted(self.gpus))}; add an entry under `gpus:` "
                f"in a catalog file passed with --catalog or ${CATALOG_ENV}",
            )
        return found

    def model(self, name: str) -> ModelSpec:
        """The model a recipe path, Hugging Face id, cluster alias or prefix names."""
        found = _lookup(name, self.models, lambda m: m.aliases)
        if found is None:
            raise InputError(
                f"unknown model {name!r}",
                hint=f"known models: {', '.join(sorted(self.models))}; pass --model-spec NAME, "
                f"or add an entry under `models:` in a catalog file (--catalog or ${CATALOG_ENV})",
            )
        return found


def parse_precision(text: str, *, where: str = "precision") -> Precision:
    try:
        return PRECISION_SPELLINGS[text.strip().lower()]
    except KeyError:
        raise InputError(
            f"unknown {where} {text!r}",
            hint=f"use one of {', '.join(sorted(PRECISION_SPELLINGS))}",
        ) from None


def _candidates(name: str) -> Iterable[str]:
    text = name.strip()
    if text.lower().startswith("hf:"):
        text = text[3:]
    yield text.lower()
    tail = text.rstrip("/").rsplit("/", 1)[-1]
    yield tail.lower()
    for base in (text, tail):
        stripped = base
        while True:
            shorter = _PRECISION_SUFFIX.sub("", stripped)
            if shorter == stripped:
                break
            stripped = shorter
            yield stripped.lower()


def _lookup(name: str, table: dict[str, Any], aliases_of: Any) -> Any:
    index: dict[str, Any] = {}
    for key, entry in table.items():
        index[key.lower()] = entry
        for alias in aliases_of(entry):
            index.setdefault(alias.lower(), entry)
        for alias in aliases_of(entry):  # a bare directory name matches the id's last part
            index.setdefault(alias.lower().rsplit("/", 1)[-1], entry)
    for candidate in _candidates(name):
        if candidate in index:
            return index[candidate]
    return None


_HINT = "write `gpus: {NAME: {...}}` and/or `models: {ORG/NAME: {...}}`, as the packaged catalogs"


def _read_yaml(path: Path, text: str) -> dict[str, Any]:
    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(
            f"catalog file is not valid YAML: {getattr(exc, 'problem', exc)}",
            location=Location(
                path,
                line=mark.line + 1 if mark else None,
                column=mark.column + 1 if mark else None,
            ),
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict) or set(data) - {"gpus", "models"}:
        raise InputError(
            "a catalog file is a mapping with `gpus:` and/or `models:`",
            location=Location(path),
            hint=_HINT,
        )
    return data


def _entries(path: Path, data: dict[str, Any], section: str, kind: type[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    table = data.get(section) or {}
    if not isinstance(table, dict):
        raise InputError(
            f"`{section}:` must map names to entries", location=Location(path, key=section),
            hint=_HINT,
        )  # fmt: skip
    for key, body in table.items():
        if not isinstance(body, dict):
            raise InputError(
                "entry must be a mapping",
                location=Location(path, key=f"{section}.{key}"),
                hint=_HINT,
            )
        try:
            out[str(key)] = kind.model_validate({"key": str(key), **body})
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise InputError(
                f"invalid catalog entry: {err['msg']}",
                location=Location(path, key=f"{section}.{key}" + (f".{field}" if field else "")),
                hint="see the packaged hardware.yaml and models.yaml for every field",
            ) from None
    return out


@lru_cache(maxsize=8)
def _load(extra: tuple[str, ...]) -> Catalog:
    gpus: dict[str, GpuSpec] = {}
    models: dict[str, ModelSpec] = {}
    package = resources.files("inferbench.catalog")
    sources: list[tuple[Path, str]] = [
        (Path(name), package.joinpath(name).read_text("utf-8"))
        for name in ("hardware.yaml", "models.yaml")
    ]
    for item in extra:
        path = Path(item)
        # bounded, and text that is not UTF-8 named as such (a binary file is no catalog)
        sources.append((path, read_text_file(path, MAX_CONFIG_BYTES, what="catalog file")))
    for path, text in sources:
        data = _read_yaml(path, text)
        gpus.update(_entries(path, data, "gpus", GpuSpec))
        models.update(_entries(path, data, "models", ModelSpec))
    return Catalog(gpus=gpus, models=models)


def load_catalog(extra_files: Sequence[Path | str] = ()) -> Catalog:
    """The packaged catalogs plus `extra_files` and the files named by $INFERBENCH_CATALOG."""
    env = [p for p in os.environ.get(CATALOG_ENV, "").split(os.pathsep) if p]
    return _load(tuple(str(p) for p in (*env, *extra_files)))
