"""Stand-in for `srun`, `docker` and `sbcast` inside the parity sandbox (standard library only).

Run by the sandbox's real python3 as `parity_container.py TOOL ARGS...`. Host-side calls
(`srun bash -c ...` without a container, `docker ps`, `sbcast`) run on the sandbox host; a
container launch (`srun --container-image=...`, `docker run IMAGE`) runs its command in a
new mount namespace where each mount of the call is bound at its target, as pyxis and docker
do: the checkout the launcher mounts at `/workspace` IS `/workspace` there, so the scripts
run unchanged and nothing rewrites their paths. A mount whose source the sandbox does not have
(the runners' model and cache folders) becomes an empty folder at its target. The container's
environment follows the call: `--export=ALL,K=V` passes the launcher's environment plus K=V,
docker passes only its `-e`/`--env`/`--env-file` variables. The script's exit status is
written to /oracle/script-rc.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

RECORDS = "/oracle/records"
CONTAINER_RECORDS = "/oracle/container-records"
SANDBOX_KEYS = ("PATH", "HOME", "LANG")  # what the sandbox itself gives every container

DOCKER_VALUE_OPTS = {
    "-v", "--volume", "-w", "--workdir", "-e", "--env", "--env-file", "--name", "--network",
    "--runtime", "--gpus", "--ipc", "--shm-size", "--ulimit", "--entrypoint", "--device",
    "--group-add", "--security-opt", "--cap-add", "-p", "--publish", "--mount", "-u", "--user",
    "--pull", "--label", "--cpus", "--memory", "--hostname", "--add-host",
}  # fmt: skip
SRUN_VALUE_OPTS = {"-N", "-n", "-p", "-J", "-t", "-w", "-c", "-A", "-G", "--jobid", "-o", "-e"}


def _split_opt(arg: str) -> tuple[str, str | None]:
    if arg.startswith("--") and "=" in arg:
        name, value = arg.split("=", 1)
        return name, value
    return arg, None


def _parse(args: list[str], value_opts: set[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """(options as (name, value), the rest from the first non-option)."""
    opts: list[tuple[str, str]] = []
    i = 0
    while i < len(args) and args[i].startswith("-"):
        name, value = _split_opt(args[i])
        if value is None and name in value_opts and i + 1 < len(args):
            value = args[i + 1]
            i += 1
        opts.append((name, value if value is not None else ""))
        i += 1
    return opts, args[i:]


def _env_file(path: str) -> dict[str, str]:
    out: dict[str, str] = {}
    with open(path) as handle:
        for line in handle:
            line = line.strip()
            if line and not line.startswith("#"):
                key, sep, value = line.partition("=")
                if sep:
                    out[key] = value
                elif key in os.environ:
                    out[key] = os.environ[key]
    return out


def _base_env() -> dict[str, str]:
    return {k: os.environ[k] for k in SANDBOX_KEYS if k in os.environ}


def launched(tool: str, args: list[str]) -> tuple[str, list[str]] | None:
    """(workdir, command) of a container launch by `srun`/`docker`; None for other calls."""
    spec = container_spec(tool, args)
    return None if spec is None else (spec[1], spec[3])


def container_spec(tool: str, args: list[str]) -> Spec | None:
    """(mounts, workdir, environment, command) of a container launch; None for other calls.
    The environment is what the call gives the container from the caller's (this process's)."""
    if tool == "docker":
        return _docker_spec(args)
    if tool == "srun":
        return _srun_spec(args)
    return None


Spec = tuple[list[tuple[str, str]], str, dict[str, str], list[str]]


def _docker(args: list[str]) -> int:
    spec = _docker_spec(args)
    return 0 if spec is None else _container(*spec)


def _docker_spec(args: list[str]) -> Spec | None:
    if not args or args[0] != "run":
        return None  # ps, rm, stop, pull, info: nothing to do in the sandbox
    opts, rest = _parse(args[1:], DOCKER_VALUE_OPTS)
    mounts: list[tuple[str, str]] = []
    env = _base_env()
    workdir, entrypoint = "/", None
    for name, value in opts:
        if name in ("-v", "--volume"):
            src, dst = value.split(":")[:2]
            mounts.append((src, dst))
        elif name in ("-w", "--workdir"):
            workdir = value
        elif name in ("-e", "--env"):
            key, sep, val = value.partition("=")
            if sep:
                env[key] = val
            elif key in os.environ:
                env[key] = os.environ[key]
        elif name == "--env-file":
            env.update(_env_file(value))
        elif name == "--entrypoint":
            entrypoint = value
    image, command = rest[0], rest[1:]
    if entrypoint:
        command = [entrypoint, *command]
    del image
    return mounts, workdir, env, command


def _srun(args: list[str]) -> int:
    spec = _srun_spec(args)
    if spec is not None:
        return _container(*spec)
    # a step on the allocated node (squash import, workspace copy): it runs, and succeeds as
    # on the runners, whose storage (/raid/squash, /data/containers) the sandbox lacks
    _, command = _parse(args, SRUN_VALUE_OPTS)
    if command:
        subprocess.run(command, check=False)
    return 0


def _srun_spec(args: list[str]) -> Spec | None:
    opts, command = _parse(args, SRUN_VALUE_OPTS)
    names = {name for name, _ in opts}
    if "--container-image" not in names:
        return None
    mounts: list[tuple[str, str]] = []
    workdir = os.getcwd()
    env = dict(os.environ)
    for name, value in opts:
        if name == "--container-mounts":
            for item in value.split(","):
                if item:
                    src, dst = item.split(":")[:2]
                    mounts.append((src, dst))
        elif name == "--container-workdir":
            workdir = value
        elif name == "--export":
            items = value.split(",")
            if "ALL" not in items:
                env = _base_env()
            for item in items:
                key, sep, val = item.partition("=")
                if sep:
                    env[key] = val
                elif key not in ("ALL", "NONE") and key in os.environ:
                    env[key] = os.environ[key]
    return mounts, workdir, env, command


def _container(
    mounts: list[tuple[str, str]], workdir: str, env: dict[str, str], command: list[str]
) -> int:
    lines = ["set -e"]
    for src, dst in mounts:
        src, dst = src.rstrip("/") or "/", dst.rstrip("/") or "/"
        q_src, q_dst = shlex.quote(src), shlex.quote(dst)
        if os.path.isdir(src):
            lines.append(f"mkdir -p {q_dst} && mount --bind {q_src} {q_dst}")
        else:  # a runner's cache or device the sandbox does not have: an empty folder
            lines.append(f"mkdir -p {q_dst} 2>/dev/null || true")
    # an image keeps its own /workspace where the checkout is mounted elsewhere (/ix)
    lines.append("mkdir -p /workspace")
    lines.append(f"mount --bind {CONTAINER_RECORDS} {RECORDS}")
    lines.append(f"cd {shlex.quote(workdir)}")
    # the container starts in its workdir: the host's PWD means nothing there
    env = {k: v for k, v in env.items() if k not in ("PWD", "OLDPWD")}
    assigns = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    lines.append(f"exec env -i {assigns} {shlex.join(command)}")
    unshare = shutil.which("unshare") or "unshare"
    done = subprocess.run(
        [unshare, "-m", "--propagation", "unchanged", "bash", "-c", "\n".join(lines)], check=False
    )
    with open("/oracle/script-rc", "w") as handle:
        handle.write(f"{done.returncode}\n")
    return done.returncode


def _sbcast(args: list[str]) -> int:
    _, rest = _parse(args, SRUN_VALUE_OPTS)
    if len(rest) == 2:
        shutil.copyfile(rest[0], rest[1])
    return 0


def main() -> int:
    tool, args = sys.argv[1], sys.argv[2:]
    if tool == "docker":
        return _docker(args)
    if tool == "srun":
        return _srun(args)
    return _sbcast(args)


if __name__ == "__main__":
    sys.exit(main())
