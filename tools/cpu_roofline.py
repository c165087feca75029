"""Measure this machine's CPU as the simulator's hardware catalog wants it: memory bandwidth
(GB/s) and dense matmul throughput (TFLOP/s), with numpy, on the cores it is allowed.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 taskset -c 0 python tools/cpu_roofline.py

Why one core: the real-vLLM tests pin the server to one core (tests/real_engines: taskset,
VLLM_CPU_OMP_THREADS_BIND), so the device the simulator models is that core. Bandwidth is
the best of several passes of `np.copyto` over arrays well past the last-level cache (read
plus write bytes counted), the bandwidth a weight or KV read gets from DRAM; compute is the
best of several float32 matmuls (numpy has no bf16; vLLM's CPU build runs bf16 matmuls
through oneDNN at about the float32 rate on CPUs without AMX). Best, not mean, because a
shared machine's other load only ever slows a pass down. Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import sys
import time

import numpy as np


def bandwidth_gbps(mib: int = 512, passes: int = 7) -> float:
    """Copy bandwidth in GB/s (decimal): bytes read + bytes written per second."""
    src = np.ones(mib * 2**20 // 8, dtype=np.float64)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best / 1e9


def matmul_tflops(n: int = 2048, passes: int = 7) -> float:
    """float32 matmul throughput in TFLOP/s (2 n^3 FLOPs per product)."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    a @ b  # warm up (thread pool, pages)
    best = float("inf")
    for _ in range(passes):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best / 1e12


def main() -> int:
    cores = sorted(os.sched_getaffinity(0))
    out = {
        "cores": cores,
        "threads_env": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
        "memory_gbps": round(bandwidth_gbps(), 2),
        "matmul_fp32_tflops": round(matmul_tflops(), 4),
        "numpy": np.__version__,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
