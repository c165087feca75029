"""Inside a Slurm allocation a real engine's server moves to a port free on its node: the
port the login node wrote (8000) may be taken by another job sharing the node."""

from __future__ import annotations

import socket

from inferbench.launch.deployment import deployment_from_dicts
from inferbench.launch.nodeport import on_free_port
from inferbench.launch.plan import Engine
from inferbench.launch.planner import PlanOptions, local_plan, slurm_plan
from inferbench.launch.site import SlurmSite

from .conftest import job_dict


def _port_flag(argv: tuple[str, ...]) -> list[str]:
    return [f"{a} {b}" for a, b in zip(argv, argv[1:], strict=False) if a.endswith("port")]


def test_a_taken_port_is_left_for_a_free_one() -> None:
    dep = deployment_from_dicts([job_dict()])
    with socket.socket() as taken:  # another job's server on this node
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        site = SlurmSite(gpus_per_node=8, container_runtime="pyxis")
        plan = slurm_plan(dep, site, "/scratch/j", Engine("vllm"), PlanOptions(port=busy))
        assert _port_flag(plan.processes[0].argv) == [f"--port {busy}"]
        moved = on_free_port(plan)
        server = moved.processes[0]
        assert server.port != busy and _port_flag(server.argv) == [f"--port {server.port}"]
        assert server.health_url == f"http://127.0.0.1:{server.port}/health"
        with socket.socket() as probe:  # the new port is really free here
            probe.bind(("127.0.0.1", server.port))
    # nothing else changes: the container wrapper, the engine flags, the files
    before, after = plan.processes[0].argv, server.argv
    assert [a for a in before if a != str(busy)] == [a for a in after if a != str(server.port)]
    assert moved.files == plan.files and moved.bench == plan.bench


def test_each_engine_spelling_of_the_port_flag_moves() -> None:
    dep = deployment_from_dicts([job_dict()])
    for engine in (Engine("vllm"), Engine("sglang"), Engine("trtllm"), Engine("atom")):
        plan = local_plan(dep, engine, PlanOptions(port=8000))
        moved = on_free_port(plan, pick=lambda host: 18123)
        argv = moved.processes[0].argv
        assert "8000" not in argv and "18123" in argv, (engine, argv)
        assert moved.processes[0].port == 18123


def test_plans_it_cannot_move_stay_as_they_are() -> None:
    dep = deployment_from_dicts([job_dict()])
    sim = local_plan(dep, Engine.SIM)  # the simulator picks and prints its own port
    assert sim.processes[0].port == 0 and on_free_port(sim) == sim
    real = local_plan(dep, Engine("vllm"), PlanOptions(port=8000))
    twice = real.model_copy(update={"processes": real.processes * 2})
    assert on_free_port(twice, pick=lambda host: 18123) == twice  # may name each other
    server = real.processes[0]
    unnamed = server.model_copy(update={"argv": tuple(a for a in server.argv if a != "8000")})
    odd = real.model_copy(update={"processes": (unnamed,)})
    assert on_free_port(odd, pick=lambda host: 18123) == odd  # no flag names its port
