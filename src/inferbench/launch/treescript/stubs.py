"""Stand-ins put first on PATH while a benchmark script is run to see what it starts.

Engines (the commands and `python3 -m` packages each registered engine's `ScriptNames` lists:
`vllm`, `sglang`, `trtllm-serve`, `mpirun`, `python3 -m sglang...`) record their argv and
environment, then stay up like a server until their process group is killed.
What must not run on a planning machine (downloads, installs, GPU tools, `curl` health polls,
`sleep`, `python3 -m pip`, `python3 -m lm_eval`) records and succeeds at once; `curl`
succeeding is the server answering ready. Every other `python3`/`python` call runs the real
interpreter; a `python3 -c` check that fails only for a module this machine lacks (one the
image has, or a stubbed `pip install` would have put there) is recorded and succeeds. A
record is two files in the capture folder, named by time and pid so they sort in call order:
`<n>.argv` (kind, then argv, NUL separated) and `<n>.env` (`env -0`).
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from inferbench.core.fsio import make_executable
from inferbench.engines.registry import engines

CAPTURE_DIR_VAR = "INFERBENCH_CAPTURE_DIR"
# Not engines, so in no EngineSpec: Dynamo fronts any engine (`python3 -m dynamo.sglang`),
# and Mooncake's master is a KV store several engines' scripts start beside their servers.
FRONT_PACKAGES = ("dynamo",)
SHARED_SERVICES = ("mooncake_master",)
# `python3 -m <module>` that installs or talks to the (stubbed) server: recorded, not run
CLIENT_MODULES = ("pip", "lm_eval")
TOOLS = (
    "hf",
    "huggingface-cli",
    "pip",
    "pip3",
    "uv",
    "nvidia-smi",
    "amd-smi",
    "rocm-smi",
    "curl",
    "wget",
    "apt-get",
    "git",
    "docker",
    "sleep",
)

_RECORD = """record() {
    local n="${EPOCHREALTIME/./}-$BASHPID"
    printf '%s\\0' "$1" "$(basename "$0")" "${@:2}" > "${CAPTURE_DIR}/$n.argv.tmp"
    env -0 > "${CAPTURE_DIR}/$n.env"
    mv "${CAPTURE_DIR}/$n.argv.tmp" "${CAPTURE_DIR}/$n.argv"
}
""".replace("CAPTURE_DIR", CAPTURE_DIR_VAR)


def _stub(body: str) -> str:
    return f"#!/usr/bin/env bash\n# inferbench capture stub\n{_RECORD}{body}"


def _engine(sleep: str) -> str:
    return _stub(f'record engine "$@"\nexec {shlex.quote(sleep)} 86400\n')


# What a tool's stand-in leaves behind, where scripts check for it:
# - `uv venv DIR`: the tools benchmark_lib.sh checks for (aiperf, hf) in DIR/bin;
# - `hf download REPO [--local-dir DIR]`: an empty but complete-looking checkpoint (config,
#   tokenizer config, an index naming one empty shard, which is there: the minimaxm3 scripts
#   check that every indexed shard exists) in DIR or the Hugging Face cache, its path printed;
# - `rocm-smi --showmemuse`: idle GPUs (what wait_for_amd_gpu_clean polls for);
# - `aiperf profile --output-artifact-dir DIR`: empty artifact files, the server's carrying
#   one metric of the prefix the script requires (validate_required_agentic_server_metrics).
_TOOL_BODY = r"""record tool "$@"
tool="$(basename "$0")"
if [[ "$tool" == aiperf && "$1" == profile ]]; then
    dir=""
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --output-artifact-dir) dir="$2"; shift 2 ;;
            *) shift ;;
        esac
    done
    if [[ -n "$dir" ]]; then
        mkdir -p "$dir"
        : > "$dir/profile_export.jsonl"
        echo '{}' > "$dir/profile_export_aiperf.json"
        metric="${AIPERF_REQUIRED_SERVER_METRIC_PREFIX:-}stub"
        printf '{"metrics": {"%s": {}}}\n' "$metric" > "$dir/server_metrics_export.json"
        printf 'metric\n%s\n' "$metric" > "$dir/server_metrics_export.csv"
    fi
elif [[ "$tool" == uv && "$1" == venv ]]; then
    for a in "$@"; do dir="$a"; done
    mkdir -p "$dir/bin"
    for t in aiperf hf python; do cp "$0" "$dir/bin/$t"; done
elif [[ ( "$tool" == hf || "$tool" == huggingface-cli ) && "$1" == download ]]; then
    repo="" dir="" kind=models
    shift
    while [[ $# -gt 0 ]]; do
        case "$1" in
            --local-dir) dir="$2"; shift 2 ;;
            --repo-type) kind="$2s"; shift 2 ;;
            --*) shift ;;
            *) [[ -n "$repo" ]] || repo="$1"; shift ;;
        esac
    done
    if [[ -z "$dir" ]]; then
        cache="${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}"
        base="$cache/$kind--${repo//\//--}"
        mkdir -p "$base/refs" "$base/snapshots/stub"
        echo stub > "$base/refs/main"
        dir="$base/snapshots/stub"
    fi
    mkdir -p "$dir"
    for f in config.json tokenizer_config.json; do
        [[ -e "$dir/$f" ]] || echo '{}' > "$dir/$f"
    done
    if [[ ! -e "$dir/model.safetensors.index.json" ]]; then
        echo '{"weight_map": {"stub": "model-stub.safetensors"}}' \
            > "$dir/model.safetensors.index.json"
        : > "$dir/model-stub.safetensors"
    fi
    echo "$dir"
elif [[ "$tool" == rocm-smi && " $* " == *" --showmemuse "* ]]; then
    echo "GPU[0]          : GPU Memory Allocated (VRAM%): 0"
fi
exit 0
"""


def _tool() -> str:
    return _stub(_TOOL_BODY)


def engine_commands() -> tuple[str, ...]:
    """Executables that start an engine's server, of every registered engine."""
    return tuple(dict.fromkeys(c for s in engines() if s.script for c in s.script.commands))


def engine_packages() -> tuple[str, ...]:
    """`python3 -m <package>...` packages that start a server (routers and fronts too)."""
    modules = (m for s in engines() if s.script for m in s.script.modules)
    return tuple(dict.fromkeys((*modules, *FRONT_PACKAGES)))


def services() -> tuple[str, ...]:
    """Servers a script starts beside its engine: recorded as tools, up until the group is
    killed."""
    extra = (name for s in engines() if s.script for name in s.script.services)
    return tuple(dict.fromkeys((*SHARED_SERVICES, *extra)))


def _python(real: str, sleep: str) -> str:
    packages = "|".join(f"{p}|{p}.*" for p in engine_packages())
    clients = "|".join(CLIENT_MODULES)
    python = shlex.quote(real)
    return _stub(
        'if [[ "$1" == -m ]]; then\n'
        '    case "$2" in\n'
        f"        {packages})\n"
        f'            record engine "$@"; exec {shlex.quote(sleep)} 86400 ;;\n'
        f'        {clients}) record tool "$@"; exit 0 ;;\n'
        "    esac\n"
        "fi\n"
        # `python3 -c 'from mooncake.store import ...'` checks what a stubbed `pip install`
        # would have installed in the image: a module missing here is the image's, not a
        # failure of the script
        'if [[ "$1" == -c ]]; then\n'
        '    err="$(mktemp)"\n'
        f'    {python} "$@" 2> "$err"; rc=$?\n'
        '    cat "$err" >&2\n'
        '    if [[ $rc -ne 0 ]] && grep -q "^ModuleNotFoundError" "$err"; then\n'
        '        rm -f "$err"; record tool "$@"; exit 0\n'
        "    fi\n"
        '    rm -f "$err"; exit $rc\n'
        "fi\n"
        f'exec {python} "$@"\n'
    )


@functools.cache
def real_python(path: str) -> str:
    """The interpreter other `python3` calls reach: the system's, else inferbench's own. A
    version manager's shim (pyenv) is resolved to the interpreter it starts: the shim adds
    its own variables (PYENV_*, PATH) to what the script gave the call, and a plan would show
    them as the sa-bench call's environment."""
    found = shutil.which("python3", path=path)
    if found is None:
        return sys.executable
    try:
        done = subprocess.run(
            [found, "-c", "import sys; print(sys.executable)"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return found
    resolved = done.stdout.strip()
    return resolved if done.returncode == 0 and Path(resolved).is_file() else found


def write_stubs(folder: Path, path: str) -> None:
    """Write the stubs into `folder` (to go first on PATH); `path` is the PATH they shadow."""
    folder.mkdir(parents=True, exist_ok=True)
    sleep = shutil.which("sleep", path=path) or "/bin/sleep"
    scripts = {name: _engine(sleep) for name in engine_commands()}
    service = _stub(f'record tool "$@"\nexec {shlex.quote(sleep)} 86400\n')
    scripts.update({name: service for name in services()})
    scripts.update({name: _tool() for name in TOOLS})
    python = _python(real_python(path), sleep)
    scripts.update({"python3": python, "python": python})
    for name, text in scripts.items():
        (folder / name).write_text(text, encoding="utf-8")
        make_executable(folder / name)
