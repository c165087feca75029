"""The workload models share one definition of the token-id fields and their rule."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from inferbench.bench.workload import RandomWorkload, SharedPrefixWorkload


@pytest.mark.parametrize("make", [
    lambda **kw: RandomWorkload(isl=8, osl=8, **kw),
    lambda **kw: SharedPrefixWorkload(groups=2, prefix_len=4, isl=8, osl=8, **kw),
])  # fmt: skip
def test_id_range_is_checked_for_every_random_workload(make: object) -> None:
    with pytest.raises(ValidationError, match="id_high must be above id_low"):
        make(id_low=500, id_high=400)  # type: ignore[operator]
