"""What running a benchmark script under stubs showed, as data a Plan carries."""

from __future__ import annotations

import shlex

from pydantic import Field

from inferbench.core.model import FrozenModel


class ScriptProcess(FrozenModel):
    """One command the script ran: its argv and the variables the script set for it (what
    differs from the environment the script was started with)."""

    argv: tuple[str, ...]
    env: dict[str, str] = Field(default_factory=dict)

    @property
    def name(self) -> str:
        if len(self.argv) > 2 and self.argv[0].startswith("python") and self.argv[1] == "-m":
            return self.argv[2]
        return self.argv[0] if self.argv else ""

    def shell_line(self) -> str:
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in sorted(self.env.items()))
        return f"{env} {shlex.join(self.argv)}" if env else shlex.join(self.argv)


class ScriptCapture(FrozenModel):
    """What one run of a script at one concurrency started, in call order."""

    concurrency: int
    env: dict[str, str] = Field(default_factory=dict)  # the contract, for /workspace
    engines: tuple[ScriptProcess, ...] = ()
    bench: tuple[ScriptProcess, ...] = ()  # the sa-bench calls (utils/bench_serving/...)
    tools: tuple[tuple[str, ...], ...] = ()  # stubbed downloads, installs, GPU tools
    exit_code: int | None = None  # None: cut at the time limit
    log_tail: str = ""

    @property
    def problem(self) -> str | None:
        """Why the capture may not show everything the script would start, if it may not."""
        if self.exit_code is None:
            return "the script was stopped at the time limit"
        if not self.engines:
            return f"the script exited with status {self.exit_code} before starting an engine"
        if self.exit_code != 0:
            said = [ln.strip() for ln in self.log_tail.splitlines() if ln.strip()]
            # the last line the script said, not bash's `set -x` trace of its cleanup
            last = next((ln for ln in reversed(said) if not ln.startswith("+")), "")
            return f"the script exited with status {self.exit_code} after starting its engine" + (
                f" (last line: {last[:200]})" if last else ""
            )
        return None


class ScriptPlan(FrozenModel):
    """A job run through the tree's own script: which, picked by which launcher, and what it
    starts at each concurrency (one script run per point, as InferenceX runs them)."""

    script: str  # tree-relative
    launcher: str
    runner_name: str  # RUNNER_NAME the launcher was read for (it names the result file)
    alternatives: tuple[str, ...] = ()  # "script (launcher)" other launchers of the label pick
    points: tuple[ScriptCapture, ...] = ()

    def render_lines(self) -> list[str]:
        """The script, then per concurrency the engine command lines (`plan`'s text; the
        points whose capture may be short are the plan's warnings)."""
        head = f"launcher {self.launcher}, RUNNER_NAME={self.runner_name}"
        lines = [f"## script {self.script} ({head})"]
        lines += [f"# note: another launcher of the label picks {alt}" for alt in self.alternatives]
        for point in self.points:
            for engine in point.engines:
                lines.append(f"## conc {point.concurrency}: engine {engine.name}")
                lines.append(engine.shell_line())
        return lines
