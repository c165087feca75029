"""Engine flags a recipe writes that its engine release does not know (IB309).

A typo in `vllm_config` / `sglang_config` passes srtctl (the flag maps are free), renders,
queues, and only fails on the cluster when the engine refuses to start. The flag tables are
extracted from each release's own argument definitions (`config/engine_releases.py`).
"""

from __future__ import annotations

from collections.abc import Iterator

from inferbench.checks.finding import Severity
from inferbench.checks.registry import Problem, rule
from inferbench.checks.subjects import DeploymentSubject
from inferbench.config.engine_releases import judge_flag
from inferbench.config.recipe import locate
from inferbench.engines.flags import display_name, snake_case


@rule(
    "IB309",
    "engine-flag-unknown",
    Severity.ERROR,
    DeploymentSubject,
    "every engine flag of the recipe is one the engine release in the master image accepts",
    hint="spell the flag as the engine release the master image names accepts it, or drop it",
)
def engine_flag_unknown(d: DeploymentSubject) -> Iterator[Problem]:
    recipe = d.recipe
    engine = recipe.backend.type
    image = d.config.entry.image
    # Under a Dynamo frontend srtctl runs `python -m dynamo.<engine>`, which takes the
    # engine's flags and Dynamo's own, all named `--dyn-*`.
    dynamo = (recipe.frontend.type if recipe.frontend else "dynamo") == "dynamo"
    for mode in recipe.modes:
        for written in recipe.flags(mode).flags:
            if dynamo and str(written).replace("_", "-").startswith("dyn-"):
                continue
            verdict = judge_flag(engine, str(written), image)
            if verdict is None or verdict.known:
                continue
            release = verdict.release or "any release inferbench has a table of"
            # TRT-LLM's trtllm_config is LLM-API YAML: keys, not command-line flags
            what, dash = ("option", "") if snake_case(engine) else ("flag", "--")
            yield Problem(
                f"{display_name(engine)} {release} has no {what} {dash}{written} "
                f"({mode} of {d.config.key}, image {image})",
                locate(recipe, (*recipe.flags_path(mode), str(written))),
                hint=f"did you mean {dash}{verdict.closest}?"
                if verdict.closest
                else "remove it, or check the engine's --help for its name",
            )
