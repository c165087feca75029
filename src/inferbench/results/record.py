"""The stored benchmark point: identity + provenance + metrics, versioned.

A `Record` is what every ingest path produces and what the store, the analysis and
the report read. It is frozen once validated. `SCHEMA_VERSION` grows when a field is
added or changes meaning; a record written by a newer inferbench is refused with a
clear message instead of being half-understood.
  v1  first schema
  v2  identity.image in the config layer's normal form (`docker.io/...`); metrics gain
      the load generator's verdicts (complete, incomplete_reason, gate_failure) and
      client-side load (achieved_request_rate, in_flight_max, in_flight_mean), all
      optional so v1 records stay valid (store migration v3 rewrites v1 identities)
  v3  provenance.commit: the benchmark tree's commit the run was made from (optional)
  v4  provenance.repeat: which measurement of a point measured several times in one run
      (`--repeats`); 1, the default, keeps the natural keys of earlier versions; and
      agentic: the replay's per-turn, per-session and cache figures of an agentic point
      (the result file's `inferbench.agentic` block, optional)
  v5  provenance.engine_flags: the engine flags the job carried (its `sim-flags`,
      `kv-cache-dtype`, `max-model-len`), so a point read back can be simulated with the
      flags it ran with (optional)
  v6  provenance.accelerator: what the engine ran on (env.json's, when the run recorded
      it) and provenance.planned_hardware: the entry's hardware when the point was measured
      on other hardware (the identity then names the measured one: `cpu` for vLLM's CPU
      build running an h200 entry), both optional
  v7  validity: whether the point measured what it claims, with the reasons it did not
      (`results.validity`; optional: a record without it is judged from its metrics)
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from functools import cached_property
from typing import Annotated, Any, Literal, Self

import orjson
from pydantic import Field, ValidationError

from inferbench.bench.agentic.block import AgenticBlock
from inferbench.config.topology import topology_label
from inferbench.core.accelerator import Accelerator
from inferbench.core.errors import InputError, Location
from inferbench.core.model import FrozenModel
from inferbench.engines.layout import WorkerLayout

SCHEMA_VERSION = 7

PoolRole = Literal["worker", "prefill", "decode"]
FlagValue = str | int | float | bool
# Counts (requests, tokens) are stored as 64-bit integers; a larger one is a damaged file.
Count = Annotated[int, Field(ge=0, le=2**63 - 1)]


class Pool(FrozenModel):
    """One worker pool: `workers` engine instances of `gpus_per_worker` GPUs each."""

    role: PoolRole
    workers: int = Field(ge=0)
    gpus_per_worker: int = Field(ge=1)
    tp: int = Field(ge=1)
    dp: int = Field(default=1, ge=1)
    ep: int = Field(default=1, ge=1)
    pp: int = Field(default=1, ge=1)
    pcp: int = Field(default=1, ge=1)
    dp_attn: bool = False
    hardware: str
    layout_note: str | None = None  # which DEP spelling was assumed, when ambiguous

    @property
    def gpus(self) -> int:
        return self.workers * self.gpus_per_worker

    def layout(self) -> WorkerLayout:
        """One worker's engine layout (the DP ranks of DP attention in `dp`)."""
        return WorkerLayout(self.gpus_per_worker, self.tp, self.dp, self.ep, self.pp, 1, self.pcp)


class Identity(FrozenModel):
    """What produced the point: model, engine, image, hardware, topology, workload."""

    model: str
    model_prefix: str
    precision: str
    framework: str
    image: str | None = None  # normalised container reference
    hardware_prefill: str
    hardware_decode: str
    runner: str | None = None
    disagg: bool = False
    pools: tuple[Pool, ...] = Field(min_length=1)
    spec_decoding: str = "none"
    isl: int = Field(ge=1)
    osl: int = Field(ge=1)
    concurrency: int = Field(ge=1)
    range_ratio: float | None = Field(default=None, ge=0)
    range_mode: str | None = None  # which length convention range_ratio follows
    dataset: str = "random"
    recipe_fingerprint: str | None = None
    job_fingerprint: str | None = None

    @cached_property
    def _dump(self) -> dict[str, Any]:
        # keys are computed from this for every stored point: dump once per object
        return self.model_dump()

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        copy = super().model_copy(update=update, deep=deep)
        copy.__dict__.pop("_dump", None)  # the cached dump describes the original
        return copy

    def at_concurrency(self, concurrency: int) -> Self:
        """This identity at another concurrency (the points of one job differ only there),
        its dump carried over rather than made again for each point's keys."""
        copy = super().model_copy(update={"concurrency": concurrency})
        copy.__dict__["_dump"] = {**self._dump, "concurrency": concurrency}
        return copy

    def pool(self, role: PoolRole) -> Pool | None:
        return next((p for p in self.pools if p.role == role), None)

    @property
    def total_gpus(self) -> int:
        return sum(p.gpus for p in self.pools)

    def topology(self) -> str:
        """The topology label every command prints (`config.topology.topology_label`):
        `TP8`, `2xTEP4`, `1P2D TEP4/DEP8`."""
        roles = {p.role: p for p in self.pools if p.workers}
        prefill, decode = roles.get("prefill"), roles.get("decode")
        if prefill is not None and decode is not None:
            return topology_label(
                decode.layout(),
                prefill=prefill.layout(),
                prefill_workers=prefill.workers,
                decode_workers=decode.workers,
            )
        pool = decode or prefill or roles.get("worker") or self.pools[0]
        return topology_label(pool.layout(), decode_workers=max(pool.workers, 1))

    def hardware(self) -> str:
        if self.hardware_prefill == self.hardware_decode:
            return self.hardware_prefill
        return f"{self.hardware_prefill}/{self.hardware_decode}"


class Provenance(FrozenModel):
    """Where and when the point was measured, and whether it is official."""

    run_id: str
    attempt: int = Field(default=1, ge=1)
    backend: str | None = None
    engine: str | None = None
    host: str | None = None
    cluster: str | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    inferbench_version: str | None = None
    official: bool = False
    source: str | None = None  # the file the point came from
    command: str | None = None  # how the server / client was launched, when known
    tag: str | None = None
    commit: str | None = None  # the benchmark tree's commit, when the run recorded it
    repeat: int = Field(default=1, ge=1)  # measurement k of the point in this run (--repeats)
    # the engine flags the job carried (vLLM spelling, as a sweep job's `sim-flags`), when any
    engine_flags: dict[str, FlagValue] | None = None
    accelerator: Accelerator | None = None  # what the engine ran on, when the run recorded it
    # the hardware the entry names, when the point was measured on other hardware (the
    # identity's is the measured one, so the point never joins the entry's series)
    planned_hardware: str | None = None


class RecordStats(FrozenModel):
    """A distribution summary in the unit its field name says (ms for latencies)."""

    mean: float | None = None
    median: float | None = None
    std: float | None = None
    p90: float | None = None
    p99: float | None = None
    p999: float | None = None


class RecordInteractivity(FrozenModel):
    """Tokens/s/user percentiles over the per-request distribution.

    `source` says how they were obtained: `per_request` (computed from each request's
    TPOT), or `tpot_percentiles` (interactivity p_k = 1000 / TPOT p_(100-k), exact for
    order statistics; the mean cannot be recovered that way and stays None).
    """

    p1: float | None = None
    p10: float | None = None
    median: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None
    source: Literal["per_request", "tpot_percentiles"]


class Energy(FrozenModel):
    """GPU energy over the benchmark window, with a verdict on whether to trust it."""

    joules: float | None
    joules_per_output_token: float | None
    joules_per_total_token: float | None
    gpus: int
    samples: int
    valid: bool
    reasons: tuple[str, ...] = ()


class Derived(FrozenModel):
    """Metrics with one definition each (see `inferbench.results.derived`)."""

    total_tput_per_gpu: float
    output_tput_per_gpu: float
    input_tput_per_gpu: float
    output_tput_per_decode_gpu: float | None = None
    input_tput_per_prefill_gpu: float | None = None
    interactivity: RecordInteractivity | None = None
    failure_rate: float = Field(ge=0, le=1)
    energy: Energy | None = None


class Metrics(FrozenModel):
    """Every bench metric (sa-bench names, grouped) plus failures by category."""

    duration_s: float = Field(gt=0)
    completed: Count
    failed: Count = 0
    failures: dict[str, Count] = Field(default_factory=dict)
    num_prompts: Count | None = None
    request_rate: float | None = None  # None = unlimited (closed loop at concurrency)
    max_concurrency: Count | None = None
    total_input_tokens: Count
    total_output_tokens: Count
    request_throughput: float = Field(ge=0)
    output_throughput: float = Field(ge=0)
    total_token_throughput: float = Field(ge=0)
    ttft_ms: RecordStats = RecordStats()
    tpot_ms: RecordStats = RecordStats()
    itl_ms: RecordStats = RecordStats()
    e2el_ms: RecordStats = RecordStats()
    queue_ms: RecordStats | None = None
    goodput: float | None = None
    # None = the file does not say (plain sa-bench, or a record older than v2)
    complete: bool | None = None  # False: the point stopped early (interrupt, duration cap)
    incomplete_reason: str | None = None
    gate_failure: str | None = None  # why the client judged the point untrustworthy
    achieved_request_rate: float | None = Field(default=None, ge=0)  # sends/s
    in_flight_max: Count | None = None  # requests in flight, client view
    in_flight_mean: float | None = Field(default=None, ge=0)  # time-weighted


class PointValidity(FrozenModel):
    """A point's verdict: valid, or invalid with one reason per broken bound."""

    valid: bool = True
    reasons: tuple[str, ...] = ()


class Record(FrozenModel):
    """One benchmark point as stored."""

    schema_version: int = SCHEMA_VERSION
    identity: Identity
    provenance: Provenance
    metrics: Metrics
    derived: Derived
    agentic: AgenticBlock | None = None  # agentic replays only
    validity: PointValidity | None = None  # None: stored before v7 (`validity.validity_of`)

    def natural_key(self) -> str:
        """Same run, same point -> same key: re-ingesting replaces, never duplicates."""
        key: dict[str, object] = {"run": self.provenance.run_id, "point": self.identity._dump}
        if self.provenance.repeat > 1:  # repeat 1 keeps the key a single measurement has
            key["repeat"] = self.provenance.repeat
        return _digest(key)

    def point_key(self) -> str:
        """Identifies a point across runs (image and recipe may change between them)."""
        skip = {"image", "recipe_fingerprint", "model"}
        return _digest({k: v for k, v in self.identity._dump.items() if k not in skip})

    def series_label(self) -> str:
        i = self.identity
        return f"{i.model_prefix} {i.hardware()} {i.framework} {i.precision}"


def content_hash(payload: str) -> str:
    """Hash of a stored record's JSON: an unchanged re-ingest is detected by it."""
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def _digest(obj: object) -> str:
    data = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(data).hexdigest()[:32]


def check_schema_version(version: object, *, location: Location | None = None) -> int:
    """Refuse records this inferbench cannot read (newer, or not a version at all)."""
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise InputError(
            f"schema_version must be a positive integer, got {version!r}", location=location
        )
    if version > SCHEMA_VERSION:
        raise InputError(
            f"record schema version {version} is newer than this inferbench understands "
            f"(up to {SCHEMA_VERSION})",
            location=location,
            hint="upgrade inferbench to read it",
        )
    return version


def record_from_json(data: bytes | str, *, location: Location | None = None) -> Record:
    """Parse a stored record, refusing newer schema versions before validating."""
    try:
        # the fast path: pydantic parses the JSON itself (no intermediate dicts)
        record = Record.model_validate_json(data)
    except ValidationError:
        record = None
    if record is not None:
        check_schema_version(record.schema_version, location=location)
        return record
    raw = orjson.loads(data)
    if not isinstance(raw, dict):
        raise InputError("a stored record must be a JSON object", location=location)
    check_schema_version(raw.get("schema_version"), location=location)
    return Record.model_validate(raw)
