"""What is wrong with one master entry that loaded, in the words every command uses.

InferenceX's generator reads these values, so loading keeps the entry; `check` reports each
as a finding (IB150, IB151, IB702), `sweep` leaves out an entry it cannot make a job of
(`tp: 0`), and `plan`/`run` refuse an entry whose values would reach a shell, an sbatch file
or a terminal. One function per cause, so that the four commands say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from inferbench.config.images import image_problem
from inferbench.config.master import MasterConfig, MultiNodeSearchSpace
from inferbench.core.errors import ConfigError, Location

TP_ZERO_HINT = "set tp to the engine's tensor-parallel width (1 or more)"
SETTING_HINT = 'write - "NAME=value" (NAME of letters, digits and _)'
IMAGE_HINT = "write the image as <registry/name>:<tag> or <name>@sha256:<digest>"


@dataclass(frozen=True)
class EntryProblem:
    """One wrong value of an entry: `check`'s rule id, its message, where, and the fix."""

    rule: str
    message: str
    location: Location
    hint: str

    def error(self) -> ConfigError:
        return ConfigError(f"{self.message} ({self.rule})", location=self.location, hint=self.hint)


def tp_zero(config: MasterConfig) -> Iterator[EntryProblem]:
    """IB150: a worker of tensor-parallel width 0 starts no engine (no job can hold it)."""
    for point in config.entry.search_spaces():
        space = point.space
        if isinstance(space, MultiNodeSearchSpace):
            for role, block in (("prefill", space.prefill), ("decode", space.decode)):
                if block.tp == 0:
                    yield EntryProblem(
                        "IB150",
                        f"{role} tp is 0: no engine starts with no GPU",
                        config.locate((*point.path, role, "tp")),
                        TP_ZERO_HINT,
                    )
        elif space.tp == 0:
            yield EntryProblem(
                "IB150",
                "tp is 0: no engine starts with no GPU",
                config.locate((*point.path, "tp")),
                TP_ZERO_HINT,
            )


def settings_not_key_value(config: MasterConfig) -> Iterator[EntryProblem]:
    """IB151: an additional setting the launcher would `export` as written."""
    for point in config.entry.search_spaces():
        space = point.space
        if not isinstance(space, MultiNodeSearchSpace):
            continue
        for role, block in (("prefill", space.prefill), ("decode", space.decode)):
            for index, item in block.additional_settings.malformed():
                yield EntryProblem(
                    "IB151",
                    f"additional setting {item!r} is not KEY=VALUE (the launcher would export"
                    " it as written)",
                    config.locate((*point.path, role, "additional-settings", index)),
                    SETTING_HINT,
                )


def image_invalid(config: MasterConfig) -> Iterator[EntryProblem]:
    """IB702: an image that is no reference (a line break splits a script or a printed
    plan; a bidi or zero-width character shows another image than the one pulled)."""
    problem = image_problem(config.entry.image, "image")
    if problem is not None:
        yield EntryProblem("IB702", problem, config.locate(("image",)), IMAGE_HINT)


def unsweepable(config: MasterConfig) -> list[EntryProblem]:
    """What leaves no job to sweep (a job has a tensor-parallel width of 1 or more)."""
    return list(tp_zero(config))


def unrunnable(config: MasterConfig) -> list[EntryProblem]:
    """What `plan` and `run` refuse: no job to make, or a value that would reach a shell,
    an sbatch file or a terminal as something else than what it says."""
    return [*tp_zero(config), *settings_not_key_value(config), *image_invalid(config)]
