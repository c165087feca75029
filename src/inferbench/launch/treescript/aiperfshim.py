"""`aiperf profile` as benchmark_lib.sh calls it, run as `inferbench replay` (a local run).

InferenceX replays agentic traces with its aiperf fork, installed by the script into a venv
(`install_agentic_deps`). In a local run that venv's `aiperf` is this stand-in, as sa-bench's
`benchmark_serving.py` is `inferbench bench`: the same server, model, tokenizer, lanes
(`--concurrency`), window (`--benchmark-duration`) and context cap, inferbench's replay
client, and aiperf's artifact files in `--output-artifact-dir`, which the script's own
post-processing (`process_agentic_result`, `validate_agentic_result`) then reads. The traces
are the job's plan's (a trace file, else synthetic sessions): aiperf's `--public-dataset`
corpus is not on this machine, and the log says so. inferbench's own result file goes where
the run asks (INFERBENCH_REPLAY_RESULT).
"""

from __future__ import annotations

import os
import sys

RESULT_VAR = "INFERBENCH_REPLAY_RESULT"
TRACE_VAR = "INFERBENCH_REPLAY_TRACE"
SYNTH_VAR = "INFERBENCH_REPLAY_SYNTH"
# aiperf option -> inferbench replay option (the values pass unchanged)
_SAME = {
    "--model": "--model",
    "--tokenizer": "--tokenizer",
    "--concurrency": "--concurrency",
    "--benchmark-duration": "--duration",
    "--output-artifact-dir": "--aiperf-artifacts",
    "--max-context-length": "--max-model-len",
    "--random-seed": "--seed",
}


def _options(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """aiperf's `--name value` pairs and its bare flags (a flag is followed by an option)."""
    values: dict[str, str] = {}
    flags: list[str] = []
    i = 0
    while i < len(argv):
        name = argv[i]
        if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            values[name] = argv[i + 1]
            i += 2
        else:
            flags.append(name)
            i += 1
    return values, flags


def replay_argv(argv: list[str], environ: dict[str, str]) -> list[str]:
    """The `inferbench replay` arguments for aiperf's `profile ...` arguments."""
    if not argv or argv[0] != "profile":
        raise SystemExit(f"inferbench's aiperf stand-in runs `aiperf profile`, not {argv[:1]}")
    values, _ = _options(argv[1:])
    out = ["replay", "--endpoint", "chat", "--base-url", values.get("--url", "")]
    for aiperf, ours in _SAME.items():
        if aiperf in values:
            out += [ours, values[aiperf]]
    if trace := environ.get(TRACE_VAR):
        out += ["--trace", trace]
    else:
        out += ["--synth", environ.get(SYNTH_VAR, "")]
    if result := environ.get(RESULT_VAR):
        out += ["--output", result]
    return out


def main() -> None:
    args = replay_argv(sys.argv[1:], dict(os.environ))
    values, _ = _options(sys.argv[2:])
    dataset = values.get("--public-dataset")
    source = os.environ.get(TRACE_VAR) or f"synthetic sessions ({os.environ.get(SYNTH_VAR, '')})"
    instead = f" instead of aiperf's public dataset {dataset} (not on this machine)"
    print(
        f"inferbench: aiperf stand-in: `inferbench replay` of {source}"
        + (instead if dataset else "")
        + ", aiperf's artifact files in --output-artifact-dir",
        file=sys.stderr,
        flush=True,
    )
    os.execv(sys.executable, [sys.executable, "-m", "inferbench.cli.main", *args])


if __name__ == "__main__":
    main()
