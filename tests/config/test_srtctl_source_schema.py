"""srtctl's key tree read from source (`srtctl_source_schema`), on a small srtctl-shaped
package: the rules marshmallow_dataclass applies, and the recipe verdicts that follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferbench.config.srtctl_schema import schema_from_tree, schema_problems
from inferbench.config.srtctl_source_schema import SchemaSourceError, derive_tree

SCHEMA = """
from dataclasses import field
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal
from marshmallow import Schema, fields
from marshmallow_dataclass import dataclass
from srtctl.backends import SGLangProtocol, VLLMProtocol
from .formatting import FormattablePath, FormattablePathField


class BackendConfigField(fields.Field):
    def _deserialize(self, value, attr, data, **kwargs):
        backend_type = value.get("type", "sglang")
        if backend_type == "sglang":
            return SGLangProtocol.Schema().load(value)
        elif backend_type == "vllm":
            return VLLMProtocol.Schema().load(value)


class Mode(str, Enum):
    A = "a"


@dataclass(frozen=True)
class Telemetry:
    enabled: bool = False
    provider: str | None = None


@dataclass(frozen=True)
class Resources:
    gpu_type: str
    nodes: int | None = None
    _gpus: int | None = field(
        default=None,
        metadata={"marshmallow_field": fields.Integer(data_key="gpus_per_prefill",
                                                       load_default=None, allow_none=True)},
    )
    hidden: int = field(default=0, init=False)


@dataclass(frozen=True)
class SrtConfig:
    name: str
    resources: Resources
    backend: Annotated[Any, BackendConfigField()] = field(default_factory=SGLangProtocol)
    telemetry: Telemetry = field(default_factory=Telemetry)
    concurrencies: list[int] | str | None = None
    env: dict[str, str] = field(default_factory=dict)
    mode: Mode = Mode.A
    kind: Literal["x", "y"] = "x"
    log_dir: Annotated[FormattablePath, FormattablePathField()] = "logs"
    Schema: ClassVar[type[Schema]] = Schema
"""

BACKENDS = """
from .sglang import SGLangProtocol
from .vllm import VLLMProtocol
"""

SGLANG = """
from dataclasses import field
from typing import Any
from marshmallow_dataclass import dataclass


@dataclass(frozen=True)
class SGLangProtocol:
    type: str = "sglang"
    sglang_config: dict[str, Any] | None = None
"""

VLLM = SGLANG.replace("SGLang", "VLLM").replace("sglang", "vllm")

FORMATTING = """
from marshmallow import fields


class FormattablePath:
    pass


class FormattablePathField(fields.Field):
    pass
"""


def _package(root: Path) -> Path:
    files = {
        "srtctl/__init__.py": "",
        "srtctl/core/__init__.py": "",
        "srtctl/core/schema.py": SCHEMA,
        "srtctl/core/formatting.py": FORMATTING,
        "srtctl/backends/__init__.py": BACKENDS,
        "srtctl/backends/sglang.py": SGLANG,
        "srtctl/backends/vllm.py": VLLM,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _reader(root: Path):  # type: ignore[no-untyped-def]
    def read(name: str) -> str | None:
        path = root / name
        return path.read_text() if path.is_file() else None

    return read


def test_fields_follow_marshmallow_dataclass(tmp_path: Path) -> None:
    tree = derive_tree(_reader(_package(tmp_path)), "9.9")
    recipe = tree["recipe"]
    assert tree["srtctl"] == "9.9"
    assert recipe["name"] == {"kind": "string", "required": True}
    assert recipe["resources"]["required"] is True
    resources = recipe["resources"]["fields"]
    assert resources["gpu_type"] == {"kind": "string", "required": True}
    assert resources["nodes"] == {"kind": "integer", "nullable": True}
    # a marshmallow_field's data_key names the key; init=False fields are not keys
    assert resources["gpus_per_prefill"] == {"kind": "integer", "nullable": True}
    assert "_gpus" not in resources and "hidden" not in resources
    assert recipe["backend"] == {"kind": "backend"}
    assert recipe["telemetry"]["fields"]["provider"] == {"kind": "string", "nullable": True}
    assert recipe["concurrencies"] == {
        "kind": "union",
        "of": [{"kind": "list", "items": "integer"}, {"kind": "string"}],
        "nullable": True,
    }
    assert recipe["env"] == {"kind": "mapping", "values": "string"}
    assert recipe["mode"] == recipe["kind"] == recipe["log_dir"] == {"kind": "any"}
    assert set(tree["backends"]) == {"sglang", "vllm"}
    assert tree["backends"]["vllm"]["vllm_config"] == {
        "kind": "mapping",
        "values": "any",
        "nullable": True,
    }


def test_a_derived_schema_judges_recipes(tmp_path: Path) -> None:
    schema = schema_from_tree(derive_tree(_reader(_package(tmp_path)), "9.9"), "test")
    good = {"name": "r", "resources": {"gpu_type": "gb200"}, "telemetry": {"provider": "p"}}
    assert schema_problems(good, schema) == []
    bad = {**good, "telemetry": {"provider": "p", "extra": 1}, "backend": {"type": "vllm"}}
    assert [p.render() for p in schema_problems(bad, schema)] == ["telemetry.extra: Unknown field."]
    missing = {"resources": {"gpu_type": "gb200"}}
    assert [p.render() for p in schema_problems(missing, schema)] == [
        "name: Missing data for required field."
    ]


def test_a_tree_without_schema_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SchemaSourceError, match="schema.py"):
        derive_tree(_reader(tmp_path), "9.9")
