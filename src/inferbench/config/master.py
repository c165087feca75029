"""Master config entries (`configs/*-master.yaml`) in the InferenceX schema.

A master file is a map `config-key -> MasterEntry`. `multinode` selects the
single-node or multinode search-space shape; each search-space entry is told
apart by its shape (`prefill`/`decode` blocks) and checked against the flag.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from inferbench.config.base import FrozenModel, RuleViolation
from inferbench.config.settings import AdditionalSettings, RecipeRef
from inferbench.config.validate import validate_doc
from inferbench.config.yamlio import KeyPath, PositionedDoc, load_yaml, parse_path
from inferbench.core.errors import ConfigError, Location
from inferbench.core.fsread import MAX_CONFIG_BYTES, read_text_file
from inferbench.core.hfid import check_model_reference
from inferbench.core.limits import MAX_CONCURRENCY, MAX_ENGINE_INT, MAX_TOKENS
from inferbench.engines.layout import WorkerLayout, worker_layout

SpecDecoding = Literal["mtp", "draft_model", "none"]
# Any non-empty name, as InferenceX's validator reads it: its trees name transfer engines that
# come and go (`moriio` until 2026-08-07); the launcher, not the schema, knows which it has.
KvP2PTransfer = Annotated[str, Field(min_length=1)]
ScenarioType = Literal["fixed-seq-len", "agentic-coding"]
PositiveInt = Annotated[int, Field(ge=1, le=MAX_ENGINE_INT)]
# `tp: 0` is read, as InferenceX's generator reads it (`tp: int`); `check` reports it (IB150)
Width = Annotated[int, Field(ge=0, le=MAX_ENGINE_INT)]
# Bounded here so that 2**64 or 2**63 is a finding of `check` and an error of `sweep`, never
# a number that overflows a JSON writer or expands into 62 points of --max-num-seqs 2**62.
Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
Tokens = Annotated[int, Field(ge=1, le=MAX_TOKENS)]


class _MasterModel(FrozenModel):
    """A master-config block. An explicit `key: null` means the key's default, as InferenceX's
    generator reads it (`bmk.get("ep")` is None either way): `ep: ~` is accepted there."""

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        if not isinstance(data, dict) or None not in data.values():
            return data
        optional = {f.alias or n for n, f in cls.model_fields.items() if not f.is_required()}
        return {k: v for k, v in data.items() if not (v is None and k in optional)}


def _not_an_image(value: str | None) -> str | None:
    """InferenceX's rule: a component's own version (a release, package version or commit),
    not the `image:...` it came in. Anything else it accepts (`sha256:...`, `v1@abc`)."""
    if value is not None and value.startswith("image:"):
        raise ValueError(
            f"version {value!r} is an image reference; give the component's own release, "
            "package version or source commit"
        )
    return value


class MasterRouter(_MasterModel):
    name: str = Field(min_length=1)
    version: str = Field(min_length=1)

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str | None:
        return _not_an_image(value)


class MasterKvOffloadBackend(_MasterModel):
    name: str = Field(min_length=1)
    version: str | None = Field(default=None, min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, data: Any) -> Any:
        """`kv-offload-backend: lmcache`, InferenceX's spelling before upstream #2096
        (2026-07-13), is the backend's name."""
        return {"name": data} if isinstance(data, str) else data

    @field_validator("version")
    @classmethod
    def _version(cls, value: str | None) -> str | None:
        return _not_an_image(value)


class MasterWorkerBlock(_MasterModel):
    """A `prefill:` or `decode:` block of a multinode search-space entry."""

    num_worker: int = Field(alias="num-worker", ge=0, le=MAX_ENGINE_INT)
    tp: Width
    ep: PositiveInt
    dp_attn: bool = Field(alias="dp-attn")
    pp: PositiveInt = 1
    dcp_size: PositiveInt = Field(default=1, alias="dcp-size")
    pcp_size: PositiveInt = Field(default=1, alias="pcp-size")
    hardware: str | None = None
    additional_settings: AdditionalSettings = Field(
        default_factory=AdditionalSettings, alias="additional-settings"
    )

    @model_validator(mode="after")
    def _dcp_divides_tp(self) -> MasterWorkerBlock:
        _check_dcp(self.tp, self.dcp_size)
        _check_ep(self.tp, self.ep)
        return self

    @property
    def layout(self) -> WorkerLayout:
        return worker_layout(self.tp, self.ep, self.dp_attn, self.pp, self.pcp_size, self.dcp_size)

    @property
    def gpus(self) -> int:
        """GPUs of the whole pool (all workers)."""
        return self.num_worker * self.layout.gpus


def _check_dcp(tp: int, dcp: int) -> None:
    if tp % dcp:
        raise RuleViolation(
            f"tp ({tp}) must be a multiple of dcp-size ({dcp})",
            at=("dcp-size",),
            hint="choose a dcp-size that divides tp",
        )


def _check_ep(tp: int, ep: int) -> None:
    # The experts are split over the tp ranks (ep divides tp: sglang's --ep-size, vLLM's
    # expert parallelism) or over tp x dp ranks with data-parallel attention (ep a multiple
    # of tp): tp 8 with ep 3 splits 8 ranks' experts into 3 groups, which no engine starts.
    if tp % ep and ep % tp:
        raise RuleViolation(
            f"ep ({ep}) neither divides tp ({tp}) nor is a multiple of it",
            at=("ep",),
            hint=f"choose an ep that divides tp (e.g. 1 or {tp}) or a multiple of tp",
        )


class _Concurrency(_MasterModel):
    """Exactly one of `conc-list` or `conc-start` + `conc-end`."""

    conc_list: tuple[Concurrency, ...] | None = Field(default=None, alias="conc-list")
    conc_start: Concurrency | None = Field(default=None, alias="conc-start")
    conc_end: Concurrency | None = Field(default=None, alias="conc-end")

    @model_validator(mode="after")
    def _one_concurrency_form(self) -> Any:
        has_range = self.conc_start is not None or self.conc_end is not None
        if self.conc_list is not None and has_range:
            raise RuleViolation(
                "give either conc-list or conc-start/conc-end, not both",
                at=("conc-list",),
                hint="remove conc-list or the range",
            )
        if self.conc_list is not None:
            if not self.conc_list:
                raise RuleViolation("conc-list is empty", at=("conc-list",))
            return self
        if self.conc_start is None or self.conc_end is None:
            missing = "conc-end" if self.conc_start is not None else "conc-start"
            raise RuleViolation(
                f"missing {missing}" if has_range else "no concurrency given",
                hint="add conc-list: [...] or both conc-start and conc-end",
            )
        if self.conc_start > self.conc_end:
            raise RuleViolation(
                f"conc-start ({self.conc_start}) is above conc-end ({self.conc_end})",
                at=("conc-start",),
                hint="swap them",
            )
        return self


class _KvOffload(_MasterModel):
    kv_offloading: Literal["none", "dram"] | None = Field(default=None, alias="kv-offloading")
    kv_offload_backend: MasterKvOffloadBackend | None = Field(
        default=None, alias="kv-offload-backend"
    )

    @model_validator(mode="after")
    def _backend_with_dram(self) -> Any:
        if self.kv_offloading == "dram" and self.kv_offload_backend is None:
            raise RuleViolation(
                "kv-offloading: dram needs kv-offload-backend",
                at=("kv-offloading",),
                hint="add kv-offload-backend: {name: ..., version: ...}",
            )
        if self.kv_offloading != "dram" and self.kv_offload_backend is not None:
            raise RuleViolation(
                "kv-offload-backend is only allowed with kv-offloading: dram",
                at=("kv-offload-backend",),
            )
        return self


class SingleNodeSearchSpace(_Concurrency):
    tp: Width
    ep: PositiveInt = 1
    pp: PositiveInt = 1
    dcp_size: PositiveInt = Field(default=1, alias="dcp-size")
    pcp_size: PositiveInt = Field(default=1, alias="pcp-size")
    dp_attn: bool = Field(default=False, alias="dp-attn")
    spec_decoding: SpecDecoding = Field(default="none", alias="spec-decoding")
    router: MasterRouter | None = None

    @model_validator(mode="after")
    def _dcp_divides_tp(self) -> SingleNodeSearchSpace:
        _check_dcp(self.tp, self.dcp_size)
        _check_ep(self.tp, self.ep)
        return self

    @property
    def layout(self) -> WorkerLayout:
        return worker_layout(self.tp, self.ep, self.dp_attn, self.pp, self.pcp_size, self.dcp_size)


class MultiNodeSearchSpace(_Concurrency):
    prefill: MasterWorkerBlock
    decode: MasterWorkerBlock
    spec_decoding: SpecDecoding = Field(default="none", alias="spec-decoding")
    router: MasterRouter | None = None
    kv_p2p_transfer: KvP2PTransfer | None = Field(default=None, alias="kv-p2p-transfer")

    @model_validator(mode="after")
    def _hardware_on_both(self) -> MultiNodeSearchSpace:
        if (self.prefill.hardware is None) != (self.decode.hardware is None):
            side = "decode" if self.decode.hardware is None else "prefill"
            raise RuleViolation(
                "hardware must be given on both prefill and decode, or on neither",
                at=(side,),
                hint=f"add hardware: to {side}",
            )
        return self

    @property
    def aggregated(self) -> bool:
        """`decode.num-worker: 0` is InferenceX's way of writing an aggregated deployment."""
        return self.decode.num_worker == 0

    @property
    def config_file(self) -> RecipeRef | None:
        """The CONFIG_FILE recipe reference (prefill block first, then decode)."""
        return (
            self.prefill.additional_settings.config_file
            or self.decode.additional_settings.config_file
        )


class AgenticSingleNodeSearchSpace(SingleNodeSearchSpace, _KvOffload):
    # InferenceX's agentic format from upstream #1201 (2026-05-01) to AgentX v1.0 (#1970,
    # 2026-07-02): `offloading: none|cpu|ssd|lmcache|hicache`, passed on as written (its rows
    # carry it, the launcher exported it as OFFLOADING); kv-offloading replaced it
    offloading: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _one_offload_spelling(self) -> AgenticSingleNodeSearchSpace:
        if self.offloading is not None and self.kv_offloading is not None:
            raise RuleViolation(
                "offloading (InferenceX's spelling before AgentX v1.0) and kv-offloading are"
                " both set",
                at=("offloading",),
                hint="keep kv-offloading: none|dram (+ kv-offload-backend)",
            )
        return self


class AgenticMultiNodeSearchSpace(MultiNodeSearchSpace, _KvOffload):
    pass


def _shape(value: Any) -> str:
    if isinstance(value, dict) and ("prefill" in value or "decode" in value):
        return "multinode"
    if isinstance(value, SingleNodeSearchSpace):
        return "single-node"
    return "multinode" if isinstance(value, MultiNodeSearchSpace) else "single-node"


SearchSpace = Annotated[
    Annotated[SingleNodeSearchSpace, Tag("single-node")]
    | Annotated[MultiNodeSearchSpace, Tag("multinode")],
    Discriminator(_shape),
]
AgenticSearchSpace = Annotated[
    Annotated[AgenticSingleNodeSearchSpace, Tag("single-node")]
    | Annotated[AgenticMultiNodeSearchSpace, Tag("multinode")],
    Discriminator(_shape),
]
AnySearchSpace = SingleNodeSearchSpace | MultiNodeSearchSpace


class FixedSeqLen(_MasterModel):
    isl: Tokens
    osl: Tokens
    search_space: tuple[SearchSpace, ...] = Field(alias="search-space")


class AgenticCoding(_MasterModel):
    search_space: tuple[AgenticSearchSpace, ...] = Field(alias="search-space")
    dram_utilization: float | None = Field(default=None, alias="dram-utilization", gt=0, le=1)
    # seconds per run, the scenario's own before AgentX v1.0 (upstream #1970, 2026-07-02);
    # InferenceX's generator has written its default since (inferbench: the default when absent)
    duration: PositiveInt | None = None

    @model_validator(mode="after")
    def _dram_needs_utilization(self) -> AgenticCoding:
        for index, space in enumerate(self.search_space):
            if space.kv_offloading == "dram" and self.dram_utilization is None:
                raise RuleViolation(
                    "kv-offloading: dram needs the scenario's dram-utilization",
                    at=("search-space", index, "kv-offloading"),
                    hint="add dram-utilization: 0.8 (a fraction in (0, 1]) to the scenario",
                )
        return self


class Scenarios(_MasterModel):
    fixed_seq_len: tuple[FixedSeqLen, ...] = Field(default=(), alias="fixed-seq-len")
    agentic_coding: tuple[AgenticCoding, ...] = Field(default=(), alias="agentic-coding")

    @model_validator(mode="after")
    def _at_least_one(self) -> Scenarios:
        if not self.fixed_seq_len and not self.agentic_coding:
            raise RuleViolation(
                "no scenario given", hint="add fixed-seq-len: [...] or agentic-coding: [...]"
            )
        return self


@dataclass(frozen=True)
class SearchSpacePoint:
    """One search-space entry with where it sits: scenario, lengths, key path."""

    scenario: ScenarioType
    space: AnySearchSpace
    path: KeyPath  # relative to the master entry
    isl: int | None = None
    osl: int | None = None
    dram_utilization: float | None = None
    duration: int | None = None  # the agentic scenario's own (older format), else None


class MasterEntry(_MasterModel):
    image: str = Field(min_length=1)
    model: str = Field(min_length=1)
    model_prefix: str = Field(alias="model-prefix", min_length=1)
    runner: str = Field(min_length=1)
    precision: str = Field(min_length=1)
    framework: str = Field(min_length=1)
    multinode: bool
    disagg: bool = False
    router: MasterRouter | None = None
    kv_p2p_transfer: KvP2PTransfer | None = Field(default=None, alias="kv-p2p-transfer")
    scenarios: Scenarios

    @field_validator("model")
    @classmethod
    def _model_reference(cls, value: str) -> str:
        try:
            return check_model_reference(value)
        except ValueError as exc:
            raise RuleViolation(
                str(exc), hint="give the model's Hugging Face id (org/name) or a local path"
            ) from None

    def search_spaces(self) -> Iterator[SearchSpacePoint]:
        """Every search-space entry of every scenario, in file order."""
        for i, fixed in enumerate(self.scenarios.fixed_seq_len):
            for j, space in enumerate(fixed.search_space):
                path: KeyPath = ("scenarios", "fixed-seq-len", i, "search-space", j)
                yield SearchSpacePoint("fixed-seq-len", space, path, fixed.isl, fixed.osl)
        for i, agentic in enumerate(self.scenarios.agentic_coding):
            for j, space in enumerate(agentic.search_space):
                path = ("scenarios", "agentic-coding", i, "search-space", j)
                yield SearchSpacePoint(
                    "agentic-coding",
                    space,
                    path,
                    dram_utilization=agentic.dram_utilization,
                    duration=agentic.duration,
                )

    @model_validator(mode="after")
    def _entry_rules(self) -> MasterEntry:
        if self.disagg and not self.multinode:
            raise RuleViolation(
                "disagg: true needs multinode: true", at=("disagg",), hint="set multinode: true"
            )
        if self.kv_p2p_transfer and not self.multinode:
            raise RuleViolation("kv-p2p-transfer is multinode only", at=("kv-p2p-transfer",))
        # an agentic entry on a runner that is no `cluster:` label is read: InferenceX's
        # validator refuses it only since AgentX v1.0 (#1970, 2026-07-02); `check` says IB155
        for point in self.search_spaces():
            self._check_point(point)
        return self

    def _check_point(self, point: SearchSpacePoint) -> None:
        space, path = point.space, point.path
        multinode = isinstance(space, MultiNodeSearchSpace)
        if multinode != self.multinode:
            raise RuleViolation(
                "a multinode search-space entry (prefill/decode) in a multinode: false config"
                if multinode
                else "a single-node search-space entry in a multinode: true config",
                at=path,
                hint="match the entry's shape to `multinode`",
            )
        if self.router is not None and space.router is not None:
            raise RuleViolation(
                "router is set both at the top and on this entry",
                at=(*path, "router"),
                hint="keep one of the two",
            )
        if not isinstance(space, MultiNodeSearchSpace):
            return
        if self.kv_p2p_transfer and space.kv_p2p_transfer:
            raise RuleViolation(
                "kv-p2p-transfer is set both at the top and on this entry",
                at=(*path, "kv-p2p-transfer"),
                hint="keep one of the two",
            )
        # `disagg: true` without kv-p2p-transfer is read: InferenceX's generator required it
        # only from upstream #2096 (2026-07-13) on; `check` reports it (IB152)

    def router_for(self, space: AnySearchSpace) -> MasterRouter | None:
        return self.router or space.router

    def kv_p2p_for(self, space: MultiNodeSearchSpace) -> str | None:
        return self.kv_p2p_transfer or space.kv_p2p_transfer


class EntryError(ConfigError):
    """A master entry that failed validation (or a second definition of its key), with the
    config key it was written under (None for a key that is no name), so that a command
    asked for that key names this error rather than a missing key."""

    def __init__(self, error: ConfigError, config_key: str | None) -> None:
        super().__init__(error.message, location=error.location, hint=error.hint)
        self.config_key = config_key


@dataclass(frozen=True)
class MasterConfig:
    """A master entry with its config key and where it was read from."""

    key: str
    entry: MasterEntry
    doc: PositionedDoc

    @property
    def file(self) -> Path:
        return self.doc.file

    def locate(self, path: KeyPath | str = ()) -> Location:
        """The position of `path` inside this entry (e.g. `("scenarios", "fixed-seq-len", 0)`)."""
        sub = path if isinstance(path, tuple) else parse_path(path)
        return self.doc.locate((self.key, *sub))

    @property
    def line(self) -> int | None:
        return self.locate().line


def load_master_file(path: Path, errors: list[EntryError] | None = None) -> list[MasterConfig]:
    """All entries of one master file, in file order. With `errors`, an entry that fails
    validation is appended there and left out, and the rest is still read (`check` makes
    each a finding); without, the first one is raised. A file that is not a map of entries
    is always raised."""
    doc = load_yaml(path)
    if doc.data is None:  # InferenceX's generator cannot read one either
        raise ConfigError(
            "the master file is empty (no config keys)",
            location=doc.locate(),
            hint="write `<config-key>:` entries, or delete the file",
        )
    if not isinstance(doc.data, dict):
        raise ConfigError(
            "a master file must be a map of config-key -> entry",
            location=doc.locate(),
            hint="write `<config-key>:` lines, each with image, model, runner, ... under it",
        )
    doc = current_format(doc)
    configs: list[MasterConfig] = []
    for key in doc.data:
        try:
            configs.append(_load_entry(doc, key))
        except ConfigError as exc:
            if errors is None:
                raise
            errors.append(EntryError(exc, key if isinstance(key, str) else None))
    return configs


def _load_entry(doc: PositionedDoc, key: Any) -> MasterConfig:
    if not isinstance(key, str) or not key:
        raise ConfigError(f"config key {key!r} is not a name", location=doc.locate())
    if any(c in key for c in "*?[]"):
        raise ConfigError(
            f"config key {key!r} contains a glob character",
            location=doc.locate((key,)),
            hint="glob characters are reserved for changelog config-keys",
        )
    if not isinstance(doc.data[key], dict):
        raise ConfigError(
            "a master entry must be a mapping",
            location=doc.locate((key,)),
            hint="indent image, model, runner, ... under the config key",
        )
    entry = validate_doc(doc, MasterEntry, path=(key,))
    return MasterConfig(key=key, entry=entry, doc=doc)


# InferenceX's master format before `scenarios:` (upstream #1201, 2026-05-01): the entry's
# `seq-len-configs:` list is what `scenarios: {fixed-seq-len: [...]}` became, item for item.
_SEQ_LEN_CONFIGS = "seq-len-configs"


def current_format(doc: PositionedDoc) -> PositionedDoc:
    """`doc` with every entry in the older format read as the current one (the key where
    `scenarios` stands; positions kept where the file wrote them)."""
    if not isinstance(doc.data, dict) or not any(
        isinstance(v, dict) and _SEQ_LEN_CONFIGS in v and "scenarios" not in v
        for v in doc.data.values()
    ):
        return doc
    data = dict(doc.data)
    for key, value in doc.data.items():
        if isinstance(value, dict) and _SEQ_LEN_CONFIGS in value and "scenarios" not in value:
            entry = {
                ("scenarios" if k == _SEQ_LEN_CONFIGS else k): (
                    {"fixed-seq-len": v} if k == _SEQ_LEN_CONFIGS else v
                )
                for k, v in value.items()
            }
            data[key] = entry
            doc = doc.moved(data, (key, _SEQ_LEN_CONFIGS), (key, "scenarios", "fixed-seq-len"))
    return doc


_TOP_LEVEL_KEY = re.compile(
    r"""^(?:"([^"]+)"|'([^']+)'|([^\s#'"\-][^:#]*?))[ \t]*:(?:[ \t]|$)""", re.M
)


def read_master_keys(path: Path) -> list[str]:
    """The config keys of a master file without reading its entries: the keys written at
    column 0 (a master file is one block mapping). For archived files, whose entries may
    follow an older schema and are never swept: parsing them whole costs more than a check."""
    text = read_text_file(path, MAX_CONFIG_BYTES, error=ConfigError, errors="replace")
    return [next(g for g in m.groups() if g is not None) for m in _TOP_LEVEL_KEY.finditer(text)]


def load_masters(
    paths: list[Path], errors: list[EntryError] | None = None
) -> dict[str, MasterConfig]:
    """Entries of several master files; a key defined in two files is a ConfigError (with
    `errors`, appended there and the second definition left out, as a bad entry is)."""
    merged: dict[str, MasterConfig] = {}
    for path in paths:
        for config in load_master_file(path, errors):
            first = merged.get(config.key)
            if first is not None:
                duplicate = ConfigError(
                    f"config key {config.key!r} is also defined in {first.file}"
                    f" (line {first.line})",
                    location=config.locate(),
                    hint="config keys must be unique across all master files",
                )
                if errors is None:
                    raise duplicate
                errors.append(EntryError(duplicate, config.key))
                continue
            merged[config.key] = config
    return merged
