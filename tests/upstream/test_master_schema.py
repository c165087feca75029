"""inferbench's master-config models accept every value InferenceX's validator accepts.

InferenceX's own pydantic models (`utils/matrix_logic/validation.py`, read in the oracle
venv) and inferbench's (`inferbench.config.master`) are flattened by the same code
(`schema_table.py`) into what each field accepts: its type, a closed set of values, null,
absence, bounds, length. For every field InferenceX knows, inferbench must know it and accept
at least as much. The few places where inferbench is stricter on purpose are listed in
DELIBERATE with the reason; a new difference fails until it is fixed or listed.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from inferbench.config.master import MasterEntry

from .schema_table import Table, field_table

DRIVER = Path(__file__).resolve().parent / "schema_table.py"

# (path glob, difference) -> why inferbench is stricter than InferenceX's field types.
DELIBERATE: dict[tuple[str, str], str] = {
    # InferenceX refuses these as well, in model validators a field table cannot see
    # (_validate_conc_fields: conc-start/conc-end/conc-list entries must be > 0)
    ("*.search-space[].conc-start", "lower bound"): "InferenceX: > 0 in _validate_conc_fields",
    ("*.search-space[].conc-end", "lower bound"): "InferenceX: > 0 in _validate_conc_fields",
    ("*.search-space[].conc-list[]", "lower bound"): "InferenceX: > 0 in _validate_conc_fields",
    # bounds that keep a job runnable: a 0 or negative size is not a deployment, and a
    # 2**63 concurrency or length overflows the JSON writers and expands into 60 points
    ("*.search-space[].conc-*", "upper bound"): "concurrency above 2**20 is a typo",
    ("*.search-space[].conc-list[]", "upper bound"): "concurrency above 2**20 is a typo",
    ("*.isl", "lower bound"): "a 0-token sequence is not a benchmark",
    ("*.osl", "lower bound"): "a 0-token sequence is not a benchmark",
    ("*.isl", "upper bound"): "lengths above 2**24 tokens overflow the load generator",
    ("*.osl", "upper bound"): "lengths above 2**24 tokens overflow the load generator",
    ("*tp", "lower bound"): "tp 0 is no worker",
    ("*ep", "lower bound"): "ep 0 is no worker",
    ("*.num-worker", "lower bound"): "a negative worker count",
    ("*tp", "upper bound"): "engine sizes above 2**20 are typos",
    ("*ep", "upper bound"): "engine sizes above 2**20 are typos",
    ("*pp", "upper bound"): "engine sizes above 2**20 are typos",
    ("*-size", "upper bound"): "engine sizes above 2**20 are typos",
    ("*.num-worker", "upper bound"): "engine sizes above 2**20 are typos",
    # inferbench reads the KEY=VALUE strings the launchers `export` (CONFIG_FILE, ...); a
    # string that is not one breaks the launcher at run time
    ("*.additional-settings", "kind"): "parsed as KEY=VALUE settings",
    ("*.additional-settings[]", "unknown"): "parsed as KEY=VALUE settings",
    # InferenceX's one agentic search-space model asks, in validate_topology_fields, for tp
    # or both prefill and decode: inferbench's two shapes, each with its keys required
    ("scenarios.agentic-coding[].search-space[].tp", "required"): "single-node shape",
    ("scenarios.agentic-coding[].search-space[].tp", "null"): "single-node shape",
    ("scenarios.agentic-coding[].search-space[].prefill", "required"): "multinode shape",
    ("scenarios.agentic-coding[].search-space[].prefill", "null"): "multinode shape",
    ("scenarios.agentic-coding[].search-space[].decode", "required"): "multinode shape",
    ("scenarios.agentic-coding[].search-space[].decode", "null"): "multinode shape",
    # names that reach a shell, a file name or an engine's command line
    ("image", "min length"): "an empty image cannot be pulled",
    ("model", "min length"): "an empty model cannot be served",
    ("model-prefix", "min length"): "an empty prefix names no result series",
    ("runner", "min length"): "an empty runner label matches no runner",
    ("precision", "min length"): "an empty precision names no result series",
    ("framework", "min length"): "an empty framework selects no launcher",
}


def _lower(d: dict[str, Any]) -> tuple[float, bool] | None:
    """(bound, strict); on an integer `gt: 0` is `ge: 1`."""
    if d["gt"] is not None:
        return (d["gt"] + 1, False) if d["kind"] == "int" else (d["gt"], True)
    return None if d["ge"] is None else (d["ge"], False)


def _upper(d: dict[str, Any]) -> tuple[float, bool] | None:
    if d["lt"] is not None:
        return (d["lt"] - 1, False) if d["kind"] == "int" else (d["lt"], True)
    return None if d["le"] is None else (d["le"], False)


def refusals(ix: dict[str, Any], ib: dict[str, Any]) -> list[str]:
    """What InferenceX's field `ix` accepts that inferbench's `ib` refuses (kinds of it)."""
    out: list[str] = []
    if ix["kind"] != ib["kind"]:
        return ["kind"]
    if ib["enum"] is not None and (ix["enum"] is None or set(ix["enum"]) - set(ib["enum"])):
        out.append("values")
    if ix["nullable"] and not ib["nullable"]:
        out.append("null")
    if not ix["required"] and ib["required"]:
        out.append("required")
    ix_low, ib_low = _lower(ix), _lower(ib)
    # (bound, strict): a strict bound accepts less than an inclusive one at the same value
    if ib_low is not None and (ix_low is None or ix_low[0] < ib_low[0] or ix_low < ib_low):
        out.append("lower bound")
    ix_up, ib_up = _upper(ix), _upper(ib)
    if ib_up is not None and (ix_up is None or ix_up[0] > ib_up[0] or ix_up < ib_up):
        out.append("upper bound")
    if (ib["min_length"] or 0) > (ix["min_length"] or 0):
        out.append("min length")
    return out


def _matches(path: str, glob: str) -> bool:
    """`*` is any text; everything else, `[]` included, is literal."""
    return re.fullmatch(".*".join(map(re.escape, glob.split("*"))), path) is not None


def _deliberate(path: str, what: str) -> bool:
    return any(_matches(path, glob) and what == kind for glob, kind in DELIBERATE)


def all_differences(ix_table: Table, ib_table: Table) -> list[tuple[str, str, str]]:
    """Every (path, difference, detail) where inferbench refuses what InferenceX accepts."""
    found: list[tuple[str, str, str]] = []
    for path, ix_fields in ix_table.items():
        candidates = ib_table.get(path)
        if candidates is None:
            found.append((path, "unknown", "unknown to inferbench"))
            continue
        for ix in ix_fields:
            # the members of a union: one of inferbench's must accept it, the closest counts
            best = min((refusals(ix, ib) for ib in candidates), key=len)
            found += [(path, what, f"InferenceX: {ix}, inferbench: {candidates}") for what in best]
    return found


def differences(ix_table: Table, ib_table: Table) -> list[str]:
    """The differences that are not DELIBERATE, one line each."""
    return [
        f"{path}: {what} ({detail})"
        for path, what, detail in all_differences(ix_table, ib_table)
        if not _deliberate(path, what)
    ]


@pytest.fixture(scope="module")
def inferencex_tables(inferencex_python: Path, inferencex_tree: Path) -> dict[str, Table]:
    done = subprocess.run(
        [str(inferencex_python), str(DRIVER), str(inferencex_tree)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    tables: dict[str, Table] = json.loads(done.stdout)
    return tables


@pytest.mark.parametrize("mode", ["single-node", "multinode"])
def test_inferbench_accepts_every_value_inferencex_accepts(
    mode: str, inferencex_tables: dict[str, Table]
) -> None:
    ix_table = inferencex_tables[mode]
    assert "scenarios.fixed-seq-len[].search-space[].tp" in ix_table or mode == "multinode"
    problems = differences(ix_table, field_table(MasterEntry))
    assert not problems, "\n".join(problems)


def test_the_comparison_sees_a_closed_enum(inferencex_tables: dict[str, Table]) -> None:
    """The comparison itself: a closed kv-p2p-transfer set (inferbench's before) is a finding."""
    path = "kv-p2p-transfer"
    ix_field = inferencex_tables["multinode"][path][0]
    assert ix_field["enum"] is None and ix_field["min_length"] == 1
    closed = ix_field | {"enum": ["mooncake", "mori", "nixl", "ucx"]}
    problems = differences({path: [ix_field]}, {path: [closed]})
    assert problems and "values" in problems[0]


def test_every_deliberate_difference_is_still_one(inferencex_tables: dict[str, Table]) -> None:
    """A DELIBERATE line that no longer matches a difference is stale: remove it."""
    ib_table = field_table(MasterEntry)
    found = [
        (path, what)
        for mode in ("single-node", "multinode")
        for path, what, _ in all_differences(inferencex_tables[mode], ib_table)
    ]
    stale = [
        line
        for line in DELIBERATE
        if not any(_matches(path, line[0]) and what == line[1] for path, what in found)
    ]
    assert stale == []
