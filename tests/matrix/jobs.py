"""Small Job builders for the matrix tests."""

from __future__ import annotations

from typing import Any

from inferbench.core.job import Job, JobWorkerBlock


def single(conc: int = 4, **over: Any) -> Job:
    fields: dict[str, Any] = dict(
        config_key="dsr1-fp8-h200-vllm",
        image="vllm/vllm-openai:v0.10.2",
        model="deepseek-ai/DeepSeek-R1",
        model_prefix="dsr1",
        precision="fp8",
        framework="vllm",
        runner="h200",
        isl=8192,
        osl=1024,
        tp=8,
        pp=1,
        dcp_size=1,
        pcp_size=1,
        ep=1,
        dp_attn=False,
        conc=conc,
        max_model_len=8192 + 1024 + 256,
        exp_name="dsr1_8k1k",
        run_eval=False,
    )
    fields.update(over)
    return Job(**fields)


def worker(num: int, tp: int, *, ep: int | None = None, dpa: bool = True) -> JobWorkerBlock:
    return JobWorkerBlock(
        num_worker=num,
        tp=tp,
        ep=ep if ep is not None else tp,
        dp_attn=dpa,
        additional_settings=("CONFIG_FILE=recipes/vllm/m/b200-fp4/8k1k/2p1d.yaml",),
    )


def multi(conc: tuple[int, ...] = (2048,), **over: Any) -> Job:
    fields: dict[str, Any] = dict(
        config_key="minimaxm3-fp4-b200-dynamo-vllm",
        image="vllm/vllm-openai:v0.11.0",
        model="nvidia/MiniMax-M3-NVFP4",
        model_prefix="minimaxm3",
        precision="fp4",
        framework="dynamo-vllm",
        runner="b200-multinode",
        isl=8192,
        osl=1024,
        prefill=worker(2, 2),
        decode=worker(1, 8),
        conc=conc,
        max_model_len=8192 + 1024 + 256,
        exp_name="minimaxm3_8k1k",
        disagg=True,
        kv_p2p_transfer="nixl",
    )
    fields.update(over)
    return Job(**fields)


def agentic_single(conc: int = 8, **over: Any) -> Job:
    fields: dict[str, Any] = dict(
        scenario="agentic-coding",
        isl=None,
        osl=None,
        max_model_len=None,
        runner="cluster:h200-nv",
        kv_offloading="none",
        duration=3600,
        total_cpu_dram_gb=0,
        exp_name=f"dsr1_tp8_conc{conc}_kvnone",
        run_eval=None,  # agentic rows carry run-eval only once an eval policy marks them
    )
    fields.update(over)
    return single(conc, **fields)
