"""Where a tree pins synthetic speculative-decoding acceptance: IB310's subjects.

InferenceX standardises speculative decoding on golden acceptance lengths (AL,
`config.golden_al`); each engine takes the AL in its own spelling (the golden folder's
README): vLLM `synthetic_acceptance_length` in the speculative config, SGLang
`SGLANG_SIMULATE_ACC_LEN`, TensorRT-LLM `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` (accepted
*draft* tokens: AL minus 1), ATOM `--spec-decode-acceptance-length` (or the rate
`--spec-decode-acceptance-rate` = (AL - 1) / draft length). A multi-node master entry asks
InferenceX's launcher to inject it (`SYNTHETIC_ACCEPTANCE=true` and
`SYNTHETIC_ACCEPTANCE_LENGTH=<AL>`, runners/inject_synthetic_acceptance.py), a recipe sets it
in its worker environment or engine flags, a single-node script exports or passes it.

How each setting's golden AL is found (InferenceX's conventions, from its injector, scripts and
changelog): the model is the master entry's `model-prefix` (a script's: its file name up to
the first `_`); the draft length is the decode (or aggregated) worker's, as the engine reads
it (vLLM `num_speculative_tokens`, SGLang `speculative-num-steps`, TRT-LLM `max_draft_len`,
ATOM `--num-speculative-tokens`), or the entry's `NUM_SPEC_TOKENS`; the thinking mode is
`thinking_on` (AgentX measures thinking, and InferenceX's injector defaults to it) unless the
run turns thinking off (`THINKING_MODE=thinking_off`, chat-template kwargs such as
`"enable_thinking": false`, `SGLANG_DEFAULT_THINKING=0`).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from inferbench.checks.subjects import DeploymentSubject
from inferbench.config.golden_al import GoldenSet, ThinkingMode
from inferbench.config.recipe import Recipe, locate
from inferbench.config.settings import AdditionalSettings
from inferbench.core.errors import Location


@dataclass(frozen=True)
class Knob:
    """One engine's spelling of the acceptance target."""

    name: str
    engine: str  # the engine that reads it ("master": InferenceX's launcher)
    offset: float = 0.0  # written = AL + offset (TRT-LLM counts draft tokens only: -1)
    per_draft: bool = False  # written = (AL - 1) / draft length (ATOM's rate)

    def written_for(self, al: float, draft_length: int) -> float:
        if self.per_draft:
            return (al - 1) / draft_length
        return al + self.offset

    def matches(self, value: float, al: float, draft_length: int) -> bool:
        """`value` spells `al` (golden ALs have two decimals; a rate is rounded as written)."""
        return abs(value - self.written_for(al, draft_length)) < 0.005 + 1e-9

    def show(self, al: float, draft_length: int) -> str:
        value = self.written_for(al, draft_length)
        return f"{value:.4f}".rstrip("0").rstrip(".") if self.per_draft else f"{value:.2f}"


VLLM = Knob("synthetic_acceptance_length", "vllm")
SGLANG = Knob("SGLANG_SIMULATE_ACC_LEN", "sglang")
TRTLLM = Knob("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", "trtllm", offset=-1.0)
ATOM = Knob("--spec-decode-acceptance-length", "atom")
ATOM_RATE = Knob("--spec-decode-acceptance-rate", "atom", per_draft=True)
MASTER = Knob("SYNTHETIC_ACCEPTANCE_LENGTH", "master")
ENV_KNOBS = (SGLANG, TRTLLM)
ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM", "atom": "ATOM"}

_THINKING_OFF = re.compile(
    r"""["']?(?:enable_thinking|thinking)["']?\s*:\s*(?:false|False)\b"""
    r"""|["']?thinking_mode["']?\s*:\s*["']?disabled"""
    r"""|SGLANG_(?:DEFAULT|ENABLE)_THINKING\W{1,4}0\b"""
    r"""|THINKING_MODE\W{1,4}thinking_off"""
)


def thinking_of(text: str) -> ThinkingMode:
    return "thinking_off" if _THINKING_OFF.search(text) else "thinking_on"


def number(text: str) -> float | None:
    try:
        return float(text.strip().strip("'\""))
    except ValueError:
        return None


WrittenAs = Literal["master", "env", "json", "shell"]  # master setting, recipe env or flag, script


@dataclass(frozen=True)
class AcceptanceSetting:
    """One place that sets the acceptance target, with what its golden AL depends on."""

    knob: Knob
    written: str  # the value as written
    location: Location
    owner: str  # what runs with it, for the message ("<config key> with <CONFIG_FILE>", ...)
    model_prefix: str | None
    draft_length: int | None
    thinking: ThinkingMode
    speculative: str  # the speculative setup as written (method, draft model, sampling)
    golden: GoldenSet
    engine: str | None = None  # the engine that reads the setting, where known
    via: str | None = None  # the script variable that carries the value
    written_as: WrittenAs = "shell"

    def fix(self, value: str) -> str:
        """The line that sets `value` where this setting is written."""
        name = self.knob.name
        if self.via is not None:
            return f"{self.via}={value}"
        if self.written_as == "master":
            return f'- "{name}={value}"'
        if self.written_as == "env":
            return f'{name}: "{value}"'
        if self.knob is VLLM:
            return f'"{name}": {value}'
        if name.startswith("--"):
            return f"{name} {value}"
        return f"export {name}={value}"

    @property
    def value(self) -> float | None:
        return number(self.written)


def collect_acceptance(
    deployments: Iterable[DeploymentSubject], golden: GoldenSet
) -> Iterator[AcceptanceSetting]:
    """Master entries' injected targets, and the targets their recipes set themselves."""
    by_recipe: dict[int, tuple[Recipe, list[DeploymentSubject]]] = {}
    for d in deployments:
        yield from _from_master(d, golden)
        by_recipe.setdefault(id(d.recipe), (d.recipe, []))[1].append(d)
    for recipe, users in by_recipe.values():
        prefixes: dict[str, list[str]] = defaultdict(list)
        for d in users:
            prefixes[d.config.entry.model_prefix].append(d.config.key)
        for prefix, keys in prefixes.items():
            yield from _from_recipe(recipe, prefix, sorted(set(keys)), golden)


def _setting_index(settings: AdditionalSettings, key: str) -> int | None:
    for index, item in enumerate(settings.raw):
        if item.partition("=")[0].strip() == key:
            return index
    return None


def _from_master(d: DeploymentSubject, golden: GoldenSet) -> Iterator[AcceptanceSetting]:
    for block in ("prefill", "decode"):
        settings: AdditionalSettings = getattr(d.space, block).additional_settings
        if (settings.synthetic_acceptance or "").strip().lower() != "true":
            continue
        index = _setting_index(settings, MASTER.name)
        if index is None:
            index = _setting_index(settings, "SYNTHETIC_ACCEPTANCE")
        where = d.locate(block, "additional-settings", index or 0)
        drafts = number(settings.get("NUM_SPEC_TOKENS") or "")
        draft_length = int(drafts) if drafts else draft_length_of(d.recipe)
        mode = settings.get("THINKING_MODE") or "thinking_on"
        yield AcceptanceSetting(
            knob=MASTER,
            written=settings.get(MASTER.name) or "",
            location=where,
            owner=f"{d.config.key} with {d.reference.ref}",
            model_prefix=d.config.entry.model_prefix,
            draft_length=draft_length,
            thinking="thinking_off" if mode.strip() == "thinking_off" else "thinking_on",
            speculative=_speculative_text(d.recipe),
            golden=golden,
            engine=d.config.entry.framework,
            written_as="master",
        )
        return  # InferenceX's launcher exports one target per job


def _from_recipe(
    recipe: Recipe, prefix: str, keys: list[str], golden: GoldenSet
) -> Iterator[AcceptanceSetting]:
    backend = recipe.backend
    text = _speculative_text(recipe)
    common: dict[str, Any] = {
        "owner": f"recipe of {', '.join(keys)}",
        "model_prefix": prefix,
        "draft_length": draft_length_of(recipe),
        "thinking": thinking_of(text),
        "speculative": text,
        "golden": golden,
        "engine": backend.type,
    }
    for block in ("prefill_environment", "decode_environment", "aggregated_environment"):
        env: Mapping[str, Any] = getattr(backend, block)
        for knob in ENV_KNOBS:
            if knob.name in env:
                where = locate(recipe, ("backend", block, knob.name))
                yield AcceptanceSetting(
                    knob, str(env[knob.name]), where, **common, written_as="env"
                )
    for mode in recipe.modes:
        hit = recipe.flags(mode).find("speculative-config")
        config = _json_map(hit.value) if hit is not None else None
        if hit is not None and config is not None and VLLM.name in config:
            where = locate(recipe, (*recipe.flags_path(mode), hit.written))
            where = Location(where.file, where.line, where.column, f"{where.key}.{VLLM.name}")
            yield AcceptanceSetting(
                VLLM, str(config[VLLM.name]), where, **common, written_as="json"
            )


def _json_map(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            loaded = json.loads(value)
        except ValueError:
            return None
        return loaded if isinstance(loaded, dict) else None
    return None


def _whole(value: Any) -> int | None:
    found = number(str(value)) if value is not None else None
    return int(found) if found is not None and found == int(found) and found > 0 else None


def draft_length_of(recipe: Recipe) -> int | None:
    """The draft length of the worker that decodes (a prefill worker only emits the first
    token, where acceptance plays no part), as its engine reads it."""
    for mode in ("aggregated", "decode", "prefill"):
        if mode not in recipe.modes:
            continue
        flags = recipe.flags(mode)
        steps = _whole(flags.get("speculative-num-steps"))
        if steps is not None:
            return steps
        config = _json_map(flags.get("speculative-config")) or _json_map(
            flags.get("speculative_config")
        )
        if config is not None:
            for key in ("num_speculative_tokens", "max_draft_len", "num_nextn_predict_layers"):
                found = _whole(config.get(key))
                if found is not None:
                    return found
    return None


def _speculative_text(recipe: Recipe) -> str:
    """The decode worker's flags and every worker environment, as one text: what names the
    method, the draft model and its sampling, and whether thinking is off."""
    backend = recipe.backend
    parts: list[Any] = [
        backend.prefill_environment,
        backend.decode_environment,
        backend.aggregated_environment,
    ]
    parts += [dict(recipe.flags(mode).flags) for mode in recipe.modes if mode != "prefill"]
    return json.dumps(parts, default=str)
