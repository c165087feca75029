"""The limits of one worker role of a recipe, as the checks compare them with its workload.

Which flag sets each limit, how its value reads and how many schedulers share a worker's batch
are each engine module's (`inferbench.engines`), as is the parallel layout
(`inferbench.engines.layout`); this gathers them per role, with the flag each limit came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferbench.config.recipe import Recipe, WorkerMode
from inferbench.engines.flags import FlagHit, batch_schedulers
from inferbench.engines.layout import WorkerLayout
from inferbench.engines.spec import Limit
from inferbench.engines.values import enables, flag_int


def _int(hit: FlagHit | None) -> int | None:
    return flag_int(hit.value) if hit is not None else None


def written(hit: FlagHit | None, absent: str = "") -> str:
    """The flag name as the recipe writes it, or `absent`."""
    return hit.written if hit is not None else absent


@dataclass(frozen=True)
class RoleLimits:
    """The limits of one worker role of a recipe, with the flag each came from."""

    mode: WorkerMode
    engine: str
    layout: WorkerLayout
    max_model_len: FlagHit | None
    max_num_seqs: FlagHit | None
    cudagraph: FlagHit | None
    speculative: FlagHit | None

    @property
    def schedulers(self) -> int:
        """Schedulers in one worker that each admit `max_num_seqs`."""
        return batch_schedulers(self.engine, self.layout.dp)

    @property
    def model_len(self) -> int | None:
        return _int(self.max_model_len)

    @property
    def seqs(self) -> int | None:
        """The batch limit of one scheduler, or None when none is set."""
        return _int(self.max_num_seqs)

    @property
    def capacity(self) -> int | None:
        """Requests one worker holds at once, or None when no batch limit is set."""
        seqs = self.seqs
        return None if seqs is None else seqs * self.schedulers

    @property
    def cudagraph_max(self) -> int | None:
        return _int(self.cudagraph)

    @property
    def has_speculative(self) -> bool:
        return self.speculative is not None and enables(self.speculative.value)


def role_limits(recipe: Recipe, mode: WorkerMode) -> RoleLimits:
    flags = recipe.flags(mode)
    return RoleLimits(
        mode=mode,
        engine=recipe.backend.type,
        layout=recipe.layout(mode),
        max_model_len=flags.limit(Limit.MAX_MODEL_LEN),
        max_num_seqs=flags.limit(Limit.MAX_NUM_SEQS),
        cudagraph=flags.limit(Limit.CUDAGRAPH),
        speculative=flags.limit(Limit.SPECULATIVE),
    )


def serving_limits(recipe: Recipe) -> RoleLimits:
    """The limits of the role that decodes: decode workers, or the aggregated ones."""
    return role_limits(recipe, "decode" if recipe.disaggregated else "aggregated")


def flag_path(recipe: Recipe, mode: WorkerMode, hit: FlagHit | None) -> tuple[str, ...]:
    """Key path of a flag as written (or of the role's flag map when absent)."""
    role = recipe.flags_path(mode)
    return (*role, hit.written) if hit is not None else role
