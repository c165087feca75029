import json

import pytest
from pydantic import ValidationError

from inferbench.core.job import Job, JobWorkerBlock

from .jobs import agentic_single, multi, single


def test_single_node_json_keeps_inferencex_names() -> None:
    wire = single(64).to_wire()
    for key in (
        "image", "model", "model-prefix", "precision", "framework", "runner", "isl", "osl",
        "tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "spec-decoding", "conc",
        "max-model-len", "exp-name", "disagg", "run-eval", "config-key",
        "fingerprint", "fingerprint-short",
    ):  # fmt: skip
        assert key in wire, key
    assert wire["conc"] == 64
    # Keys InferenceX's generator does not write on a fixed-seq-len single-node row.
    for key in ("prefill", "scenario-type", "eval-only", "eval-conc"):
        assert key not in wire, key
    assert single(64).evolve(eval_only=True, run_eval=True).to_wire()["eval-only"] is True


def test_agentic_single_node_json_has_no_disagg() -> None:
    wire = agentic_single().to_wire()
    assert wire["scenario-type"] == "agentic-coding" and "disagg" not in wire
    assert "run-eval" not in wire  # no eval policy ran (as InferenceX's --no-evals rows)


def test_worker_settings_present_only_where_the_master_has_them() -> None:
    bare = JobWorkerBlock(num_worker=1, tp=8, ep=8, dp_attn=True)
    job = multi(decode=bare)
    assert "additional-settings" not in job.to_wire()["decode"]
    # Absent and empty settings are one deployment: one fingerprint.
    empty = multi(decode=bare.model_copy(update={"additional_settings": ()}))
    assert empty.to_wire()["decode"]["additional-settings"] == []
    assert empty.fingerprint == job.fingerprint


def test_multinode_json_has_blocks_and_conc_list() -> None:
    wire = multi((512, 2048)).to_wire()
    assert wire["conc"] == [512, 2048]
    assert wire["prefill"]["num-worker"] == 2
    assert wire["decode"]["dp-attn"] is True
    assert wire["prefill"]["additional-settings"][0].startswith("CONFIG_FILE=")
    assert "tp" not in wire
    assert wire["kv-p2p-transfer"] == "nixl"


@pytest.mark.parametrize("make", [lambda: single(16), lambda: multi((4, 8)), agentic_single])
def test_json_round_trip(make: object) -> None:
    job = make()  # type: ignore[operator]
    again = Job.model_validate_json(job.model_dump_json(by_alias=True))
    assert again == job
    assert again.fingerprint == job.fingerprint
    also = Job.model_validate_json(json.dumps(job.to_wire()))
    assert also == job


def test_fingerprint_is_sha256_and_short_form_is_a_prefix() -> None:
    job = single()
    assert len(job.fingerprint) == 64
    int(job.fingerprint, 16)
    assert job.fingerprint.startswith(job.fingerprint_short)
    assert len(job.fingerprint_short) == 12


def test_fingerprint_stable_across_builds_and_known_value() -> None:
    # Pinned: changing the canonical form changes every curve's identity; do it knowingly.
    assert single().fingerprint == single(conc=64).fingerprint
    assert single().fingerprint == (
        "e8c4c79e5afdcb6998495017644a90b65bb23b372d4166579f27d16a6bd383a2"
    )
    assert multi().fingerprint_short == "fafc3d8fcaff"


def test_fingerprint_stable_across_processes() -> None:
    import subprocess
    import sys

    code = (
        "from inferbench.core.job import Job; import json, sys; "
        "print(Job.model_validate(json.loads(sys.stdin.read())).fingerprint)"
    )
    wire = single().model_dump_json(by_alias=True, exclude={"fingerprint", "fingerprint_short"})
    proc = subprocess.run(
        [sys.executable, "-c", code], input=wire, capture_output=True, text=True, check=True
    )
    assert proc.stdout.strip() == single().fingerprint


def test_fingerprint_ignores_conc_exp_name_and_eval_marks() -> None:
    base = single(4)
    assert single(256, exp_name="other").fingerprint == base.fingerprint
    assert base.evolve(run_eval=True, eval_only=True).fingerprint == base.fingerprint
    assert multi((1, 2)).fingerprint == multi((4096,), eval_conc=16).fingerprint


@pytest.mark.parametrize(
    "change", [{"tp": 4}, {"image": "x:2"}, {"runner": "b200"}, {"isl": 1024}, {"ep": 8}]
)
def test_fingerprint_moves_with_content(change: dict[str, object]) -> None:
    assert single(**change).fingerprint != single().fingerprint
    assert single().evolve(**change).fingerprint == single(**change).fingerprint


def test_edited_job_is_refused() -> None:
    wire = single().to_wire()
    wire["tp"] = 2
    with pytest.raises(ValidationError, match="fingerprint"):
        Job.model_validate(wire)


def test_unknown_keys_and_mixed_shapes_are_refused() -> None:
    wire = single().to_wire()
    wire["bogus"] = 1
    with pytest.raises(ValidationError):
        Job.model_validate(wire)
    with pytest.raises(ValidationError, match="multinode"):
        multi(tp=8)
    with pytest.raises(ValidationError, match="one integer"):
        single(conc=(4, 8))
    with pytest.raises(ValidationError, match="agentic"):
        agentic_single(kv_offloading=None)


def test_frozen() -> None:
    job = single()
    with pytest.raises(ValidationError):
        job.tp = 2  # type: ignore[misc]
