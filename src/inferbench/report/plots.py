"""PNG plots (matplotlib, Agg): one figure per model and sequence lengths, throughput
per GPU against interactivity and against E2EL, a line along each series' frontier.

matplotlib is the `plots` extra: the dashboard needs none of it, and the main job
(`make demo`) installs only what it needs."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Sequence
from pathlib import Path

from inferbench.core.fsio import atomic_write_bytes
from inferbench.results.pareto import XAxis, build_curves, x_value
from inferbench.results.queueing import queueing_reason
from inferbench.results.record import Record

_AXES: tuple[tuple[XAxis, str], ...] = (
    ("interactivity", "interactivity p50 (tok/s/user)"),
    ("e2el", "E2E latency p50 (ms)"),
)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-")


PLOTS_EXTRA_HINT = "pip install 'inferbench[plots]' (matplotlib), or pass --no-plots"


def plots_available() -> bool:
    """Whether matplotlib is installed (the `plots` extra)."""
    return importlib.util.find_spec("matplotlib") is not None


def write_plots(records: Sequence[Record], output_dir: Path) -> list[Path]:
    """One PNG per (model, isl, osl); returns the files written."""
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups: dict[tuple[str, int, int], list[Record]] = {}
    for r in records:
        groups.setdefault((r.identity.model_prefix, r.identity.isl, r.identity.osl), []).append(r)
    written = []
    for (model, isl, osl), members in sorted(groups.items()):
        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for ax, (axis, label) in zip(axes, _AXES, strict=True):
            # a queueing-dominated point is on no frontier: drawn apart (results.queueing)
            queued = [r for r in members if queueing_reason(r) is not None]
            ranked = [r for r in members if queueing_reason(r) is None]
            for curve in build_curves(ranked, axis):
                xs = [curve.x[k] for k in curve.frontier]
                ys = [curve.y[k] for k in curve.frontier]
                line = ax.plot(xs, ys, marker="o", label=curve.key.label())[0]
                ax.scatter(curve.x, curve.y, s=10, color=line.get_color(), alpha=0.4)
            points = [(x_value(r, axis), r.derived.total_tput_per_gpu) for r in queued]
            points = [(x, y) for x, y in points if x is not None]
            if points:
                ax.scatter(
                    *zip(*points, strict=True),
                    marker="x",
                    color="grey",
                    label="queueing-dominated (not on a frontier)",
                )
            ax.set_xlabel(label)
            ax.set_ylabel("throughput per GPU (tok/s/GPU)")
            ax.grid(alpha=0.3)
        axes[0].legend(fontsize=7)
        fig.suptitle(f"{model} isl {isl} / osl {osl}")
        if any(not r.provenance.official for r in members):
            fig.text(
                0.5,
                0.5,
                "UNOFFICIAL",
                fontsize=60,
                color="red",
                alpha=0.12,
                ha="center",
                va="center",
                rotation=20,
            )
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
        plt.close(fig)
        path = output_dir / f"pareto_{_safe(model)}_{isl}_{osl}.png"
        atomic_write_bytes(path, buf.getvalue())
        written.append(path)
    return written
