"""The sweep `Job`: one benchmark point (single-node) or one deployment plus its concurrencies.

Its JSON keeps InferenceX's matrix field names (`model-prefix`, `dp-attn`, `conc`, `prefill` /
`decode` blocks, ...) so an InferenceX workflow could consume `inferbench sweep` output, and adds
`config-key`, `scenario-type`, `resolved-settings` (multinode) and the fingerprint.

One model with optional blocks, not a union, so that `Job.model_validate_json` reads any job:
  single-node   tp, pp, dcp-size, pcp-size, ep, dp-attn set; conc an int; prefill/decode None
  multinode     prefill + decode blocks (and resolved-settings); conc a list; parallelism None
  fixed-seq-len isl, osl, max-model-len (= isl + osl + 256) set
  agentic       kv-offloading, duration, total-cpu-dram-gb set; isl/osl/max-model-len None

The fingerprint is the sha256 of the job's canonical JSON (sorted keys, None fields left out)
without `conc`, `exp-name` and the eval marks (`run-eval`, `eval-only`, `eval-conc`,
`eval-all-concs`): every point of one curve shares it, and it does not move when a filter changes
which points are swept or evaluated. A new optional field must default to None to keep old
fingerprints stable.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

import orjson
from pydantic import ConfigDict, Field, computed_field, model_validator

from inferbench.core.model import FrozenModel

Scenario = Literal["fixed-seq-len", "agentic-coding"]

FINGERPRINT_EXCLUDED = frozenset(
    {
        "conc",
        "exp_name",
        "run_eval",
        "eval_only",
        "eval_conc",
        "eval_all_concs",
        "fingerprint",
        "fingerprint_short",
        "recipe_fingerprint",
    }
)
# Wire keys of inferbench's own; every other key of a job is one of InferenceX's row.
INFERBENCH_KEYS = frozenset({"config-key", "fingerprint", "fingerprint-short", "resolved-settings"})
SHORT_FINGERPRINT_LEN = 12  # hex digits: enough for folder names, tables and point keys
_DERIVED_KEYS = ("fingerprint", "fingerprint-short")


class _Wire(FrozenModel):
    """Frozen, unknown keys rejected, JSON in InferenceX's kebab-case names."""

    model_config = ConfigDict(populate_by_name=True)


class JobRouter(_Wire):
    name: str
    version: str


class JobKvOffloadBackend(_Wire):
    name: str
    version: str | None = None


class JobWorkerBlock(_Wire):
    """A `prefill` or `decode` pool as InferenceX's matrix carries it (defaults made explicit)."""

    num_worker: int = Field(alias="num-worker", ge=0)
    tp: int = Field(ge=1)
    ep: int = Field(ge=1)
    dp_attn: bool = Field(alias="dp-attn")
    pp: int = Field(default=1, ge=1)
    dcp_size: int = Field(default=1, alias="dcp-size", ge=1)
    pcp_size: int = Field(default=1, alias="pcp-size", ge=1)
    hardware: str | None = None
    # None: the master block has no `additional-settings` key (InferenceX's row then has none).
    additional_settings: tuple[str, ...] | None = Field(default=None, alias="additional-settings")

    @property
    def gpus(self) -> int:
        """GPUs of the whole pool: num-worker * tp * pp * pcp-size."""
        return self.num_worker * self.tp * self.pp * self.pcp_size


class ResolvedSettings(_Wire):
    """The multinode `additional-settings` of both pools, merged and with CONFIG_FILE resolved.

    `env` holds every KEY=VALUE as written (prefill first, then decode); `config-file` and
    `eval-config-file` are paths relative to the tree root (the `recipes/` prefix mapped onto the
    recipe folder), with the optional `:selector` split off.
    """

    env: dict[str, str] = Field(default_factory=dict)
    config_file: str | None = Field(default=None, alias="config-file")
    config_selector: str | None = Field(default=None, alias="config-selector")
    eval_config_file: str | None = Field(default=None, alias="eval-config-file")
    eval_config_selector: str | None = Field(default=None, alias="eval-config-selector")


class Job(_Wire):
    """One sweep job. Build with keyword arguments (python names) or validate InferenceX JSON."""

    config_key: str = Field(alias="config-key", min_length=1)
    scenario: Scenario = Field(default="fixed-seq-len", alias="scenario-type")
    image: str
    model: str
    model_prefix: str = Field(alias="model-prefix")
    precision: str
    framework: str
    runner: str
    isl: int | None = Field(default=None, ge=1)
    osl: int | None = Field(default=None, ge=1)
    tp: int | None = Field(default=None, ge=1)
    pp: int | None = Field(default=None, ge=1)
    dcp_size: int | None = Field(default=None, alias="dcp-size", ge=1)
    pcp_size: int | None = Field(default=None, alias="pcp-size", ge=1)
    ep: int | None = Field(default=None, ge=1)
    dp_attn: bool | None = Field(default=None, alias="dp-attn")
    prefill: JobWorkerBlock | None = None
    decode: JobWorkerBlock | None = None
    spec_decoding: str = Field(default="none", alias="spec-decoding")
    conc: int | tuple[int, ...]
    max_model_len: int | None = Field(default=None, alias="max-model-len", ge=1)
    exp_name: str = Field(alias="exp-name")
    disagg: bool = False
    # None: no eval policy has marked the job (InferenceX's agentic rows under --no-evals).
    run_eval: bool | None = Field(default=None, alias="run-eval")
    eval_only: bool = Field(default=False, alias="eval-only")
    eval_conc: int | None = Field(default=None, alias="eval-conc", ge=1)
    eval_all_concs: bool | None = Field(default=None, alias="eval-all-concs")
    router: JobRouter | None = None
    kv_p2p_transfer: str | None = Field(default=None, alias="kv-p2p-transfer")
    kv_offloading: str | None = Field(default=None, alias="kv-offloading")
    # an agentic entry's `offloading:` in InferenceX's format before AgentX v1.0 (#1970,
    # 2026-07-02), in place of kv-offloading: the row carries it as that generator wrote it
    offloading: str | None = None
    kv_offload_backend: JobKvOffloadBackend | None = Field(default=None, alias="kv-offload-backend")
    duration: int | None = Field(default=None, ge=1)
    total_cpu_dram_gb: int | None = Field(default=None, alias="total-cpu-dram-gb", ge=0)
    resolved_settings: ResolvedSettings | None = Field(default=None, alias="resolved-settings")
    # InferenceX's changelog processing stamps its benchmark rows with this (see
    # `recipe_fingerprint`); plain sweeps leave it out, as the generator does.
    recipe_fingerprint: str | None = Field(default=None, alias="recipe-fingerprint")
    fingerprint: str = Field(default="", repr=False)

    @model_validator(mode="wrap")
    @classmethod
    def _derive(cls, data: Any, handler: Any) -> Job:
        """Check the kind, then derive the fingerprint once; derived keys in the input are
        recomputed, and a stale fingerprint means the job was edited after generation."""
        claimed = None
        if isinstance(data, dict) and any(k in data for k in _DERIVED_KEYS):
            data = dict(data)
            claimed = data.pop("fingerprint", None)
            data.pop("fingerprint-short", None)
        job: Job = handler(data)
        job._check_kind()
        # Fields live in __dict__: frozen to callers, the model sets its own digest once here.
        object.__setattr__(job, "fingerprint", compute_fingerprint(job))
        if claimed not in (None, "") and claimed != job.fingerprint:
            raise ValueError(
                f"fingerprint {claimed} does not match the job's content ({job.fingerprint}); "
                "the job was edited after it was generated"
            )
        return job

    def _check_kind(self) -> None:
        parallelism = (self.tp, self.pp, self.dcp_size, self.pcp_size, self.ep, self.dp_attn)
        if self.prefill is not None or self.decode is not None:
            if self.prefill is None or self.decode is None:
                raise ValueError("a multinode job needs both prefill and decode blocks")
            if any(v is not None for v in parallelism):
                raise ValueError("a multinode job carries parallelism only in prefill/decode")
            if not isinstance(self.conc, tuple) or not self.conc:
                raise ValueError("a multinode job's conc is a non-empty list")
        else:
            if any(v is None for v in parallelism):
                raise ValueError("a single-node job needs tp, pp, dcp-size, pcp-size, ep, dp-attn")
            if not isinstance(self.conc, int):
                raise ValueError("a single-node job's conc is one integer")
        if self.scenario == "fixed-seq-len":
            if self.isl is None or self.osl is None or self.max_model_len is None:
                raise ValueError("a fixed-seq-len job needs isl, osl and max-model-len")
        elif (self.kv_offloading is None) == (self.offloading is None) or self.duration is None:
            raise ValueError("an agentic job needs duration and kv-offloading (or offloading)")

    @computed_field(alias="fingerprint-short")  # type: ignore[prop-decorator]
    @property
    def fingerprint_short(self) -> str:
        """The first 12 hex digits of the fingerprint: enough for folder names and tables."""
        return short_fingerprint(self.fingerprint)

    @property
    def is_multinode(self) -> bool:
        return self.prefill is not None

    @property
    def is_agentic(self) -> bool:
        return self.scenario == "agentic-coding"

    @property
    def concurrencies(self) -> tuple[int, ...]:
        """`conc` as a tuple whatever the kind of job."""
        return self.conc if isinstance(self.conc, tuple) else (self.conc,)

    def evolve(self, **changes: Any) -> Job:
        """A copy with `changes` (python names); the fingerprint is recomputed when it can move."""
        if set(changes) <= FINGERPRINT_EXCLUDED:
            return self.model_copy(update=changes)
        fields = {name: getattr(self, name) for name in type(self).model_fields}
        fields.update(changes, fingerprint="")
        return type(self)(**fields)

    def to_wire(self) -> dict[str, Any]:
        """The InferenceX-named JSON object: the row InferenceX's generator writes, key for key,
        plus inferbench's own keys. None fields are left out, and so are the keys the generator
        does not write: `scenario-type` on fixed-seq-len rows, `disagg` on single-node agentic
        rows, `eval-only` unless true."""
        exclude = set() if self.eval_only else {"eval_only"}
        if not self.is_agentic:
            exclude.add("scenario")
        elif not self.is_multinode:
            exclude.add("disagg")
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=exclude)


def inferencex_row(job: Job) -> dict[str, Any]:
    """The job as InferenceX's matrix row: its wire form without inferbench's own keys."""
    return {k: v for k, v in job.to_wire().items() if k not in INFERBENCH_KEYS}


def recipe_fingerprint(job: Job) -> str:
    """InferenceX's `recipe-fingerprint`: sha256 of the row's canonical JSON (sorted keys,
    compact, ASCII) without `conc`, `exp-name` and `recipe-fingerprint`."""
    row = inferencex_row(job)
    for key in ("conc", "exp-name", "recipe-fingerprint"):
        row.pop(key, None)
    text = json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compute_fingerprint(job: Job) -> str:
    """sha256 hex of the canonical JSON of `job` without conc, exp-name and the eval marks."""
    body = job.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude=set(FINGERPRINT_EXCLUDED)
    )
    for block in ("prefill", "decode"):  # no `additional-settings` and an empty one: one curve
        if block in body:
            body[block].setdefault("additional-settings", [])
    return hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()


def short_fingerprint(fingerprint: str) -> str:
    """A fingerprint's first SHORT_FINGERPRINT_LEN hex digits (a job folder's name)."""
    return fingerprint[:SHORT_FINGERPRINT_LEN]
