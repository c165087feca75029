"""InferenceX's sweep generator as an oracle, and the comparison with `inferbench sweep`."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DRIVER = Path(__file__).resolve().parent / "generator_driver.py"


@dataclass(frozen=True)
class GeneratorRun:
    rc: int
    jobs: list[dict[str, Any]] | None
    error: str


@dataclass(frozen=True)
class Generator:
    """What one oracle process answered: its field names, master list and each call's result."""

    fields: frozenset[str]
    master_configs: tuple[str, ...]
    runs: tuple[GeneratorRun, ...]


def run_generator(
    python: Path, tree: Path, calls: list[list[str]], cache: Path | None = None
) -> Generator:
    """Run `generate_sweep_configs.py` once per argument list, all in one oracle process.
    With `cache` (a .json.gz file named by what the generator reads), an answer recorded
    there is reused, and a new one recorded (written whole, then renamed)."""
    if cache is not None and cache.is_file():
        return _generator(json.loads(gzip.decompress(cache.read_bytes())))
    done = subprocess.run(
        [str(python), str(DRIVER), str(tree)],
        input=json.dumps(calls),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise AssertionError(f"the generator driver failed:\n{done.stderr[-4000:]}")
    answer = json.loads(done.stdout)
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        part = cache.with_name(f".{cache.name}.{os.getpid()}")
        part.write_bytes(gzip.compress(done.stdout.encode(), compresslevel=5))
        part.replace(cache)
    return _generator(answer)


def _generator(answer: dict[str, Any]) -> Generator:
    return Generator(
        fields=frozenset(answer["fields"]),
        master_configs=tuple(answer["master-configs"]),
        runs=tuple(GeneratorRun(**run) for run in answer["results"]),
    )


def inferencex_view(row: dict[str, Any], fields: frozenset[str]) -> dict[str, Any]:
    """`row` restricted to the generator's field names (inferbench's own keys dropped),
    also inside the `prefill` / `decode` blocks; every other value is kept whole."""
    view: dict[str, Any] = {}
    for key, value in row.items():
        if key not in fields:
            continue
        if key in ("prefill", "decode") and isinstance(value, dict):
            value = inferencex_view(value, fields)
        view[key] = value
    return view


def _canon(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)


def differences(expected: list[dict[str, Any]], got: list[dict[str, Any]], limit: int = 3) -> str:
    """An empty string when the two job lists are equal (order included), else what differs."""
    if expected == got:
        return ""
    want, have = Counter(map(_canon, expected)), Counter(map(_canon, got))
    missing, extra = list((want - have).elements()), list((have - want).elements())
    lines = [f"generator: {len(expected)} jobs, inferbench: {len(got)} jobs"]
    if not missing and not extra:
        first = next(i for i, (a, b) in enumerate(zip(expected, got, strict=True)) if a != b)
        lines.append(f"same jobs, different order from index {first}")
    lines += [f"only in the generator ({len(missing)}): {row}" for row in missing[:limit]]
    lines += [f"only in inferbench ({len(extra)}): {row}" for row in extra[:limit]]
    return "\n".join(lines)
