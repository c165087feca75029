"""A sandboxed GitHub runner that runs InferenceX's launch step with stand-ins (for the tests).

Shares no code with inferbench. The launch step of `benchmark-tmpl.yml` runs unchanged in a
private root (user and mount namespaces, `unshare -rm`, then `chroot`): the system's
folders are bound read-only, everything else (/tmp, /home, /mnt, /var, /workspace, ...) is
an empty folder of the sandbox, so what a launcher or script writes lands in the test's tmp
folder. The checkout at GITHUB_WORKSPACE is the tree read-only under an overlay that takes
what the run writes. On PATH first, stand-ins
(bash) record each call they take: engines (`vllm`, `trtllm-serve`, `python3 -m sglang...`)
record and stay up like a server; the sa-bench client (`python3 .../benchmark_serving.py`)
records and returns, as does the eval harness (`python3 -m lm_eval`); downloads, installs,
Slurm, GPU tools and `sleep` record and succeed (`hf download` leaves a checkpoint's files,
`aiperf profile` its artifact files, `salloc` grants job 4242); every other python3 call runs
the real interpreter. `srun`/`docker` are parity_container.py, which runs the benchmark
script in a container-like mount namespace. A record is the call's argv and its whole
environment, in call order, tagged host or container. `select` runs many launch steps up to
their launcher with srun/docker only recording: the launcher's own choice of script.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .parity_workflow import LaunchStep

WORKSPACE = "/gh/ws"  # GITHUB_WORKSPACE inside the sandbox (a runner's checkout path)
CONTAINER_PY = Path(__file__).with_name("parity_container.py")
# top-level folders of the machine the sandbox sees read-only (the system); the rest of `/`
# is the sandbox's own, empty
WRITABLE_TOP = {"tmp", "workspace", "mnt", "media", "srv", "home", "var", "run", "boot"}
DEVICES = ("dev", "proc", "sys")
ENGINES = ("vllm", "sglang", "trtllm-serve", "mpirun")
ENGINE_MODULES = ("vllm", "sglang", "sglang_router", "tensorrt_llm", "atom", "dynamo")
TOOLS = (
    "hf", "huggingface-cli", "pip", "pip3", "uv", "nvidia-smi", "amd-smi", "rocm-smi", "curl",
    "wget", "apt-get", "git", "sleep", "enroot", "unsquashfs", "salloc", "squeue", "scancel",
    "sinfo", "scontrol", "aiperf",
)  # fmt: skip
# What the Actions runner itself sets for a step (not InferenceX): the launchers read them
RUNNER_ENV = {
    "CI": "true",
    "GITHUB_ACTIONS": "true",
    "GITHUB_WORKSPACE": WORKSPACE,
    "GITHUB_ENV": "/oracle/github_env",
    "USER": "runner",
    "HOME": "/oracle/home",
    "LANG": "C.UTF-8",
}

_RECORD = r"""
record() {
    local dir="${ORACLE_RECORDS:-/oracle/records}" n="${EPOCHREALTIME/./}-$BASHPID"
    [[ -n "${ORACLE_RECORDS:-}" ]] || env -0 > "$dir/$n.env"
    printf '%s\0' "$@" > "$dir/$n.tmp"
    mv "$dir/$n.tmp" "$dir/$n.argv"  # whole or not at all: the sandbox may be killed here
}
"""

_ENGINE = """
record engine "${0##*/}" "$@"
exec @SLEEP@ 86400
"""

_PYTHON = r"""
if [[ "$1" == -m ]]; then
    case "${2%%.*}" in
        MODULES) record engine "${0##*/}" "$@"; exec @SLEEP@ 86400 ;;
        # installs, and the eval harness (a client of the server, as sa-bench is)
        pip|lm_eval) record tool "${0##*/}" "$@"; exit 0 ;;
    esac
fi
script=""
for a in "$@"; do
    case "$a" in -*) ;; *) script="$a"; break ;; esac
done
if [[ "$(basename -- "$script")" == benchmark_serving.py ]]; then
    record bench "${0##*/}" "$@"
    exit 0
fi
exec @PYTHON@ "$@"
"""

_TOOL = r"""
record tool "${0##*/}" "$@"
tool="${0##*/}"
case "$tool" in
uv)
    if [[ "$1" == venv ]]; then
        for a in "$@"; do dir="$a"; done
        mkdir -p "$dir/bin"
        for t in aiperf hf; do cp /oracle/bin/aiperf "$dir/bin/$t"; done
        cp /oracle/bin/python3 "$dir/bin/python"
        printf '' > "$dir/bin/activate"
    fi ;;
hf|huggingface-cli)
    if [[ "$1" == download ]]; then
        repo="$2" dir="" kind=models
        shift 2
        while [[ $# -gt 0 ]]; do
            case "$1" in
                --local-dir) dir="$2"; shift 2 ;;
                --repo-type) kind="$2s"; shift 2 ;;
                *) shift ;;
            esac
        done
        if [[ -z "$dir" ]]; then
            cache="${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}"
            base="${cache%/}/$kind--${repo//\//--}"
            mkdir -p "$base/refs" "$base/snapshots/oracle"
            echo oracle > "$base/refs/main"
            dir="$base/snapshots/oracle"
        fi
        mkdir -p "$dir"
        for f in config.json tokenizer_config.json tokenizer.json; do
            [[ -e "$dir/$f" ]] || echo '{}' > "$dir/$f"
        done
        # a complete checkpoint: an index and the one (empty) shard it names
        [[ -e "$dir/model.safetensors.index.json" ]] ||
            echo '{"weight_map": {"w": "model-00001-of-00001.safetensors"}}' \
                > "$dir/model.safetensors.index.json"
        [[ -e "$dir/model-00001-of-00001.safetensors" ]] ||
            printf '' > "$dir/model-00001-of-00001.safetensors"
        echo "$dir"
    fi ;;
aiperf)
    # a replay that ran: its artifact files, the server's with one metric of the prefix a
    # script may require (AIPERF_REQUIRED_SERVER_METRIC_PREFIX)
    if [[ "$1" == profile ]]; then
        out=""
        while [[ $# -gt 0 ]]; do
            [[ "$1" == --output-artifact-dir ]] && out="$2"
            shift
        done
        if [[ -n "$out" ]]; then
            mkdir -p "$out"
            printf '' > "$out/profile_export.jsonl"
            echo '{}' > "$out/profile_export_aiperf.json"
            name="${AIPERF_REQUIRED_SERVER_METRIC_PREFIX:-}oracle"
            echo "{\"metrics\": {\"$name\": {}}}" > "$out/server_metrics_export.json"
            printf 'metric\n%s\n' "$name" > "$out/server_metrics_export.csv"
        fi
    fi ;;
rocm-smi)
    [[ " $* " != *" --showmemuse "* ]] ||
        echo "GPU[0]          : GPU Memory Allocated (VRAM%): 0" ;;
salloc)
    echo "salloc: Granted job allocation 4242" >&2 ;;
squeue)
    [[ " $* " == *"%A"* || " $* " == *"%i"* ]] && echo 4242 ;;
esac
exit 0
"""

# in selection mode (ORACLE_RECORDS set) srun and docker only record: the launcher's last
# call names the script
_CONTAINER = """
record tool "${0##*/}" "$@"
[[ -z "${ORACLE_RECORDS:-}" ]] || exit 0
exec @PYTHON@ -I -S /oracle/container.py "${0##*/}" "$@"
"""


@dataclass(frozen=True)
class Call:
    """One recorded call: where (host or container), what kind, argv (tool name first)."""

    side: str
    kind: str  # engine, bench, tool
    argv: tuple[str, ...]
    env: dict[str, str]


@dataclass(frozen=True)
class Recording:
    calls: tuple[Call, ...]
    script_rc: int | None  # the benchmark script's exit status; None: not run or cut short
    step_rc: int | None  # the launch step's; None: cut at the time limit
    log: str

    def of(self, side: str, kind: str) -> list[Call]:
        return [c for c in self.calls if c.side == side and c.kind == kind]


def _script(body: str) -> str:
    return f"#!/bin/bash\n{_RECORD}{body}"


def _system_path() -> str:
    return os.environ.get("PATH", os.defpath)


def _which(name: str) -> str:
    found = shutil.which(name, path=_system_path())
    if found is None:
        raise RuntimeError(f"{name} not found on PATH")
    return found


def _write(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


class Sandbox:
    """A sandbox root under `home` for one run of the launch step."""

    def __init__(self, tree: Path, home: Path) -> None:
        for path in (tree, home):
            if not re.fullmatch(r"[A-Za-z0-9_./+-]+", str(path)):
                raise ValueError(f"{path}: the sandbox mounts it, so plain characters only")
        self.tree = tree.resolve()
        self.root = home.resolve() / "root"
        # the interpreter itself, not a version manager's shim that rewrites PATH
        self.python = subprocess.run(
            [_which("python3"), "-c", "import sys; print(sys.executable)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        self.sleep = _which("sleep")

    def _prepare(self) -> None:
        root = self.root
        oracle = root / "oracle"
        for sub in ("bin", "records", "container-records", "home"):
            (oracle / sub).mkdir(parents=True)
        (oracle / "github_env").write_text("")
        shutil.copyfile(CONTAINER_PY, oracle / "container.py")
        bin_dir = oracle / "bin"
        scripts = {name: _ENGINE for name in ENGINES}
        scripts.update({name: _TOOL for name in TOOLS})
        scripts.update({name: _CONTAINER for name in ("srun", "docker", "sbcast")})
        scripts["python3"] = scripts["python"] = _PYTHON.replace(
            "MODULES", "|".join(ENGINE_MODULES)
        )
        for name, body in scripts.items():
            body = body.replace("@SLEEP@", self.sleep).replace("@PYTHON@", self.python)
            _write(bin_dir / name, _script(body))
        _write(bin_dir / "sudo", _script('record tool sudo "$@"\nexec "$@"\n'))
        for sub in ("upper", "overlay-work"):
            (self.root.parent / sub).mkdir()

    def _mount_script(self) -> str:
        root = str(self.root)
        home = self.root.parent
        # the checkout: the tree read-only under what the run writes (an overlay, no copy)
        lines = [
            "set -e",
            f"mkdir -p {root}{WORKSPACE}",
            f"mount -t overlay overlay -o lowerdir={self.tree},upperdir={home}/upper,"
            f"workdir={home}/overlay-work {root}{WORKSPACE}",
        ]
        for entry in sorted(Path("/").iterdir()):
            name = entry.name
            target = f"{root}/{name}"
            if entry.is_symlink():
                lines.append(f"ln -sfn {os.readlink(entry)!s} {target}")
            elif not entry.is_dir() or name in WRITABLE_TOP or name == "oracle":
                lines.append(f"mkdir -p {target}")
            elif name in DEVICES:
                lines.append(f"mkdir -p {target} && mount --rbind /{name} {target}")
            else:
                lines.append(
                    f"mkdir -p {target} && mount --rbind /{name} {target} && "
                    f"mount -o remount,bind,ro {target}"
                )
        return "\n".join(lines)

    def _env(self, step: LaunchStep, **extra: str) -> str:
        env = {**step.env, **RUNNER_ENV, "PATH": f"/oracle/bin:{_system_path()}", **extra}
        return " ".join(_quote(f"{k}={v}") for k, v in env.items())

    def _enter(self, inner: str, log: Path, timeout_s: float) -> int | None:
        """Run `inner` (bash) as root of the sandbox; its exit status, None when cut."""
        command = f"{self._mount_script()}\nexec chroot {self.root} /bin/bash -c {_quote(inner)}"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                ["unshare", "-rm", "--propagation", "private", "bash", "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                return proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return None
            finally:
                with contextlib.suppress(ProcessLookupError):  # the engine stand-ins live on
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def select(self, steps: list[LaunchStep], timeout_s: float = 600) -> list[list[Call]]:
        """Run each launch step with srun/docker only recording (nothing is started in a
        container): the host calls of each, in order."""
        self._prepare()
        lines = []
        for i, step in enumerate(steps):
            records = f"/oracle/select/{i}"
            (self.root / records.lstrip("/")).mkdir(parents=True)
            (self.root / "oracle" / f"select-{i}.sh").write_text(_through_launcher(step.script))
            env = self._env(step, ORACLE_RECORDS=records)
            lines.append(
                f"(cd {WORKSPACE} && exec env -i {env} timeout 30 bash -e /oracle/select-{i}.sh)"
                " >/dev/null 2>&1 </dev/null"
            )
        (self.root / "oracle" / "select.sh").write_text("\n".join(lines) + "\n")
        rc = self._enter("bash /oracle/select.sh", self.root.parent / "select.log", timeout_s)
        if rc is None:
            raise AssertionError(f"selecting scripts for {len(steps)} jobs took over {timeout_s} s")
        return [
            [
                call
                for _, call in sorted(
                    _read(self.root / "oracle" / "select" / str(i), "host"), key=lambda p: p[0]
                )
            ]
            for i in range(len(steps))
        ]

    def run(self, step: LaunchStep, timeout_s: float = 90) -> Recording:
        """Run the launch step for real (the benchmark script in its container)."""
        self._prepare()
        (self.root / "oracle" / "step.sh").write_text(step.script)
        inner = f"cd {WORKSPACE} && exec env -i {self._env(step)} bash -e /oracle/step.sh"
        log = self.root.parent / "step.log"
        step_rc = self._enter(inner, log, timeout_s)
        rc_file = self.root / "oracle" / "script-rc"
        script_rc = int(rc_file.read_text()) if rc_file.is_file() else None
        calls = _read(self.root / "oracle" / "records", "host")
        calls += _read(self.root / "oracle" / "container-records", "container")
        calls.sort(key=lambda p: p[0])
        return Recording(
            calls=tuple(call for _, call in calls),
            script_rc=script_rc,
            step_rc=step_rc,
            log=log.read_text(errors="replace")[-4000:],
        )


_LAUNCHER_LINE = re.compile(r"^[ \t]*bash \./runners/launch_.*$", re.M)


def _through_launcher(script: str) -> str:
    """The launch step up to its launcher call (what follows only checks the results)."""
    match = _LAUNCHER_LINE.search(script)
    if match is None:
        raise AssertionError("the launch step no longer runs bash ./runners/launch_*.sh")
    return script[: match.end()] + "\n"


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _read(folder: Path, side: str) -> list[tuple[tuple[int, int], Call]]:
    out = []
    for argv_file in folder.glob("*.argv"):
        stamp, pid = argv_file.stem.split("-")
        kind, *argv = argv_file.read_bytes().split(b"\0")[:-1]
        env: dict[str, str] = {}
        env_file = argv_file.with_suffix(".env")
        for item in env_file.read_bytes().split(b"\0") if env_file.is_file() else ():
            key, sep, value = item.decode(errors="replace").partition("=")
            if sep:
                env[key] = value
        call = Call(side, kind.decode(), tuple(a.decode(errors="replace") for a in argv), env)
        out.append(((int(stamp), int(pid)), call))
    return out
