"""The one base of the immutable models every stage hands on."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """Unknown keys rejected, immutable after validation. Input keys are the file's own
    spelling (the alias, e.g. `model-prefix`) only: `model_prefix` in a YAML file is an
    unknown key, as it is for InferenceX."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)
