"""The base of every config model, and the error a cross-field rule raises."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from inferbench.config.yamlio import KeyPath


class FrozenModel(BaseModel):
    """Unknown keys rejected, immutable after validation. Input keys are the file's own
    spelling (the alias, e.g. `model-prefix`) only: `model_prefix` in a YAML file is an
    unknown key, as it is for InferenceX."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RuleViolation(ValueError):
    """A validation rule broken below the model that raised it.

    `at` is the key path relative to the model (e.g. `("conc-start",)`) so the error
    can point at the exact key; `hint` says how to fix it.
    """

    def __init__(self, message: str, *, at: KeyPath = (), hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.at = at
        self.hint = hint
