"""`Engine`: the engine a plan serves with (`--engine`), one of the registry's keys.

A string, so plans and run files keep writing `"engine": "vllm"`; made only through the
registry, so an engine a package registers is a choice like the built-in ones (no enum to
keep in step). One instance per key: `plan.engine is Engine.SIM` holds.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from inferbench.engines.registry import engine_keys


class Engine(str):
    """A registered engine's key; `Engine("nope")` is a ValueError naming the choices."""

    SIM: ClassVar[Engine]  # the simulator: the one engine every stage treats apart
    _interned: ClassVar[dict[str, Engine]] = {}

    def __new__(cls, key: object) -> Engine:
        text = str(key)
        if text not in engine_keys():
            # click's words for a choice, as every other option says it
            choices = ", ".join(repr(k) for k in engine_keys())
            raise ValueError(f"{text!r} is not one of {choices} (the registered engines)")
        found = cls._interned.get(text)
        if found is None:
            found = cls._interned[text] = super().__new__(cls, text)
        return found

    def __repr__(self) -> str:
        return f"Engine({str(self)!r})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_after_validator_function(
            cls, core_schema.str_schema(), serialization=core_schema.to_string_ser_schema()
        )


Engine.SIM = Engine("sim")
