"""Recipe values srtctl's schema accepts but no benchmark can run: the one place inferbench
asks more of a recipe than srtctl does (which keys it has and their types stay srtctl's call).

- resource counts: srtctl loads them with marshmallow's Integer, which truncates 1.5 to 1 and
  takes -7 or 0; a GPU count must be 1 or more, a node or worker count 0 or more, each whole;
- the name: srtctl names the Slurm job and the run folder (`<name>_<job id>`) after it and
  prints it as Rich markup (`[/]` makes `srtctl apply` fail), so letters, digits, `.`, `_`,
  `+` and `-` only, as every recipe of srt-slurm and InferenceX is named.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from inferbench.config.yamlio import KeyPath

# resources key -> the least value that means something
_AT_LEAST = {
    "gpus_per_node": 1,
    "gpus_per_prefill": 1,
    "gpus_per_decode": 1,
    "gpus_per_agg": 1,
    "prefill_nodes": 0,
    "decode_nodes": 0,
    "prefill_workers": 0,
    "decode_workers": 0,
    "agg_nodes": 0,
    "agg_workers": 0,
}
RESOURCE_COUNTS = tuple(_AT_LEAST)
_NAME = re.compile(r"[A-Za-z0-9._+-]+\Z")


@dataclass(frozen=True)
class UnusableValue:
    """One value srtctl would take that a benchmark cannot run: where, why, how to fix."""

    path: KeyPath
    message: str
    hint: str


def unusable_values(recipe: Any) -> list[UnusableValue]:
    """Every unusable value of one merged recipe variant (plain data, as srtctl reads it)."""
    if not isinstance(recipe, dict):
        return []
    out: list[UnusableValue] = []
    name = recipe.get("name")
    if isinstance(name, str) and not _NAME.match(name):
        out.append(
            UnusableValue(
                ("name",),
                f"recipe name {name!r} holds characters other than letters, digits, '.', '_', "
                "'+' and '-'; srtctl names the Slurm job and the run folder after it and "
                "prints it as Rich markup",
                "rename it, e.g. model-engine-topology-isl-osl",
            )
        )
    resources = recipe.get("resources")
    if isinstance(resources, dict):
        for key, least in _AT_LEAST.items():
            problem = _count_problem(key, resources.get(key), least)
            if problem is not None:
                out.append(UnusableValue(("resources", key), *problem))
    return out


def _count_problem(key: str, value: Any, least: int) -> tuple[str, str] | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None  # absent, or a type srtctl's schema judges
    what = "GPU" if key.startswith("gpus") else "node or worker"
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        kept = f"srtctl truncates it to {int(value)}" if math.isfinite(value) else "no count"
        return f"{key} is {value} ({kept})", "write a whole number"
    if value < least:
        return f"{key} is {value:g}: a {what} count is {least} or more", (
            f"write {least} or more" + (", or leave the key out" if least else "")
        )
    return None
