"""The base of every config model (core's FrozenModel), and the error a cross-field rule
raises."""

from __future__ import annotations

from inferbench.config.yamlio import KeyPath
from inferbench.core.model import FrozenModel

__all__ = ["FrozenModel", "RuleViolation"]


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
