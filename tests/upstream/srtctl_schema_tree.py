"""Print the recipe key tree of the installed srtctl's schema as JSON.

Run with the srtctl venv's interpreter (not inferbench's): it walks the marshmallow schema
of `srtctl.core.schema.SrtConfig` and of each backend protocol, and prints every field with
its kind and whether it is required. `inferbench/config/srtctl_schema.yaml` holds the same
tree for srtctl's release; tests/upstream compares the two, so an srt-slurm update that
adds or drops a key fails the suite until the data file is regenerated:

    $INFERBENCH_SRTCTL_PYTHON tests/upstream/srtctl_schema_tree.py --yaml \
        > src/inferbench/config/srtctl_schema.yaml
"""

from __future__ import annotations

import json
import logging
import sys
from importlib.metadata import version
from typing import Any

logging.disable(logging.CRITICAL)

import srtctl.backends as backends  # noqa: E402
from marshmallow import fields  # noqa: E402
from marshmallow_dataclass.union_field import Union  # noqa: E402
from srtctl.core import schema  # noqa: E402

KINDS = {
    fields.String: "string",
    fields.Integer: "integer",
    fields.Boolean: "boolean",
    fields.Float: "float",
    fields.Dict: "mapping",
    fields.Mapping: "mapping",
    fields.List: "list",
}


def simple_kind(field: Any) -> str:
    for cls, name in KINDS.items():
        if type(field) is cls:
            return name
    return "any"  # raw values, sweeps, paths: srtctl's own field logic


def kind_of(field: Any) -> dict[str, Any]:
    if isinstance(field, fields.Nested):
        return {"kind": "object", "fields": walk(field.schema)}
    if isinstance(field, schema.BackendConfigField):
        return {"kind": "backend"}
    if isinstance(field, Union):  # `list[int] | str`: one of the alternatives must load
        return {
            "kind": "union",
            "of": [kind_of(alternative) for _, alternative in field.union_fields],
        }
    entry = {"kind": simple_kind(field)}
    if entry["kind"] == "mapping" and field.value_field is not None:
        entry["values"] = simple_kind(field.value_field)
    if entry["kind"] == "list" and getattr(field, "inner", None) is not None:
        entry["items"] = simple_kind(field.inner)
    return entry


def walk(s: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, field in s.fields.items():
        entry = kind_of(field)
        if field.required:
            entry["required"] = True
        if field.allow_none:
            entry["nullable"] = True
        out[field.data_key or name] = entry
    return out


def tree() -> dict[str, Any]:
    names = {
        "sglang": "SGLangProtocol",
        "vllm": "VLLMProtocol",
        "trtllm": "TRTLLMProtocol",
        "mocker": "MockerProtocol",
    }
    # older refs (sa-submission-q2-2026) have no mocker backend
    protocols = {t: getattr(backends, n) for t, n in names.items() if hasattr(backends, n)}
    return {
        "srtctl": version("srtctl"),
        "recipe": walk(schema.SrtConfig.Schema()),
        "backends": {name: walk(p.Schema()) for name, p in protocols.items()},
    }


HEADER = """\
# The recipe keys srtctl accepts: every field of srt-slurm's SrtConfig schema
# (src/srtctl/core/schema.py) and of each backend protocol (src/srtctl/backends/),
# with its kind, whether it is required and whether it may be null. Generated from
# the installed srtctl by tests/upstream/srtctl_schema_tree.py; tests/upstream checks
# it against the real srtctl.
# Kinds: string, integer, float, boolean, mapping (free keys; `values` their kind), list
# (`items` their kind), object (nested fields), backend (one protocol per backend type),
# union (`of` its alternatives, tried in order), any (srtctl's own field logic).
"""


if __name__ == "__main__":
    data = tree()
    if "--yaml" in sys.argv:
        import yaml

        sys.stdout.write(HEADER + yaml.safe_dump(data, sort_keys=False, width=100))
    else:
        json.dump(data, sys.stdout, indent=1)
