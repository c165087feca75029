"""srtctl's own loader as the judge of recipes, when srtctl can be imported.

`inferbench check --srtctl` asks srtctl itself (`SrtConfig.Schema().load`, what
`srtctl apply` and `dry-run` run) instead of inferbench's copy of its schema
(`srtctl_schema.py`). That also catches the cross-field checks srtctl runs after loading
(het jobs, trtllm_serve and vllm frontends, profiling), at the cost of importing srtctl and
its marshmallow schema. Off by default: the copy agrees with srtctl on every recipe of the
real trees (tests/upstream) and is several times faster.
"""

from __future__ import annotations

import importlib.util
import logging
from typing import Any

from inferbench.config.srtctl_schema import SchemaProblem, schema_problems
from inferbench.core.errors import InputError

_state = {"srtctl": False}


def srtctl_importable() -> bool:
    return importlib.util.find_spec("srtctl") is not None


def use_srtctl(enabled: bool) -> None:
    """Judge recipes with the installed srtctl (True) or inferbench's copy of its schema."""
    if enabled and not srtctl_importable():
        raise InputError(
            "--srtctl: srtctl cannot be imported by this Python",
            hint="install srt-slurm into this environment (pip install <srt-slurm checkout>), "
            "or drop --srtctl to use inferbench's copy of srtctl's schema",
        )
    _state["srtctl"] = enabled


def using_srtctl() -> bool:
    """Whether the installed srtctl judges recipes (`check --srtctl`)."""
    return _state["srtctl"]


def recipe_problems(data: Any) -> list[SchemaProblem]:
    """Why srtctl rejects `data` (one merged recipe variant); empty when it accepts it."""
    if not _state["srtctl"]:
        return schema_problems(data)
    return _srtctl_problems(data)


def _srtctl_problems(data: Any) -> list[SchemaProblem]:
    from marshmallow import ValidationError  # type: ignore[import-not-found]
    from srtctl.core.schema import SrtConfig  # type: ignore[import-not-found]

    logging.getLogger("srtctl").setLevel(logging.ERROR)  # its load-time notices are not ours
    try:
        SrtConfig.Schema().load(data)
    except ValidationError as exc:
        return list(_flatten(exc.messages, ()))
    except (ValueError, TypeError, KeyError) as exc:  # __post_init__ checks raise these
        return [SchemaProblem((), str(exc))]
    return []


def _flatten(messages: Any, path: tuple[str | int, ...]) -> Any:
    """marshmallow's nested error dict -> (key path, message) pairs, as srtctl words them."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            if key in ("_schema", "value", "key"):  # the field itself, a map value or key
                yield from _flatten(value, path)
            else:
                yield from _flatten(value, (*path, key))
    elif isinstance(messages, list):
        for item in messages:
            if isinstance(item, str):
                yield SchemaProblem(path, item)
            else:
                yield from _flatten(item, path)
    else:
        yield SchemaProblem(path, str(messages))
