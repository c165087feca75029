"""Ports chosen on the machine that binds them.

A plan written on the login node names a fixed port for a real engine's server (8000 unless
`--port` says otherwise). Inside a Slurm allocation that port may already be taken: two
single-GPU jobs share a node, or another user's server runs there. So the allocation picks a
free port on its own node and moves the server's port flag to it before starting it.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from inferbench.launch.plan import Plan, ProcessSpec


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on at `host` now (the kernel's pick)."""
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _moved(argv: tuple[str, ...], old: int, new: int) -> tuple[str, ...] | None:
    """`argv` with every port flag that names `old` (`--port 8000`, `--server-port 8000`,
    `--port=8000`) naming `new`; None when no port flag names it."""
    out = list(argv)
    hits = 0
    for i, token in enumerate(argv):
        if token == str(old) and i > 0 and argv[i - 1].startswith("-"):
            if argv[i - 1].rstrip("-").endswith("port"):
                out[i] = str(new)
                hits += 1
        elif token.startswith("-") and token.endswith(f"port={old}"):
            out[i] = token[: -len(str(old))] + str(new)
            hits += 1
    return tuple(out) if hits else None


def on_free_port(plan: Plan, pick: Callable[[str], int] = free_port) -> Plan:
    """`plan` with its server on a port free on this machine. Only a plan of one server with
    a fixed port is moved (a process that prints its own port needs nothing; several
    processes may name each other's ports); so is one whose argv does not name its port."""
    if len(plan.processes) != 1 or plan.processes[0].port == 0:
        return plan
    server: ProcessSpec = plan.processes[0]
    port = pick(server.host)
    argv = _moved(server.argv, server.port, port)
    if argv is None:
        return plan
    moved = server.model_copy(update={"argv": argv, "port": port})
    return plan.model_copy(update={"processes": (moved,)})
