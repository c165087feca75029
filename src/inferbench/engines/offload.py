"""Prefix caching and KV offload flags of agentic jobs, as InferenceX's agentic launchers set them.

`total-cpu-dram-gb` is the job's aggregate host-DRAM budget (InferenceX's matrix sizes it
for the job's GPUs); backends with per-rank settings divide it, as the launchers do
(benchmarks/single_node/agentic/*.sh):

- vllm-native: `--kv_offloading_backend native --kv_offloading_size GiB` (the aggregate,
  which vLLM splits over the TP ranks);
- vllm-simple: `--kv-transfer-config` with vLLM's SimpleCPUOffloadConnector and
  `cpu_bytes_to_use_per_rank` = budget / GPUs, `PYTHONHASHSEED=42` (equal block hashes
  across DP ranks);
- lmcache (vLLM): LMCache's in-process connector (`LMCacheConnectorV1`) with a local CPU
  pool of budget / TP GB per rank, 256-token chunks (`LMCACHE_*` env). InferenceX's vLLM
  launchers instead start LMCache servers and use its multi-process connector;
- mooncake (vLLM): `MooncakeStoreConnector` (`load_async`) and `mooncake_config.json` with
  a per-rank segment of budget / TP GB; the Mooncake master (`mooncake_master --port P`) is
  named in the plan's notes and must be running;
- hicache (SGLang): `--enable-hierarchical-cache --hicache-size GB` per rank (budget / TP),
  `--page-size 64`, kernel I/O, page_first layout, write_through_selective.
vLLM gets `--enable-prefix-caching`; SGLang's radix cache is on by default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from inferbench.core.errors import InputError, Location
from inferbench.engines.server import Offload

MOONCAKE_CONFIG = "mooncake_config.json"
MOONCAKE_PORT_OFFSET = 12000  # the master listens on the server port + this, as InferenceX


@dataclass(frozen=True)
class OffloadFlags:
    argv: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def _refuse(offload: Offload, engine: str, known: tuple[str, ...]) -> InputError:
    return InputError(
        f"kv-offload-backend {offload.backend!r} is not one {engine} takes",
        location=Location(key="kv-offload-backend.name"),
        hint=f"use one of {', '.join(known)}, or kv-offloading: none",
    )


def _json(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def vllm_offload(offload: Offload, *, tp: int, gpus: int, port: int) -> OffloadFlags:
    argv = ["--enable-prefix-caching"]
    if offload.tier != "dram":
        return OffloadFlags(tuple(argv))
    gb = offload.total_cpu_dram_gb
    if gb <= 0:
        raise InputError(
            "kv-offloading: dram needs a positive total-cpu-dram-gb",
            location=Location(key="total-cpu-dram-gb"),
            hint="give the runner's hardware entry available-cpu-dram-mib in runners.yaml",
        )
    backend = offload.backend
    if backend == "vllm-native":
        gib = gb * 10**9 // 2**30
        return OffloadFlags(
            (*argv, "--kv_offloading_backend", "native", "--kv_offloading_size", str(gib))
        )
    if backend == "vllm-simple":
        config = {
            "kv_connector": "SimpleCPUOffloadConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {
                "cpu_bytes_to_use_per_rank": gb * 10**9 // max(gpus, 1),
                "enable_cross_layers_blocks": "true",
                "lazy_offload": False,
            },
        }
        return OffloadFlags(
            (*argv, "--kv-transfer-config", _json(config)), env={"PYTHONHASHSEED": "42"}
        )
    if backend == "lmcache":
        config = {"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}
        env = {
            "PYTHONHASHSEED": "0",
            "LMCACHE_LOCAL_CPU": "True",
            "LMCACHE_MAX_LOCAL_CPU_SIZE": str(max(1, gb // max(tp, 1))),
            "LMCACHE_CHUNK_SIZE": "256",
        }
        return OffloadFlags((*argv, "--kv-transfer-config", _json(config)), env=env)
    if backend == "mooncake":
        master = port + MOONCAKE_PORT_OFFSET
        segment = max(1, gb // max(tp, 1))
        mooncake = {
            "mode": "embedded",
            "metadata_server": "P2PHANDSHAKE",
            "master_server_address": f"127.0.0.1:{master}",
            "global_segment_size": f"{segment}GB",
            "local_buffer_size": "4GB",
            "protocol": "rdma",
            "device_name": "",
            "enable_offload": False,
        }
        config = {
            "kv_connector": "MooncakeStoreConnector",
            "kv_role": "kv_both",
            "kv_connector_extra_config": {"load_async": True},
        }
        return OffloadFlags(
            (*argv, "--kv-transfer-config", _json(config)),
            env={"MOONCAKE_CONFIG_PATH": MOONCAKE_CONFIG, "PYTHONHASHSEED": "0"},
            files={MOONCAKE_CONFIG: json.dumps(mooncake, indent=2) + "\n"},
            notes=(f"Mooncake: start `mooncake_master --port {master}` before the server",),
        )
    raise _refuse(offload, "vLLM", ("vllm-native", "vllm-simple", "lmcache", "mooncake"))


def sglang_offload(offload: Offload, *, tp: int) -> OffloadFlags:
    if offload.tier != "dram":
        return OffloadFlags()
    if offload.backend != "hicache":
        raise _refuse(offload, "SGLang", ("hicache",))
    per_rank = offload.total_cpu_dram_gb // max(tp, 1)
    if per_rank < 1:
        raise InputError(
            f"HiCache needs at least 1 GB per rank; total-cpu-dram-gb"
            f" {offload.total_cpu_dram_gb} over TP {tp} gives {per_rank}",
            location=Location(key="total-cpu-dram-gb"),
        )
    return OffloadFlags(
        (
            "--page-size",
            "64",
            "--enable-hierarchical-cache",
            "--hicache-size",
            str(per_rank),
            "--hicache-io-backend",
            "kernel",
            "--hicache-mem-layout",
            "page_first",
            "--hicache-write-policy",
            "write_through_selective",
        )
    )
