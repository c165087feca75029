"""The interface every backend satisfies: execute one plan's remaining points."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from inferbench.launch.local import ExecResult
from inferbench.launch.outcome import PointOutcome
from inferbench.launch.plan import BenchPoint, Plan
from inferbench.launch.rundir import JobDir


class Executor(Protocol):
    def execute(
        self,
        plan: Plan,
        job_dir: JobDir,
        todo: Sequence[BenchPoint],
        on_point: Callable[[PointOutcome], None],
        on_submitted: Callable[[str | None], None],
    ) -> ExecResult: ...
