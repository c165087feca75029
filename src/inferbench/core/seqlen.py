"""Sequence-length names (`1k1k`, `8k1k`, ...): the `exp-name` suffix and the `--seq-lens` filter.

InferenceX names (isl, osl) pairs through a fixed table (`1k1k` = 1024/1024, `8k1k` = 8192/1024;
older versions also had `1k8k`) and writes any other pair as `<isl>_<osl>`. inferbench keeps that
output for the table's pairs and extends the table's rule to every pair of whole multiples of
1024 (`1024/8192` -> `1k8k`, as InferenceX itself named it while `1k8k` was in its table); other
pairs stay `<isl>_<osl>` (so 1000/1000 is `1000_1000`, as InferenceX writes it).
`parse_seq_len` accepts both spellings.

People also write lengths loosely in file names (`1k1k` for a 1000/1000 srt-slurm recipe):
`shorthand_matches` is the one rule for whether such a name fits the lengths; it never names.
"""

from __future__ import annotations

import re

_KILO = 1024
_K_NAME = re.compile(r"^(\d+)k(\d+)k$")
_RAW_NAME = re.compile(r"^(\d+)_(\d+)$")


def seq_len_name(isl: int, osl: int) -> str:
    """`8k1k` for 8192/1024; `<isl>_<osl>` for lengths that are not whole multiples of 1024."""
    if isl > 0 and osl > 0 and isl % _KILO == 0 and osl % _KILO == 0:
        return f"{isl // _KILO}k{osl // _KILO}k"
    return f"{isl}_{osl}"


# InferenceX's own table (`seq_len_stoi`) since 2026-03-27 (it dropped `1k8k` then): the names
# its generator writes into exp-names and bucket keys; any other pair is `<isl>_<osl>`.
INFERENCEX_SEQ_LENS = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}


def inferencex_seq_len_name(isl: int, osl: int) -> str:
    """The name InferenceX's generator gives (isl, osl) in an exp-name: `8k1k`, `1024_8192`."""
    return INFERENCEX_SEQ_LENS.get((isl, osl), f"{isl}_{osl}")


def parse_seq_len(name: str) -> tuple[int, int]:
    """`8k1k` -> (8192, 1024); `1000_200` -> (1000, 200). Raises ValueError on anything else."""
    text = name.strip().lower()
    match = _K_NAME.match(text)
    if match:
        isl, osl = int(match.group(1)) * _KILO, int(match.group(2)) * _KILO
    else:
        match = _RAW_NAME.match(text)
        if not match:
            raise ValueError(f"{name!r} is not a sequence-length name like 1k1k, 8k1k or 1000_200")
        isl, osl = int(match.group(1)), int(match.group(2))
    if isl <= 0 or osl <= 0:
        raise ValueError(f"{name!r}: sequence lengths must be positive")
    return isl, osl


def shorthand_matches(isl_k: int, osl_k: int, isl: int, osl: int) -> bool:
    """Whether a file-name shorthand `<isl_k>k<osl_k>k` fits isl/osl, reading k as 1024 or
    1000 (srt-slurm names 1000/1000 recipes `1k1k`)."""
    return all(length in (k * _KILO, k * 1000) for k, length in ((isl_k, isl), (osl_k, osl)))
