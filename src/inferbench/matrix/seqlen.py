"""Sequence-length names (`1k1k`, `8k1k`, ...): the `exp-name` suffix and the `--seq-lens` filter.

InferenceX names (isl, osl) pairs through a fixed table (`1k1k` = 1024/1024, `8k1k` = 8192/1024;
older versions also had `1k8k`) and writes any other pair as `<isl>_<osl>`. inferbench keeps that
output for the table's pairs and extends the table's rule to every pair of whole multiples of
1024 (`1024/8192` -> `1k8k`, as InferenceX itself named it while `1k8k` was in its table); other
pairs stay `<isl>_<osl>`. `parse_seq_len` accepts both spellings.
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
