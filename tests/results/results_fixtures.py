"""Hand-written inputs matching the shared contracts (sa-bench JSON, run directory)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from inferbench.bench.metrics import summarize
from inferbench.bench.records import FailureKind, RequestRecord
from inferbench.bench.result import (
    EndpointInfo,
    PointResult,
    build_point_result,
    write_point_result,
)
from inferbench.bench.schedule import LoadPoint
from inferbench.bench.settings import ApiKind, ClientOptions, RequestOptions
from inferbench.bench.workload import RandomWorkload


def sa_bench(conc: int = 16, **overrides: Any) -> dict[str, Any]:
    """A sa-bench result as vLLM's benchmark_serving fork writes it (summary + per-request)."""
    out: dict[str, Any] = {
        "date": "20260105-101500",
        "backend": "openai",
        "model_id": "deepseek-ai/DeepSeek-R1-0528",
        "tokenizer_id": "deepseek-ai/DeepSeek-R1-0528",
        "num_prompts": 4,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": conc,
        "duration": 10.0,
        "completed": 4,
        "total_input_tokens": 4000,
        "total_output_tokens": 2000,
        "request_throughput": 0.4,
        "output_throughput": 200.0,
        "total_token_throughput": 600.0,
        "benchmark_start_time_unix": 1000.0,
        "benchmark_end_time_unix": 1010.0,
        # per-request: 500 output tokens each; ITL gaps in seconds
        "input_lens": [1000, 1000, 1000, 1000],
        "output_lens": [500, 500, 500, 500],
        "itls": [[0.01] * 499, [0.01] * 499, [0.02] * 499, [0.04] * 499],
        "ttfts": [0.1, 0.1, 0.2, 0.3],
    }
    for metric, base in (("ttft", 175.0), ("tpot", 20.0), ("itl", 20.0), ("e2el", 10000.0)):
        for stat, factor in (
            ("mean", 1.0),
            ("median", 0.9),
            ("std", 0.2),
            ("p90", 1.5),
            ("p99", 1.9),
            ("p99.9", 2.0),
        ):
            out[f"{stat}_{metric}_ms"] = base * factor
    out.update(overrides)
    return out


def sa_bench_requests(n: int, *, seed: int, slow: float = 1.0, conc: int = 16) -> dict[str, Any]:
    """sa-bench's per-request lists (`--save-detailed`) for `n` requests of 1000 prompt and
    64 output tokens (a job of isl 1024, osl 64: `write_run_dir(..., osl=64)`), and the
    summary fields they give; `slow` scales every latency."""
    rng = np.random.default_rng(seed)
    ttft = rng.lognormal(np.log(0.05), 0.15, n) * slow  # s
    tpot = rng.lognormal(np.log(0.01), 0.1, n) * slow
    out = np.full(n, 64)
    e2el = ttft + tpot * 63
    duration = float(e2el.sum() / conc)
    tokens = n * (1000 + 64)
    fields = sa_bench(conc)
    fields.update(
        num_prompts=n,
        completed=n,
        duration=duration,
        total_input_tokens=n * 1000,
        total_output_tokens=n * 64,
        total_token_throughput=tokens / duration,
        output_throughput=n * 64 / duration,
        request_throughput=n / duration,
        input_lens=[1000] * n,
        output_lens=out.tolist(),
        ttfts=ttft.tolist(),
        itls=[[float(t)] * 63 for t in tpot],
    )
    for metric, values in (("ttft", ttft), ("tpot", tpot), ("e2el", e2el)):
        fields[f"median_{metric}_ms"] = float(np.median(values) * 1000)
        fields[f"p90_{metric}_ms"] = float(np.quantile(values, 0.9) * 1000)
    return fields


def write_json(path: Path, obj: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))
    return path


def disagg_job(isl: int = 1024, osl: int = 1024) -> dict[str, Any]:
    """A multinode disaggregated job in InferenceX field names: 1P(tp4) + 2D(DEP8); its
    lengths are those `sa_bench` (and, with osl 64, `sa_bench_requests`) measured."""
    return {
        "image": "docker.io/lmsysorg/sglang:v0.5.2-cu129",
        "model": "deepseek-ai/DeepSeek-R1-0528",
        "model-prefix": "dsr1",
        "precision": "fp8",
        "framework": "dynamo-sglang",
        "runner": "gb200-multinode",
        "isl": isl,
        "osl": osl,
        "spec-decoding": "none",
        "conc": [64, 128],
        "exp-name": "dsr1_1k1k" if osl == 1024 else f"dsr1_1k_osl{osl}",
        "disagg": True,
        "prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": False},
        "decode": {"num-worker": 2, "tp": 8, "ep": 8, "dp-attn": True},
        "fingerprint": "fp-disagg-1",
    }


def write_run_dir(
    root: Path, run_id: str = "run-1", *, failed_job: bool = True, osl: int = 1024
) -> Path:
    """A run directory in the run engineer's layout, one disagg job with two points."""
    run = root / run_id
    write_json(
        run / "run.json",
        {
            "run_id": run_id,
            "created": "2026-01-05T10:00:00Z",
            "backend": "slurm",
            "engine": "sglang",
            "version": "0.1.0",
            "host": "login1",
        },
    )
    job = run / "fp-disagg-1"
    write_json(job / "job.json", disagg_job(osl=osl))
    write_json(
        job / "outcome.json",
        {
            "status": "completed",
            "attempt": 2,
            "backend": "slurm",
            "engine": "sglang",
            "host": "gb200-n01",
            "times": {"started": "2026-01-05T10:01:00Z", "finished": "2026-01-05T10:30:00Z"},
        },
    )
    write_json(
        job / "plan.json", {"commands": [["python", "-m", "sglang.launch_server", "--tp", "4"]]}
    )
    write_json(job / "results" / "conc64.json", sa_bench(64))
    write_json(job / "results" / "conc128.json", sa_bench(128, total_token_throughput=900.0))
    if failed_job:
        bad = run / "fp-broken"
        write_json(
            bad / "job.json",
            {**disagg_job(osl=osl), "fingerprint": "fp-broken", "exp-name": "dsr1_1k1k_broken"},
        )
        write_json(
            bad / "outcome.json", {"status": "failed", "attempt": 3, "reason": "decode worker OOM"}
        )
    return run


def point_result(
    *,
    started: datetime = datetime(2026, 1, 5, 10, 0, 0, tzinfo=UTC),
    duration_s: float = 10.0,
    complete: bool = True,
    incomplete_reason: str | None = None,
    concurrency: int = 8,
) -> PointResult:
    """A real load-generator result: 4 requests with TPOT 10, 10, 20, 40 ms, 2 failures.

    Interactivity per request is 100, 100, 50, 25 tok/s/user. The point finishes one
    second after `duration_s` (warm-ups come first), so the measured window is the last
    `duration_s` seconds.
    """
    records = []
    for i, tpot in enumerate((0.01, 0.01, 0.02, 0.04)):
        sent = 0.5 * i
        first = sent + 0.1
        times = [first + k * tpot for k in range(5)]  # 5 output tokens, one per chunk
        records.append(
            RequestRecord(
                index=i,
                scheduled=sent,
                sent=sent,
                intended_input_tokens=1000,
                intended_output_tokens=5,
                ok=True,
                chunk_times=times,
                chunk_tokens=[1] * 5,
                input_tokens=1000,
                output_tokens=5,
                done=times[-1],
            )
        )
    for i, kind in enumerate((FailureKind.TIMEOUT, FailureKind.HTTP_STATUS)):
        records.append(RequestRecord(4 + i, 2.0, 2.0, 1000, 5, failure=kind, error="x", done=3.0))
    return build_point_result(
        records=records,
        metrics=summarize(records, duration_s),
        endpoint=EndpointInfo(base_url="http://127.0.0.1:1", model="m", api=ApiKind.COMPLETIONS),
        workload=RandomWorkload(isl=1000, osl=5),
        load=LoadPoint(concurrency=concurrency, num_prompts=6),
        request=RequestOptions(),
        client=ClientOptions(),
        started_at=started,
        finished_at=started + timedelta(seconds=duration_s + 1),
        window=(started.timestamp() + 1, started.timestamp() + 1 + duration_s),
        complete=complete,
        incomplete_reason=incomplete_reason,
    )


def write_point(path: Path, result: PointResult | None = None) -> Path:
    """A point result at `path`; by default measured at the concurrency its name says
    (`conc64.json`: 64), as ingest cross-checks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    named = re.match(r"conc(\d+)", path.name)
    conc = int(named.group(1)) if named else 8
    write_point_result(path, result or point_result(concurrency=conc))
    return path
