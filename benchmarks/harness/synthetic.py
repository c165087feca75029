"""Synthetic benchmark points with a plausible throughput/latency trade-off.

Used by the ingest benchmark (100,000 points) and by tests that need run directories
shaped like the run engineer's layout before real runs exist. The curve: TPOT grows
linearly with concurrency past a knee, so throughput per GPU rises and interactivity
falls as concurrency grows. Nothing here is a measurement.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from inferbench.core.fsio import atomic_write_bytes
from inferbench.core.lengths import max_model_len
from inferbench.core.seqlen import seq_len_name
from inferbench.core.status import JobStatus


@dataclass(frozen=True)
class SyntheticConfig:
    model_prefix: str = "dsr1"
    model: str = "deepseek-ai/DeepSeek-R1"
    precision: str = "fp8"
    framework: str = "sglang"
    runner: str = "h200"
    image: str = "lmsysorg/sglang:v0.5.0"
    tp: int = 8
    ep: int = 1
    isl: int = 1024
    osl: int = 1024
    base_tpot_ms: float = 8.0
    knee: float = 32.0
    power_w: float | None = None  # per-GPU board power at full load: writes power samples


def sa_bench_result(
    cfg: SyntheticConfig,
    conc: int,
    *,
    rng: random.Random,
    speedup: float = 1.0,
    failed: int = 0,
    requests: bool = False,
) -> dict[str, Any]:
    """A sa-bench style result dict for one concurrency: summary fields, and with
    `requests` the per-request lists of `--save-detailed` (for the regression gate)."""
    tpot = cfg.base_tpot_ms * (1 + conc / cfg.knee) / speedup * rng.uniform(0.98, 1.02)
    ttft = 40.0 * (1 + conc / 16) * cfg.isl / 1024
    prompts = conc * 10
    completed = prompts - failed
    e2el = ttft + tpot * (cfg.osl - 1)
    duration = completed / conc * e2el / 1000.0
    out_tokens = completed * int(cfg.osl * 0.9)
    in_tokens = completed * int(cfg.isl * 0.9)
    result: dict[str, Any] = {
        "date": "20260101-120000",
        "backend": "openai",
        "model_id": cfg.model,
        "tokenizer_id": cfg.model,
        "num_prompts": prompts,
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": conc,
        "duration": duration,
        "completed": completed,
        "total_input_tokens": in_tokens,
        "total_output_tokens": out_tokens,
        "request_throughput": completed / duration,
        "output_throughput": out_tokens / duration,
        "total_token_throughput": (in_tokens + out_tokens) / duration,
    }
    for metric, centre in (("ttft", ttft), ("tpot", tpot), ("itl", tpot), ("e2el", e2el)):
        for stat, factor in (
            ("mean", 1.0),
            ("median", 0.97),
            ("std", 0.1),
            ("p90", 1.2),
            ("p99", 1.5),
            ("p99.9", 1.8),
        ):
            result[f"{stat}_{metric}_ms"] = centre * factor
    if requests:
        result.update(_request_lists(cfg, completed, ttft, tpot, rng))
    return result


def _request_lists(
    cfg: SyntheticConfig, n: int, ttft_ms: float, tpot_ms: float, rng: random.Random
) -> dict[str, Any]:
    """Per-request TTFT and decode gaps around the point's centres (lognormal spread).
    Each request's gaps are written as one coalesced chunk (their sum), which is all the
    noise model reads and keeps the file small."""
    out = int(cfg.osl * 0.9)
    ttfts = [ttft_ms / 1e3 * rng.lognormvariate(0.0, 0.1) for _ in range(n)]
    gaps = [[tpot_ms / 1e3 * (out - 1) * rng.lognormvariate(0.0, 0.05)] for _ in range(n)]
    return {
        "input_lens": [int(cfg.isl * 0.9)] * n,
        "output_lens": [out] * n,
        "ttfts": ttfts,
        "itls": gaps,
    }


def job_json(cfg: SyntheticConfig, fingerprint: str) -> dict[str, Any]:
    """A single-node job with InferenceX field names."""
    return {
        "image": cfg.image,
        "model": cfg.model,
        "model-prefix": cfg.model_prefix,
        "precision": cfg.precision,
        "framework": cfg.framework,
        "runner": cfg.runner,
        "isl": cfg.isl,
        "osl": cfg.osl,
        "tp": cfg.tp,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": cfg.ep,
        "dp-attn": False,
        "spec-decoding": "none",
        "conc": 0,
        "max-model-len": max_model_len(cfg.isl, cfg.osl),
        "exp-name": f"{cfg.model_prefix}_{seq_len_name(cfg.isl, cfg.osl)}",
        "disagg": False,
        "run-eval": False,
        "fingerprint": fingerprint,
    }


def write_run_dir(
    root: Path,
    run_id: str,
    configs: list[SyntheticConfig],
    concurrencies: tuple[int, ...] = (4, 8, 16, 32, 64),
    *,
    seed: int = 0,
    speedup: float = 1.0,
    official: bool = False,
    started: str = "2026-01-01T12:00:00+00:00",
    commit: str | None = None,
    speedups: dict[str, float] | None = None,
    requests: bool = False,
) -> Path:
    """A run directory in the shared layout: run.json, <job>/job.json, outcome, results.

    `speedups` scales one framework's speed on top of `speedup` (a regression to find);
    `requests` adds per-request lists, so the points can be judged against their noise."""
    rng = random.Random(seed)
    run_dir = root / run_id
    run_info: dict[str, Any] = {
        "run_id": run_id,
        "backend": "sim",
        "engine": "sim",
        "version": "0.1.0",
        "host": "localhost",
        "created": started,
        "official": official,
    }
    if commit:
        run_info["commit"] = commit
    _write(run_dir / "run.json", run_info)
    for n, cfg in enumerate(configs):
        fp = f"job{n:04d}{cfg.framework}"
        job = job_json(cfg, fp)
        job["conc"] = list(concurrencies)
        _write(run_dir / fp / "job.json", job)
        for conc in concurrencies:
            factor = speedup * (speedups or {}).get(cfg.framework, 1.0)
            bench = sa_bench_result(cfg, conc, rng=rng, speedup=factor, requests=requests)
            if cfg.power_w is not None:
                _write_power(run_dir / fp / "results", cfg, conc, bench)
            _write(run_dir / fp / "results" / f"conc{conc}.json", bench)
        _write(
            run_dir / fp / "outcome.json",
            {
                "status": str(JobStatus.COMPLETED),
                "attempt": 1,
                "backend": "sim",
                "engine": "sim",
                "host": "localhost",
                "times": {"started": started, "finished": started},
            },
        )
    return run_dir


def _write_power(results: Path, cfg: SyntheticConfig, conc: int, bench: dict[str, Any]) -> None:
    """nvidia-smi style samples (1 s apart) over the point's window, which the result
    then records; power rises with load up to `power_w` per GPU."""
    assert cfg.power_w is not None
    start = 1_767_268_800.0 + conc * 10_000  # 2026-01-01 12:00 UTC, a window per point
    end = start + bench["duration"]
    bench["benchmark_start_time_unix"], bench["benchmark_end_time_unix"] = start, end
    watts = cfg.power_w * (0.5 + 0.5 * min(1.0, conc / cfg.knee))
    lines = ["timestamp, index, power.draw [W]"]
    for k in range(int(end - start) + 3):
        for gpu in range(cfg.tp):
            lines.append(f"{start - 1 + k:.1f}, {gpu}, {watts:.1f} W")
    results.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(results / f"power_conc{conc}.csv", ("\n".join(lines) + "\n").encode())


def _write(path: Path, obj: object) -> None:
    atomic_write_bytes(path, orjson.dumps(obj, option=orjson.OPT_INDENT_2))
