"""Options several commands share, declared once as a frozen dataclass.

Typer reads a command's options from its signature, so plain Python cannot share a parameter
list between commands. An options model is a frozen dataclass whose fields are annotated
`Annotated[type, typer.Option(...)]` with a default; `with_options` gives a command every field
of each model it takes as a parameter, at that parameter's place, and hands the command the
built model instead of the loose values:

    @dataclass(frozen=True)
    class Shared:
        name: Annotated[str | None, typer.Option("--name", help="...")] = None

    @app.command("hello")
    @with_options
    def hello(shared: Shared, loud: bool = typer.Option(False, "--loud")) -> None: ...
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_type_hints

R = TypeVar("R")


def _is_model(annotation: object) -> bool:
    return isinstance(annotation, type) and dataclasses.is_dataclass(annotation)


def option_parameters(model: type[Any]) -> list[inspect.Parameter]:
    """The fields of an options model as keyword-only parameters, for Typer to read."""
    hints = get_type_hints(model, include_extras=True)
    params = []
    for field in dataclasses.fields(model):
        if field.default is not dataclasses.MISSING:
            default = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            raise TypeError(f"{model.__name__}.{field.name} needs a default")
        params.append(
            inspect.Parameter(
                field.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=hints[field.name],
            )
        )
    return params


def with_options(command: Callable[..., R]) -> Callable[..., R]:
    """`command` with each parameter typed as an options model spread into that model's options.

    Typer sees the spread signature; a call builds each model from its options and passes it
    under the parameter's name. Names that would clash raise TypeError when the command is made.
    """
    signature = inspect.signature(command, eval_str=True)
    params: list[inspect.Parameter] = []
    models: dict[str, tuple[type[Any], tuple[str, ...]]] = {}
    for param in signature.parameters.values():
        if _is_model(param.annotation):
            fields = option_parameters(param.annotation)
            models[param.name] = (param.annotation, tuple(f.name for f in fields))
            params.extend(fields)
        else:
            params.append(param.replace(kind=inspect.Parameter.KEYWORD_ONLY))
    names = [p.name for p in params]
    clashes = sorted({n for n in names if names.count(n) > 1})
    if clashes:
        raise TypeError(f"{command.__name__}: options declared twice: {', '.join(clashes)}")

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> R:
        for name, (model, fields) in models.items():
            kwargs[name] = model(**{f: kwargs.pop(f) for f in fields})
        return command(**kwargs)

    spread = signature.replace(parameters=params)
    wrapper.__signature__ = spread  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    wrapper.__annotations__["return"] = signature.return_annotation
    return wrapper
