"""Write an srtctl-shaped Python package whose schema is a given key tree.

Tests that need srt-slurm trees at several refs (each with its own schema) build them from
the key tree inferbench ships (`srtctl_schema.yaml`), changed as the test needs: the
package has what `srtctl_source_schema` reads (`srtctl/core/schema.py` with `SrtConfig`
and `BackendConfigField`, `srtctl/backends/*`), written the way srt-slurm writes them.
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

_SCALARS = {"string": "str", "integer": "int", "float": "float", "boolean": "bool", "any": "Any"}


class _Writer:
    def __init__(self) -> None:
        self.classes: list[str] = []
        self.count = 0

    def inner(self, kind: str) -> str:
        if kind == "list":
            return "list[Any]"
        if kind == "mapping":
            return "dict[str, Any]"
        return _SCALARS[kind]

    def annotation(self, spec: dict[str, Any]) -> str:
        kind = spec["kind"]
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "mapping":
            return f"dict[str, {self.inner(spec.get('values', 'any'))}]"
        if kind == "list":
            return f"list[{self.inner(spec.get('items', 'any'))}]"
        if kind == "union":
            return " | ".join(self.annotation(a) for a in spec["of"])
        if kind == "backend":
            return "Annotated[Any, BackendConfigField()]"
        if kind == "object":
            return self.dataclass(spec["fields"])
        raise ValueError(kind)

    def dataclass(self, fields: dict[str, Any], name: str | None = None) -> str:
        self.count += 1
        name = name or f"Section{self.count}"
        lines = ["@dataclass(frozen=True)", f"class {name}:"]
        ordered = sorted(fields.items(), key=lambda kv: not kv[1].get("required"))
        for key, spec in ordered:
            typ = self.annotation(spec)
            if spec["kind"] == "any" and not spec.get("nullable"):
                # marshmallow_dataclass lets an `Any` be null: a Raw field says it may not
                required = "required=True" if spec.get("required") else ""
                lines.append(f"    {key}: Annotated[Any, fields.Raw({required})] = None")
            elif spec["kind"] == "backend":
                lines.append(f"    {key}: {typ} = field(default_factory=dict)")
            elif spec.get("required"):
                lines.append(f"    {key}: {typ}")
            elif spec.get("nullable"):
                lines.append(f"    {key}: {typ} | None = None")
            else:
                lines.append(f"    {key}: {typ} = field(default_factory=dict)")
        if len(lines) == 2:
            lines.append("    pass")
        self.classes.append("\n".join(lines))
        return name


def write_srtctl(src: Path, tree: dict[str, Any]) -> Path:
    """`src/srtctl/...` for `tree` (srtctl_schema.yaml's shape); returns `src`."""
    writer = _Writer()
    protocols = {t: writer.dataclass(f, f"Proto_{t}") for t, f in tree["backends"].items()}
    writer.dataclass(tree["recipe"], "SrtConfig")
    branches = "\n".join(
        f'        if backend_type == "{t}":\n            return {cls}.Schema().load(value)'
        for t, cls in protocols.items()
    )
    schema = (
        "from dataclasses import field\n"
        "from typing import Annotated, Any\n\n"
        "from marshmallow import fields\n"
        "from marshmallow_dataclass import dataclass\n\n"
        f"from srtctl.backends import {', '.join(protocols.values())}\n\n\n"
        "class BackendConfigField(fields.Field):\n"
        "    def _deserialize(self, value, attr, data, **kwargs):\n"
        '        backend_type = value.get("type", "sglang")\n'
        f"{branches}\n\n\n" + "\n\n\n".join(c for c in writer.classes if "Proto_" not in c)
    )
    backends = (
        "from dataclasses import field\n"
        "from typing import Annotated, Any\n\n"
        "from marshmallow import fields\n"
        "from marshmallow_dataclass import dataclass\n\n\n"
        + "\n\n\n".join(c for c in writer.classes if "Proto_" in c.splitlines()[1])
    )
    # nested classes of a protocol live beside it
    helpers = [c for c in writer.classes if "Proto_" not in c.splitlines()[1]]
    backends += "\n\n\n" + "\n\n\n".join(helpers)
    files = {
        "srtctl/__init__.py": "",
        "srtctl/core/__init__.py": "",
        "srtctl/core/schema.py": schema,
        "srtctl/backends/__init__.py": backends,
    }
    for name, text in files.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return src


def with_key(tree: dict[str, Any], path: tuple[str, ...], spec: dict[str, Any]) -> dict[str, Any]:
    """A copy of `tree` whose recipe has one more key (`path` through nested objects)."""
    out = copy.deepcopy(tree)
    fields = out["recipe"]
    for part in path[:-1]:
        fields = fields[part]["fields"]
    fields[path[-1]] = spec
    return out


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def bundled_tree() -> dict[str, Any]:
    """The key tree inferbench ships, as `write_srtctl` takes it."""
    from inferbench.config.srtctl_schema import srtctl_schema

    schema = srtctl_schema()
    return {"srtctl": schema.version, "recipe": schema.recipe, "backends": schema.backends}


def srt_slurm_repo(
    root: Path, refs: dict[str, dict[str, Any]], recipes: dict[str, dict[str, str]] | None = None
) -> Path:
    """A git repository at `root` with one commit and tag per ref, in order: its srtctl
    sources for that ref's key tree, and the recipes (path below recipes/ -> text) given."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "t")
    (root / "pyproject.toml").write_text('[project]\nname = "srtctl"\nversion = "0.3.0"\n')
    for ref, tree in refs.items():
        write_srtctl(root / "src", tree)
        for rel, text in (recipes or {}).get(ref, {}).items():
            path = root / "recipes" / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        (root / "recipes").mkdir(exist_ok=True)
        (root / "recipes" / ".ref").write_text(ref + "\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", ref)
        git(root, "tag", ref)
    return root
