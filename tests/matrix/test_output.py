import json

from inferbench.core.job import Job
from inferbench.matrix.output import (
    GITHUB_MATRIX_LIMIT,
    JOB_COLUMNS,
    chunked,
    github_matrix,
    github_to_json,
    job_row,
    jobs_to_json,
    topology,
)

from .jobs import agentic_single, multi, single, worker


def test_chunks_of_at_most_256() -> None:
    assert GITHUB_MATRIX_LIMIT == 256
    sizes = [len(c) for c in chunked(list(range(600)))]
    assert sizes == [256, 256, 88]
    assert chunked([]) == []
    assert [len(c) for c in chunked(list(range(512)))] == [256, 256]


def test_github_matrix_buckets_and_chunks() -> None:
    jobs = [single(c) for c in range(1, 301)] + [multi((c,)) for c in (1, 2)] + [agentic_single()]
    matrix = json.loads(github_to_json(jobs))
    assert matrix["total"] == 303
    sn = matrix["single_node"]
    assert [len(c["config"]) for c in sn["8k1k"]] == [256, 44]
    assert len(sn["agentic"][0]["config"]) == 1
    assert list(matrix["multi_node"]) == ["8k1k"]
    for chunks in (*sn.values(), *matrix["multi_node"].values()):
        for chunk in chunks:
            assert list(chunk) == ["config"]  # a chunk is a valid strategy.matrix by itself
    first = sn["8k1k"][0]["config"][0]
    assert Job.model_validate(first) == jobs[0]


def test_github_matrix_of_nothing() -> None:
    assert github_matrix([]) == {
        "total": 0, "chunk-size": 256, "single_node": {}, "multi_node": {},
        "evals": [], "agentic_evals": [], "multinode_evals": [], "multinode_agentic_evals": [],
    }  # fmt: skip


def test_eval_only_rows_have_their_own_buckets() -> None:
    """As InferenceX's changelog processing splits them: by prefill, then by scenario."""
    rows = {
        "evals": single(16).evolve(run_eval=True, eval_only=True),
        "agentic_evals": agentic_single().evolve(run_eval=True, eval_only=True),
        "multinode_evals": multi((16,)).evolve(run_eval=True, eval_only=True, eval_conc=16),
    }
    matrix = github_matrix([single(8), *rows.values()])
    assert [len(c["config"]) for c in matrix["single_node"]["8k1k"]] == [1]
    for bucket, job in rows.items():
        assert [Job.model_validate(r) for c in matrix[bucket] for r in c["config"]] == [job]
    assert matrix["multinode_agentic_evals"] == [] and matrix["total"] == 4
    assert "agentic" not in matrix["single_node"] and not matrix["multi_node"]


def test_json_list_round_trips() -> None:
    jobs = [single(16), multi(), agentic_single()]
    back = [Job.model_validate(obj) for obj in json.loads(jobs_to_json(jobs))]
    assert back == jobs


def test_topology_labels() -> None:
    assert topology(single()) == "TP8"
    # one notation across commands: the words of config.topology (DP attention + EP: DEP)
    assert topology(single(ep=8, dp_attn=True)) == "DEP8"
    assert topology(single(ep=8)) == "TEP8"
    assert topology(multi()) == "2P1D DEP2/DEP8"
    assert topology(multi(decode=worker(0, 8))) == "2xDEP2"  # aggregated workers


def test_table_rows_name_every_column() -> None:
    one, two = job_row(single(16)), job_row(multi((4, 8)))
    assert len(one) == len(two) == len(JOB_COLUMNS)
    row = dict(zip(JOB_COLUMNS, two, strict=True))
    assert row["config-key"] == "minimaxm3-fp4-b200-dynamo-vllm"
    assert row["topology"] == "2P1D DEP2/DEP8" and row["conc"] == "4, 8"
    assert dict(zip(JOB_COLUMNS, one, strict=True))["conc"] == "16"


def test_changelog_rows_carry_the_processing_defaults() -> None:
    """`--changed-since` rows have every key InferenceX's changelog processing writes (its
    output model's defaults); a plain sweep's rows are the generator's, without them."""
    one, many, agentic = single(8), multi((4, 8)), agentic_single()
    assert "eval-only" not in one.to_wire() and "eval-all-concs" not in many.to_wire()
    rows = json.loads(jobs_to_json([one, many, agentic], changelog=True))
    assert rows[0]["eval-only"] is False and "eval-all-concs" not in rows[0]
    assert rows[1]["eval-only"] is False and rows[1]["eval-all-concs"] is False
    for block in ("prefill", "decode"):
        assert rows[1][block]["additional-settings"] is not None
        assert (rows[1][block]["pp"], rows[1][block]["dcp-size"]) == (1, 1)
    assert "eval-only" not in rows[2] and rows[2]["spec-decoding"] == "none"
    matrix = github_matrix([one, many], changelog=True)
    assert matrix["multi_node"]["8k1k"][0]["config"][0]["eval-all-concs"] is False
