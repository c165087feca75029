"""Fixtures for the launch tests: deployments and plans around a real engine-like server."""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import pytest

from inferbench.core.outcome import PointOutcome
from inferbench.core.status import PointStatus
from inferbench.launch.deployment import Deployment, deployment_from_dicts
from inferbench.launch.plan import Backend, BenchPoint, BenchSpec, Engine, Plan, ProcessSpec

ENGINE_SERVER = str(Path(__file__).with_name("engine_server.py"))
READY = r"inferbench sim: listening on (http://\S+)"


def job_dict(**over: object) -> dict[str, object]:
    job: dict[str, object] = {
        "config-key": "llama-fp8-h200-vllm",
        "image": "vllm/vllm-openai:v0.10.2",
        "model": "meta-llama/Llama-3.1-8B-Instruct",
        "model-prefix": "llama",
        "precision": "fp8",
        "framework": "vllm",
        "runner": "h200",
        "isl": 1024,
        "osl": 1024,
        "tp": 2,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "conc": 4,
        "max-model-len": 2304,
        "exp-name": "llama_1k1k",
    }
    job.update(over)
    return job


@pytest.fixture
def dep() -> Deployment:
    return deployment_from_dicts([job_dict(conc=1), job_dict(conc=2), job_dict(conc=4)])


def server_plan(*flags: str, concs: tuple[int, ...] = (1, 2), fp: str = "cd" * 32) -> Plan:
    """A local plan whose server is engine_server.py with `flags` (port 0, URL printed)."""
    proc = ProcessSpec(
        name="engine",
        argv=(sys.executable, ENGINE_SERVER, "--port", "0", "--print-url", *flags),
        port=0,
        ready_pattern=READY,
    )
    points = tuple(BenchPoint(concurrency=c, num_prompts=c, num_warmups=0) for c in concs)
    bench = BenchSpec(model="m", isl=8, osl=8, points=points)
    return Plan(
        backend=Backend.LOCAL, engine=Engine.SIM, fingerprint=fp, processes=(proc,), bench=bench
    )


def http_point(
    base_url: str, spec: BenchSpec, point: BenchPoint, out: Path, log: Path
) -> PointOutcome:
    """A point runner that really calls the server and writes a result file atomically."""
    from inferbench.core.fsio import atomic_write_text

    try:
        with urllib.request.urlopen(base_url + "/v1/work", timeout=5) as resp:
            body = json.loads(resp.read())
    except OSError as exc:
        return PointOutcome(
            concurrency=point.concurrency, status=PointStatus.FAILED, reason=str(exc)
        )
    atomic_write_text(out, json.dumps({"max_concurrency": point.concurrency, **body}))
    return PointOutcome(
        concurrency=point.concurrency, status=PointStatus.PASSED, result_file=str(out.name)
    )
