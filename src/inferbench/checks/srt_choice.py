"""Which srt-slurm tree judges a master entry's recipe: the one its launcher clones.

The choice itself is `config.srt_job`'s, the one reader `plan` and `run` use too; this
gives it a master entry's job variables (those the multinode workflow exports). A recipe is
judged by that tree's schema, and a recipe missing from the InferenceX tree is read from that
tree's `recipes/`. Every pair judged other than at its ref is counted in IB002 with the
reason.
"""

from __future__ import annotations

from inferbench.config.launcher_srt_ref import job_variables
from inferbench.config.master import MasterConfig, MultiNodeSearchSpace, SearchSpacePoint
from inferbench.config.srt_job import RunnerLaunchers, SrtChoice, choose, fallback
from inferbench.config.srt_slurm_refs import SrtSlurmSources

__all__ = ["SrtChoice", "choose_for_entry", "fallback"]


def choose_for_entry(
    sources: SrtSlurmSources | None,
    routes: RunnerLaunchers,
    config: MasterConfig,
    point: SearchSpacePoint,
    space: MultiNodeSearchSpace,
    recipe_text: str | None,
) -> SrtChoice:
    """The tree for one CONFIG_FILE reference of `config` (`recipe_text`: the recipe file in
    the tree, which may switch the launcher's power lane)."""
    entry = config.entry
    variables = job_variables(
        framework=entry.framework,
        model_prefix=entry.model_prefix,
        precision=entry.precision,
        model=entry.model,
        scenario=point.scenario,
        spec_decoding=space.spec_decoding,
        config_file=str(space.config_file),
        recipe_text=recipe_text,
    )
    return choose(sources, routes.clone_of(entry.runner, variables))
