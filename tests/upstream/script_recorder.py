"""An independent recorder of what an InferenceX benchmark script starts (for the tests).

It shares nothing with inferbench's capture but the job's environment contract: its own copy
of the tree (benchmarks/ and utils/ copied once, the container paths `/workspace` and `/tmp`
replaced with plain text wherever a path starts with them, `${X:-/workspace}` included), its
own stand-ins (Python programs appending one JSON line per call), run one script at a time.
The contract's container paths (the workspace, /tmp, the HF cache mount) are folders of its
own too, so nothing a script writes lands outside the recorder's folder.
The stand-ins give the script the same world as a GPU node where the server comes up: engines
stay alive, curl answers, downloads leave a checkpoint, rocm-smi shows idle GPUs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

ENGINE_MODULES = ("sglang", "sglang_router", "vllm", "atom", "tensorrt_llm", "dynamo")

_STUB = r"""#!{python}
import json, os, sys, time
from pathlib import Path

tool = os.path.basename(sys.argv[0])
args = sys.argv[1:]
kind = "tool"
if tool in ("vllm", "sglang", "trtllm-serve", "mpirun"):
    kind = "engine"
elif tool in ("python", "python3"):
    if len(args) > 1 and args[0] == "-m" and args[1].split(".")[0] in {modules!r}:
        kind = "engine"
    elif len(args) > 1 and args[0] == "-m" and args[1] == "pip":
        kind = "tool"
    else:
        os.execv({real_python!r}, [{real_python!r}, *args])
with open(os.environ["RECORDER_LOG"], "a") as log:
    log.write(json.dumps({{"kind": kind, "argv": [tool, *args]}}) + "\n")
if kind == "engine":
    time.sleep(3600)
if tool == "uv" and args[:1] == ["venv"]:
    bin_dir = Path(args[-1]) / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in ("aiperf", "hf", "python"):
        (bin_dir / name).write_text(Path(sys.argv[0]).read_text())
        (bin_dir / name).chmod(0o755)
if tool in ("hf", "huggingface-cli") and args[:1] == ["download"]:
    local = args[args.index("--local-dir") + 1] if "--local-dir" in args else None
    if local is None:
        kind_dir = "datasets" if "dataset" in args else "models"
        cache = os.environ.get("HF_HUB_CACHE") or os.path.join(
            os.environ.get("HF_HOME") or os.path.expanduser("~/.cache/huggingface"), "hub")
        repo = next(a for i, a in enumerate(args[1:], 1)
                    if not a.startswith("--") and not args[i - 1].startswith("--"))
        base = Path(cache) / (kind_dir + "--" + repo.replace("/", "--"))
        (base / "refs").mkdir(parents=True, exist_ok=True)
        (base / "refs" / "main").write_text("stub\n")
        local = str(base / "snapshots" / "stub")
    target = Path(local)
    target.mkdir(parents=True, exist_ok=True)
    index = '{{"weight_map": {{"w": "w.safetensors"}}}}'
    for name, text in (("config.json", "{{}}"), ("tokenizer_config.json", "{{}}"),
                       ("model.safetensors.index.json", index), ("w.safetensors", "")):
        if not (target / name).exists():
            (target / name).write_text(text + "\n")
    print(local)
if tool == "rocm-smi" and "--showmemuse" in args:
    print("GPU[0]          : GPU Memory Allocated (VRAM%): 0")
"""

STUBBED = (
    "vllm", "sglang", "trtllm-serve", "mpirun", "python", "python3", "hf", "huggingface-cli",
    "pip", "pip3", "uv", "nvidia-smi", "amd-smi", "rocm-smi", "curl", "wget", "apt-get", "git",
    "docker", "sleep",
)  # fmt: skip


class Recorder:
    """A copy of the tree under `home` and stand-ins on PATH; `record` runs one script."""

    def __init__(self, tree: Path, home: Path) -> None:
        self.home = home
        self.workspace = home / "ws"
        self.tmp = home / "tmp"
        self.exit_code: int | None = None  # the last recorded script's (None: cut at the limit)
        self.log = ""  # the last recorded script's output
        for part in ("benchmarks", "utils"):
            shutil.copytree(tree / part, self.workspace / part, symlinks=True)
        for child in tree.iterdir():
            if not (self.workspace / child.name).exists() and child.name != ".git":
                (self.workspace / child.name).symlink_to(child)
        for script in (self.workspace / "benchmarks").rglob("*.sh"):
            text = script.read_text(errors="surrogateescape")
            mounts = {"/workspace": str(self.workspace), "/tmp": str(self.tmp)}
            script.write_text(_replace_mounts(text, mounts), errors="surrogateescape")
        shim = self.workspace / "utils/bench_serving/benchmark_serving.py"
        shim.write_text(
            "import json, os, sys\n"
            "with open(os.environ['RECORDER_LOG'], 'a') as log:\n"
            "    log.write(json.dumps({'kind': 'bench', 'argv': sys.argv}) + '\\n')\n"
        )
        self.bin = home / "bin"
        self.bin.mkdir()
        real_python = shutil.which("python3") or sys.executable
        text = _STUB.format(python=sys.executable, real_python=real_python, modules=ENGINE_MODULES)
        for name in STUBBED:
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)

    def record(
        self, script: str, env: Mapping[str, str], timeout_s: float = 60
    ) -> list[dict[str, object]]:
        """Run `script` (tree-relative) with `env` (built for /workspace); the calls made, in
        order, with the folders written back as the container paths (/workspace, /tmp, the
        HF cache mount)."""
        run = self.home / "run"
        for folder in (run, self.tmp):
            shutil.rmtree(folder, ignore_errors=True)
        for folder in (run / "home", run / "hf", self.tmp):
            folder.mkdir(parents=True)
        shutil.rmtree(self.workspace / "results", ignore_errors=True)
        log = run / "calls.jsonl"
        ws = str(self.workspace)
        mounts = {"/workspace": ws, "/tmp": str(self.tmp), "/mnt/hf_hub_cache": str(run / "hf")}
        full = {k: _replace_mounts(v, mounts) for k, v in env.items()}
        full.update(
            PATH=f"{self.bin}:{os.environ.get('PATH', os.defpath)}",
            HOME=str(run / "home"),
            TMPDIR=str(self.tmp),
            LANG="C.UTF-8",
            RECORDER_LOG=str(log),
        )
        with (run / "script.log").open("wb") as out:
            proc = subprocess.Popen(
                ["bash", script],
                cwd=self.workspace,
                env=full,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self.exit_code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.exit_code = None
        finally:
            with contextlib.suppress(ProcessLookupError):  # the stand-in engines live on
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        self.log = (run / "script.log").read_text(errors="replace")
        if not log.is_file():
            return []
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        back = sorted(((local, c) for c, local in mounts.items()), key=lambda m: -len(m[0]))
        for call in calls:
            argv = call["argv"]
            for local, container in back:  # the folders shown as the container's paths
                argv = [a.replace(local, container) for a in argv]
            call["argv"] = argv
        return calls


def _replace_mounts(text: str, mounts: Mapping[str, str]) -> str:
    """Each of `mounts` (container path -> local folder) where a path starts with it
    (`/workspace`, `/workspace/x`, `:-/workspace}`), not where it is the tail of another path
    (`/sgl-workspace`, `~/workspace`, `${D}/workspace`) or the head of another name
    (`/workspace_x`, `/tmpfs`); in one pass, so a local folder under /tmp stays as it is."""
    out, i = [], 0
    while i < len(text):
        for mount in sorted(mounts, key=len, reverse=True):
            if not text.startswith(mount, i):
                continue
            before = text[i - 1] if i else " "
            after = text[i + len(mount) : i + len(mount) + 1]
            tail_of_path = before.isalnum() or before in "_.~})/"
            if tail_of_path or after.isalnum() or after in ("_", ".", "-"):
                continue
            out.append(mounts[mount])
            i += len(mount)
            break
        else:
            out.append(text[i])
            i += 1
    return "".join(out)
