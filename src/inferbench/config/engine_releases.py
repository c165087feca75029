"""Which flags an engine release accepts: tables extracted from each release's own source.

`catalog/engine_flags/<engine>-<release>.yaml` lists the flag names of one release (vLLM's
`vllm serve`, SGLang's `sglang.launch_server`), each with the repository, tag and files it
was read from by `tools/extract_engine_flags.py`. A job's release is read from its image tag
(`vllm/vllm-openai:v0.25.1`, `lmsysorg/sglang:v0.5.16-cu130`,
`nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc22.post1`); an image of another name (a Dynamo
runtime), a nightly, or a release with no table of its own is held to the union of every
known release of the engine (so a table never condemns a flag some known release accepts).

A written flag is accepted the way the engine's argument parser accepts it. vLLM and SGLang
(argparse): `_` or `-` between words, a unique prefix of a flag (argparse's abbreviations),
vLLM's `--no-<flag>` (BooleanOptionalAction) and its `--<flag>.<key>` for a field of a
JSON-valued flag. TRT-LLM: exactly as declared, no prefixes and no `-` for `_`: the YAML keys
of `--extra_llm_api_options` / `--config` (srtctl's `trtllm_config`) are pydantic field
names of `TorchLlmArgs` (a model that forbids extra keys), and `trtllm-serve`'s click long
options take no abbreviations. Its tables therefore keep each name verbatim.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources

from inferbench.config.images import ImageRefError, normalize_image
from inferbench.config.yamlio import load_plain
from inferbench.engines.registry import find_engine
from inferbench.engines.spec import EngineSpec
from inferbench.engines.values import normalize_flag

# 0.25.1, v0.5.8.post1, 1.3.0rc14, 1.3.0rc22.post1, then an optional -/_ suffix (-cu130)
_VERSION = re.compile(r"^v?(\d+\.\d+\.\d+(?:rc\d+)?(?:\.post\d+)?)(?:[-_].*)?$")


@dataclass(frozen=True)
class FlagTable:
    engine: str
    release: str
    repo: str
    ref: str
    flags: frozenset[str]


@functools.cache
def flag_tables() -> Mapping[str, Mapping[str, FlagTable]]:
    """engine -> release -> table, from the packaged catalog."""
    out: dict[str, dict[str, FlagTable]] = {}
    # not files("inferbench.catalog"): importing that package loads the hardware catalog's
    # reader (ruamel.yaml), which `check` does not otherwise need
    folder = resources.files("inferbench") / "catalog" / "engine_flags"
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml"):
            continue
        data = load_plain(entry.read_text(encoding="utf-8"))
        source = data["source"]
        table = FlagTable(
            engine=data["engine"],
            release=str(data["release"]),
            repo=source["repo"],
            ref=source["ref"],
            flags=frozenset(_table_name(data["engine"], str(f)) for f in data["flags"]),
        )
        out.setdefault(table.engine, {})[table.release] = table
    return out


def _table_name(engine: str, flag: str) -> str:
    """A table's flag as it is compared: verbatim for an exact engine, else normalized."""
    return flag.strip().lstrip("-") if _spec(engine).exact_flags else normalize_flag(flag)


def _spec(engine: str) -> EngineSpec:
    spec = find_engine(engine)
    if spec is None:
        raise ValueError(f"no engine {engine!r}")
    return spec


def written_name(engine: str, written: str) -> str:
    """A written flag as it is compared: `--max_batch_size` -> `max_batch_size` for TRT-LLM
    (case and `_` kept), `--Max_Model_Len` -> `max-model-len` for the argparse engines."""
    return _table_name(engine, written)


@functools.cache
def _all_flags(engine: str) -> frozenset[str]:
    """Every flag any known release of `engine` accepts."""
    return frozenset().union(*(t.flags for t in flag_tables().get(engine, {}).values()))


def image_release(engine: str, image: str) -> str | None:
    """The engine release an image of the engine's own repository names in its tag."""
    try:
        ref = normalize_image(image)
    except ImageRefError:
        return None
    repository = ref.repository.removeprefix("library/")
    spec = find_engine(engine)
    if spec is None or repository not in spec.release_images or ref.tag is None:
        return None
    match = _VERSION.match(ref.tag)
    return match.group(1) if match else None


@dataclass(frozen=True)
class FlagVerdict:
    """What the engine's parser would make of one written flag."""

    known: bool
    release: str | None  # the release it was judged against (None: every known one)
    closest: str | None = None  # the nearest known flag, for a fix hint


@functools.lru_cache(maxsize=16384)
def judge_flag(engine: str, written: str, image: str = "") -> FlagVerdict | None:
    """The verdict on flag `written` for `engine` in `image`; None when no table says.
    (Cached: a real tree asks about the same few hundred flags ten thousand times.)"""
    tables = flag_tables().get(engine)
    if not tables:
        return None
    release = image_release(engine, image)
    table = tables.get(release) if release is not None else None
    return judge_against(engine, written, table, _all_flags(engine))


def judge_against(
    engine: str, written: str, table: FlagTable | None, union: frozenset[str]
) -> FlagVerdict:
    """The verdict on `written` against `table`, or against `union` (every known release)
    when the image's release has no table of its own."""
    flags = table.flags if table is not None else union
    name = written_name(engine, written)
    if _accepted(engine, name, flags):
        return FlagVerdict(True, table.release if table else None)
    close = difflib.get_close_matches(name, sorted(flags), n=1, cutoff=0.6)
    return FlagVerdict(False, table.release if table else None, close[0] if close else None)


def _accepted(engine: str, name: str, flags: frozenset[str]) -> bool:
    if name in flags:
        return True
    spec = _spec(engine)
    if spec.exact_flags:  # pydantic field names and click options: no other spelling
        return False
    if spec.negated_flags and name.startswith("no-") and name[3:] in flags:
        return True
    if spec.dotted_flags and "." in name and name.split(".", 1)[0] in flags:
        return True
    return sum(1 for flag in flags if flag.startswith(name)) == 1
