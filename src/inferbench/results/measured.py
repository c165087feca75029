"""Which hardware a point of a run was measured on, and so which series it joins.

A run's `env.json` records the accelerator its engine ran on. When that is other hardware
than the entry names (vLLM's CPU build running an `h200` entry, an H100 standing in for an
H200), the point is stored under the measured hardware (`cpu`, `h100`) with the entry's
kept as `provenance.planned_hardware`: it never joins the entry's hardware series. The
simulator measures nothing: its points are predictions for the entry's hardware and keep it
(their provenance says `sim`). A run that recorded no accelerator (before this was kept, or
srtctl's nodes) keeps the entry's hardware, as it always did.
"""

from __future__ import annotations

from inferbench.catalog.load import load_catalog
from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InferbenchError
from inferbench.results.record import Identity

SIMULATED = "sim"  # the engine (and backend) name of the simulator's points


def _hardware_key(name: str) -> str:
    """The catalog key a hardware name resolves to (`h200-nv` -> h200), else the name."""
    try:
        return load_catalog().gpu(name).key
    except InferbenchError:
        return name.strip().lower()


def same_hardware(entry: str, measured: str) -> bool:
    return _hardware_key(entry) == _hardware_key(measured)


def measured_identity(
    identity: Identity, accelerator: Accelerator | None, engine: str | None
) -> tuple[Identity, str | None]:
    """The identity as measured and the entry's hardware when that differs (else None)."""
    if accelerator is None or engine == SIMULATED:
        return identity, None
    planned = [p.hardware for p in identity.pools]
    if all(same_hardware(hw, accelerator.hardware) for hw in planned):
        return identity, None
    measured = accelerator.hardware
    pools = tuple(p.model_copy(update={"hardware": measured}) for p in identity.pools)
    update = {"pools": pools, "hardware_prefill": measured, "hardware_decode": measured}
    return identity.model_copy(update=update), identity.hardware()
