"""One step model of a catalog model on a catalog GPU, TP1 in bf16: what the physics tests
price a step with."""

from __future__ import annotations

from inferbench.catalog import Precision, load_catalog
from inferbench.sim.perf import EfficiencyParams, Parallelism, StepModel

TINY = "inferbench/tiny-llama"


def step_model(model: str, gpu: str, eff: EfficiencyParams) -> StepModel:
    cat = load_catalog()
    return StepModel(
        cat.model(model),
        cat.gpu(gpu),
        Parallelism(tp=1),
        precision=Precision.BF16,
        kv_precision=Precision.BF16,
        eff=eff,
    )
