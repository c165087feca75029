"""The engine contract: every engine module fills every field of `EngineSpec` (or names the
field in `not_applicable` with its reason), and the rest of inferbench has no engine table
of its own to fall out of step with the registry."""

from __future__ import annotations

import dataclasses

import pytest

from inferbench.config.engine_releases import flag_tables
from inferbench.engines import Engine, EngineArgs, EngineSpec, Limit, engines, find_engine
from inferbench.engines.registry import SIM_STAND_IN, engine, sim_costing
from inferbench.engines.spec import ScriptNames

ENGINES = engines()

FIELDS = [f.name for f in dataclasses.fields(EngineSpec) if f.name != "not_applicable"]


def _filled(value: object) -> bool:
    if isinstance(value, bool):
        return True  # a switch is an answer either way
    return value is not None and value != "" and value != () and value != {}


@pytest.mark.parametrize("spec", ENGINES, ids=lambda s: s.key)
def test_every_engine_fills_every_field_or_says_why_not(spec: EngineSpec) -> None:
    for name in FIELDS:
        value = getattr(spec, name)
        reason = spec.not_applicable.get(name)
        if reason is None:
            assert _filled(value), f"{spec.key}.{name} is empty and not_applicable says nothing"
        else:
            assert len(reason) > 20, f"{spec.key}.{name}: say why in a sentence"
    assert set(spec.not_applicable) <= set(FIELDS), "not_applicable names no such field"


@pytest.mark.parametrize("spec", [s for s in ENGINES if s.known_flags], ids=lambda s: s.key)
def test_flag_knowledge_is_consistent(spec: EngineSpec) -> None:
    assert set(spec.limit_flags) == set(Limit)
    for names in spec.limit_flags.values():
        assert set(names) <= spec.known_flags
    assert set(spec.flag_aliases.values()) <= spec.known_flags
    assert spec.key in spec.aliases and set(spec.serve_frameworks) <= set(spec.aliases)
    layout = spec.layout(lambda name: None)  # no flags: one GPU, nothing split
    assert (layout.gpus, layout.tp, layout.dp, layout.ep) == (1, 1, 1, 1)


@pytest.mark.parametrize("spec", ENGINES, ids=lambda s: s.key)
def test_every_engine_builds_a_server_command(spec: EngineSpec) -> None:
    args = EngineArgs(
        model="m", gpus=8, tp=1, dp=8, ep=8, pp=1, dp_attention=True,
        max_model_len=2304, max_num_seqs=4, cudagraph_max_bs=4, port=1234,
    )  # fmt: skip
    cmd = spec.server(args, job_file="job.json", python="py")
    assert cmd.argv and "1234" in cmd.argv
    assert cmd.health_path == spec.health_path


def test_names_belong_to_one_engine_each() -> None:
    seen: dict[str, str] = {}
    for spec in ENGINES:
        for name in {spec.key, *spec.aliases}:
            assert name not in seen, f"{name!r} is claimed by {seen.get(name)} and {spec.key}"
            seen[name] = spec.key
        assert find_engine(spec.key) is spec


def test_the_engine_choice_is_the_registry() -> None:
    for spec in ENGINES:
        assert Engine(spec.key) is Engine(spec.key) == spec.key
    with pytest.raises(ValueError, match="'vllm2' is not one of 'vllm', 'sglang'"):
        Engine("vllm2")


def test_data_files_name_registered_engines() -> None:
    assert set(flag_tables()) <= {s.key for s in ENGINES}


@pytest.mark.parametrize("spec", ENGINES, ids=lambda s: s.key)
def test_every_engine_is_costed_by_its_own_profile_or_says_whose(spec: EngineSpec) -> None:
    """A profile, or a reason (held by the first test) and the stand-in named wherever the
    simulator costs it: sim estimate's warnings, the plan, the run summary, outcome.json."""
    costing, said = sim_costing(spec.key)
    if spec.sim_profile is not None:
        assert costing is spec and said is None
        assert spec.sim_profile.sources, f"{spec.key}: say where the profile's values come from"
    else:
        assert "sim_profile" in spec.not_applicable
        assert costing is engine(SIM_STAND_IN) and said is not None
        assert said.endswith(f"costed as {costing.display}")
    if spec.known_flags:  # an engine whose flags a job writes: the simulator reads them
        assert spec.sim_readers is not None


def test_script_names_are_plain_names() -> None:
    with pytest.raises(ValueError, match="no plain command"):
        ScriptNames(commands=("vllm;rm",), modules=())
    with pytest.raises(ValueError, match="no plain command"):
        ScriptNames(commands=(), modules=("a|b",))
