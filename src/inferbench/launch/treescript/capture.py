"""Run a staged benchmark script under recording stubs: the engine command lines it starts.

This is how `plan` knows exactly what a script would run (its `if`s on ISL, CONC, EP_SIZE,
its exports, its flag arrays) without reimplementing any of it: the script runs for real,
with engines, downloads and GPU tools replaced (see stubs.py), the sa-bench call recorded by
the shim instead of run, and a time limit. Everything the script writes stays in a temporary
folder (stage.Mounts: its workspace, /tmp, HOME, the mounted caches); paths there are shown
as the container paths (`/workspace`, `/tmp`, ...) InferenceX's launchers give them.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from inferbench.core.lifetime import child_setup
from inferbench.launch.treescript.contract import local_env, run_mounts_for
from inferbench.launch.treescript.model import ScriptCapture, ScriptProcess
from inferbench.launch.treescript.stage import Mounts, stage_workspace
from inferbench.launch.treescript.stubs import CAPTURE_DIR_VAR, write_stubs

DEFAULT_TIMEOUT_S = 60.0
# what bash and the stubs themselves change in every child's environment
_NOISE = frozenset({"_", "SHLVL", "PWD", "OLDPWD", CAPTURE_DIR_VAR})

RECORD_SHIM = f'''"""inferbench plan: records the sa-bench call instead of running it."""
import os
import sys
import time

folder = os.environ["{CAPTURE_DIR_VAR}"]
name = os.path.join(folder, f"{{time.time_ns() // 1000}}-{{os.getpid()}}")
with open(name + ".env", "wb") as handle:
    handle.write(b"".join(f"{{k}}={{v}}".encode() + b"\\0" for k, v in os.environ.items()))
with open(name + ".argv.tmp", "wb") as handle:
    handle.write(b"".join(a.encode() + b"\\0" for a in ["bench", *sys.argv]))
os.replace(name + ".argv.tmp", name + ".argv")
'''


def _read_env(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in path.read_bytes().split(b"\0"):
        key, sep, value = item.decode("utf-8", "replace").partition("=")
        if sep:
            out[key] = value
    return out


def read_records(
    folder: Path, base: Mapping[str, str], mounts: Mounts
) -> tuple[list[ScriptProcess], list[ScriptProcess], list[tuple[str, ...]]]:
    """(engines, bench calls, tools) recorded in `folder`, in call order."""
    engines: list[ScriptProcess] = []
    bench: list[ScriptProcess] = []
    tools: list[tuple[str, ...]] = []
    for argv_file in sorted(folder.glob("*.argv"), key=lambda p: p.name):
        kind, *argv = argv_file.read_bytes().split(b"\0")[:-1]
        args = tuple(mounts.show(a.decode("utf-8", "replace")) for a in argv)
        if kind == b"tool":
            tools.append(args)
            continue
        env = _read_env(argv_file.with_name(argv_file.name.removesuffix(".argv") + ".env"))
        changed = {
            k: mounts.show(v)
            for k, v in sorted(env.items())
            if k not in _NOISE and base.get(k) != v
        }
        process = ScriptProcess(argv=args, env=changed)
        (bench if kind == b"bench" else engines).append(process)
    return engines, bench, tools


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2)


def _tail(path: Path, limit: int = 4000) -> str:
    data = path.read_bytes() if path.is_file() else b""
    return data[-limit:].decode("utf-8", "replace")


def capture_script(
    root: Path,
    script: str,
    contract: Mapping[str, str],
    concurrency: int,
    *,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> ScriptCapture:
    """Run `script` (tree-relative) with `contract` (container paths) under stubs in a
    temporary folder, which holds everything the script writes: its workspace, its /tmp,
    its HOME and the caches the launchers mount."""
    with tempfile.TemporaryDirectory(prefix="inferbench-plan-") as tmp:
        base_dir = Path(tmp).resolve()
        mounts = run_mounts_for(
            contract, base_dir / "workspace", base_dir / "tmp", base_dir / "hf_hub_cache"
        )
        stage_workspace(root, script, mounts, RECORD_SHIM)
        records, stubs = base_dir / "records", base_dir / "bin"
        for folder in (records, base_dir / "home"):
            folder.mkdir()
        system_path = os.environ.get("PATH", os.defpath)
        write_stubs(stubs, system_path)
        env = local_env(contract, mounts)
        env.update(PATH=f"{stubs}:{system_path}", HOME=str(base_dir / "home"), LANG="C.UTF-8")
        base = dict(env)
        env[CAPTURE_DIR_VAR] = str(records)
        log = base_dir / "script.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                ["bash", script],
                cwd=mounts.workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=child_setup(signal.SIGTERM),
            )
            code: int | None
            try:
                code = proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                _kill_group(proc)  # the engine stubs stay up like servers
        engines, bench, tools = read_records(records, base, mounts)
        return ScriptCapture(
            concurrency=concurrency,
            env=dict(contract),
            engines=tuple(engines),
            bench=tuple(bench),
            tools=tuple(tools),
            exit_code=code,
            log_tail=mounts.show(_tail(log)),
        )
