"""Pick and call the builder for an engine."""

from __future__ import annotations

from inferbench.errors import InputError, Location
from inferbench.launch.deployment import Deployment
from inferbench.launch.engines.common import EngineArgs, ServerCommand
from inferbench.launch.engines.sglang import sglang_command
from inferbench.launch.engines.sim import sim_command
from inferbench.launch.engines.trtllm import trtllm_command
from inferbench.launch.engines.vllm import vllm_command
from inferbench.launch.plan import Engine

# master `framework` values whose server the engine builders know how to start
_FRAMEWORK_ENGINE = {
    "vllm": Engine.VLLM,
    "sglang": Engine.SGLANG,
    "trt": Engine.TRTLLM,
    "trtllm": Engine.TRTLLM,
}


def detect_engine(dep: Deployment) -> Engine:
    """The GPU engine a single-node job names, else the simulator."""
    return _FRAMEWORK_ENGINE.get(dep.framework, Engine.SIM)


def build_server(
    engine: Engine, args: EngineArgs, *, job_file: str, python: str | None = None
) -> ServerCommand:
    if engine is Engine.SIM:
        return sim_command(args, job_file=job_file, python=python)
    if engine is Engine.VLLM:
        return vllm_command(args)
    if engine is Engine.SGLANG:
        return sglang_command(args, python=python or "python3")
    if engine is Engine.TRTLLM:
        return trtllm_command(args)
    raise InputError(f"unknown engine {engine!r}", location=Location(key="engine"))
