"""The sa-bench command lines InferenceX really builds, expanded by bash from its own files.

`run_benchmark_serving` (benchmarks/benchmark_lib.sh) parses a launcher's arguments and
builds sa-bench's argv in `benchmark_cmd=( ... )`. Nothing here retypes that list: bash runs
the library's own code, cut where it would start sa-bench, and prints the argv instead.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

SCRIPT_FOLDERS = ("fixed_seq_len", "agentic")  # benchmarks/single_node/<folder>/*.sh
_RUN_MARK = "    # Run benchmark with optional server monitoring"
# a call and its continuation lines (each ending in a backslash)
_CALL = re.compile(r"^[ \t]*run_benchmark_serving\b(?:[^\n]*\\\n)*[^\n]*", re.M)
_PRINT_ARGV = "    printf '%s\\0' \"${benchmark_cmd[@]}\"\n"


@dataclass(frozen=True)
class Call:
    """One `run_benchmark_serving` call of a launcher script, as written."""

    script: Path
    text: str


def _library_body(benchmark_lib: Path) -> str:
    text = benchmark_lib.read_text()
    body = text[text.index("run_benchmark_serving() {") :]
    return body[: body.index(_RUN_MARK)]


def _argv(out: bytes) -> list[str]:
    argv = out.decode().split("\0")[:-1]
    assert argv[0] == "python3" and argv[1].endswith("utils/bench_serving/benchmark_serving.py")
    return argv[2:]


def sa_bench_argv(benchmark_lib: Path, values: dict[str, str]) -> list[str]:
    """The argv `run_benchmark_serving` builds from its local variables set to `values`."""
    body = _library_body(benchmark_lib)
    block = body[body.index("    local benchmark_cmd=(") :]
    assigns = "\n".join(f"    local {k}={_sh(v)}" for k, v in values.items())
    script = f"f() {{\n    local profile_flag=()\n{assigns}\n{block}\n{_PRINT_ARGV}}}\nf\n"
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return _argv(out)


def launcher_calls(inferencex_tree: Path) -> list[Call]:
    """Every `run_benchmark_serving` call of the single-node launchers (not deprecated/)."""
    root = inferencex_tree / "benchmarks" / "single_node"
    scripts = sorted(p for folder in SCRIPT_FOLDERS for p in (root / folder).glob("*.sh"))
    return [
        Call(script, match.group(0))
        for script in scripts
        for match in _CALL.finditer(script.read_text())
    ]


def call_argv(benchmark_lib: Path, call: Call, env: dict[str, str], cwd: Path) -> list[str]:
    """The sa-bench argv of `call`, with the launcher's variables set to `env`: the library's
    own argument parsing runs; a call it refuses raises CalledProcessError (its message in
    stdout, as the library prints it)."""
    exports = "".join(f"export {k}={_sh(v)}\n" for k, v in env.items())
    script = (
        f"unset EVAL_ONLY PROFILE\n{exports}"
        f"{_library_body(benchmark_lib)}{_PRINT_ARGV}}}\n{call.text}\n"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, cwd=cwd, check=True)
    return _argv(done.stdout)


def _sh(value: str) -> str:
    return "'" + value.replace("'", "'\\''") + "'"
