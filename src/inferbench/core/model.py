"""The bases of the immutable models every stage hands on: FrozenModel for inferbench's
own objects and files, LenientModel for files other tools (or older versions) write."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenModel(BaseModel):
    """Unknown keys rejected, immutable after validation. Input keys are the file's own
    spelling (the alias, e.g. `model-prefix`) only: `model_prefix` in a YAML file is an
    unknown key, as it is for InferenceX."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class LenientModel(BaseModel):
    """Immutable after validation; keys it does not name are ignored: a record read from a
    file another tool or an older version wrote, of which only some keys matter here."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
