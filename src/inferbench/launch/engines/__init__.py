"""Engine command builders: pure functions from a deployment to one server's argv."""

from __future__ import annotations

from inferbench.launch.engines.common import EngineArgs, ServerCommand, engine_args
from inferbench.launch.engines.registry import build_server, detect_engine

__all__ = ["EngineArgs", "ServerCommand", "build_server", "detect_engine", "engine_args"]
