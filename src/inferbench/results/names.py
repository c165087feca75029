"""Identity read from the names InferenceX and srt-slurm give their result files.

InferenceX single-node results are named
`<exp-name>_<precision>_<framework>[_aiperf]_tp<T>[-pp<P>-dcp<D>-pcp<C>][-ep<E>-dpa<bool>]
[_disagg-<bool>][_spec-<mode>]_conc<C>_<runner>.json` (older runs:
`<exp>_<isl>k<osl>k_<precision>_<framework>_tp<T>_conc<C>_<runner>.json`), with
`exp-name` = `<model-prefix>_<isl-k><osl-k>`. srt-slurm writes
`sa-bench_isl_<I>_osl_<O>/results_concurrency_<C>_gpus_<T>[_ctx_<P>_gen_<D>].json`.
The values come back as InferenceX job field names (strings), ready to merge with the
identity a user supplies.
"""

from __future__ import annotations

import re
from pathlib import Path

_INFERENCEX = re.compile(
    r"^(?P<exp>.+?)_(?P<precision>fp4|fp6|fp8|fp16|bf16|int4|int8|mxfp4|nvfp4|w4a8|w8a8|fp8fp4)"
    r"_(?P<framework>[a-z0-9][a-z0-9.-]*?)(?:_aiperf)?"
    r"_tp(?P<tp>\d+)(?:-pp(?P<pp>\d+)-dcp(?P<dcp>\d+)-pcp(?P<pcp>\d+))?"
    r"(?:-ep(?P<ep>\d+)-dpa(?P<dpa>true|false))?"
    r"(?:_disagg-(?P<disagg>true|false))?(?:_spec-(?P<spec>[a-z_]+))?"
    r"_conc(?P<conc>\d+)_(?P<runner>[A-Za-z0-9_.:-]+)$"
)
_EXP_LENGTHS = re.compile(r"^(?P<prefix>.+?)_(?P<isl>\d+)k(?P<osl>\d+)k(?:_.*)?$")
_SRT_FILE = re.compile(
    r"^results_concurrency_(?P<conc>\d+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?$"
)
_SRT_DIR = re.compile(r"^sa-bench_isl_(?P<isl>\d+)_osl_(?P<osl>\d+)$")


def identity_from_name(path: Path) -> dict[str, str]:
    """Whatever identity the file's name (and its folder's) encodes; {} when none."""
    stem = path.stem
    m = _INFERENCEX.match(stem)
    if m:
        return _from_inferencex(m)
    m = _SRT_FILE.match(stem)
    if m:
        out = {"conc": m["conc"], "total-gpus": m["gpus"]}
        if m["ctx"] is not None:
            out.update({"disagg": "true", "prefill.gpus": m["ctx"], "decode.gpus": m["gen"]})
        d = _SRT_DIR.match(path.parent.name)
        if d:
            out.update({"isl": d["isl"], "osl": d["osl"]})
        return out
    return {}


def _from_inferencex(m: re.Match[str]) -> dict[str, str]:
    out = {
        "precision": m["precision"],
        "framework": m["framework"],
        "tp": m["tp"],
        "conc": m["conc"],
        "runner": m["runner"],
        "exp-name": m["exp"],
    }
    for key, group in (("pp", "pp"), ("pcp-size", "pcp"), ("dcp-size", "dcp"), ("ep", "ep")):
        if m[group] is not None:
            out[key] = m[group]
    if m["dpa"] is not None:
        out["dp-attn"] = m["dpa"]
    if m["disagg"] is not None:
        out["disagg"] = m["disagg"]
    if m["spec"] is not None:
        out["spec-decoding"] = m["spec"]
    lengths = _EXP_LENGTHS.match(m["exp"])
    if lengths:
        out["model-prefix"] = lengths["prefix"]
        out["isl"] = str(int(lengths["isl"]) * 1024)
        out["osl"] = str(int(lengths["osl"]) * 1024)
    return out
