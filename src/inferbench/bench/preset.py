"""InferenceX's sa-bench defaults, defined once.

Source: how InferenceX calls its client (see docs/bench.md): `--num-prompts CONC*10`,
`--num-warmups 2*CONC`, `--random-range-ratio 0.8` with U[floor(L*r), L] lengths, and a hard
exit above 5% failed requests. The launcher, the simulator and `inferbench bench --preset
sa-bench` all read these numbers from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Preset(StrEnum):
    SA_BENCH = "sa-bench"


@dataclass(frozen=True)
class SaBenchDefaults:
    prompts_per_conc: int = 10
    warmups_per_conc: int = 2
    range_ratio: float = 0.8
    max_failure_rate: float = 0.05

    def num_prompts(self, concurrency: int) -> int:
        return self.prompts_per_conc * concurrency

    def num_warmups(self, concurrency: int) -> int:
        return self.warmups_per_conc * concurrency


SA_BENCH = SaBenchDefaults()
