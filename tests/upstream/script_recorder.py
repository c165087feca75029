"""An independent recorder of what an InferenceX benchmark script starts (for the tests).

It shares nothing with inferbench's capture but the job's environment contract: its own copy
of the tree (benchmarks/ and utils/ copied once, `/workspace` replaced with plain text), its
own stand-ins (Python programs appending one JSON line per call), run one script at a time.
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
        base = Path(cache) / (kind_dir + "--" + args[1].replace("/", "--"))
        (base / "refs").mkdir(parents=True, exist_ok=True)
        (base / "refs" / "main").write_text("stub\n")
        local = str(base / "snapshots" / "stub")
    target = Path(local)
    target.mkdir(parents=True, exist_ok=True)
    for name, text in (("config.json", "{{}}"), ("tokenizer_config.json", "{{}}"),
                       ("model.safetensors.index.json", '{{"weight_map": {{}}}}')):
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
        for part in ("benchmarks", "utils"):
            shutil.copytree(tree / part, self.workspace / part, symlinks=True)
        for child in tree.iterdir():
            if not (self.workspace / child.name).exists() and child.name != ".git":
                (self.workspace / child.name).symlink_to(child)
        for script in (self.workspace / "benchmarks").rglob("*.sh"):
            text = script.read_text(errors="surrogateescape")
            script.write_text(_replace_mount(text, str(self.workspace)), errors="surrogateescape")
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
        order, with the workspace written back as /workspace."""
        run = self.home / "run"
        shutil.rmtree(run, ignore_errors=True)
        for sub in ("home", "tmp"):
            (run / sub).mkdir(parents=True)
        shutil.rmtree(self.workspace / "results", ignore_errors=True)
        log = run / "calls.jsonl"
        ws = str(self.workspace)
        full = {k: v.replace("/workspace", ws) for k, v in env.items()}
        full.update(
            PATH=f"{self.bin}:{os.environ.get('PATH', os.defpath)}",
            HOME=str(run / "home"),
            TMPDIR=str(run / "tmp"),
            LANG="C.UTF-8",
            RECORDER_LOG=str(log),
        )
        proc = subprocess.Popen(
            ["bash", script],
            cwd=self.workspace,
            env=full,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):  # the stand-in engines live on
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if not log.is_file():
            return []
        calls = [json.loads(line) for line in log.read_text().splitlines()]
        for call in calls:
            call["argv"] = [a.replace(ws, "/workspace") for a in call["argv"]]
        return calls


def _replace_mount(text: str, workspace: str) -> str:
    """`/workspace` where it is a path of its own (not /sgl-workspace, not /workspace_x)."""
    out, i = [], 0
    while True:
        j = text.find("/workspace", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        before = text[j - 1] if j else " "
        after = text[j + len("/workspace") : j + len("/workspace") + 1]
        own = not (before.isalnum() or before in "_.-") and not (
            after.isalnum() or after in ("_", ".", "-")
        )
        out.append(text[i:j] + (workspace if own else "/workspace"))
        i = j + len("/workspace")
