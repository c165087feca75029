"""A command's options generated from the typed model it builds, declared once on that model.

Typer reads a command's options from its signature. `with_options` rewrites the signature: each
parameter annotated with an options model is spread into one option per field, at that
parameter's place, and the command is called with the built model instead of the loose values.

A library request model (pydantic) is the usual source: the field's name, type and default
become the option's; its `description` the help; its `ge`/`le` the range the option checks; an
`inferbench.core.flags.Flag` in its `Annotated` metadata the spellings, `--help` panel, hidden
flag and output check (without one the option is `--field-name`). Every field needs a
description. A value the model refuses is an InputError naming the option (exit 2):

    class GreetArgs(FrozenModel):                   # in the library (inferbench.core.model)
        name: Annotated[str, Flag("--name", "-n")] = Field(description="who to greet")
        times: int = Field(1, ge=1, le=10, description="how often")

    @app.command("greet")
    @with_options
    def greet(args: GreetArgs, loud: bool = typer.Option(False, "--loud", help="...")) -> None:
        ...                                         # args is a GreetArgs; --times 11: exit 2

Options only the CLI has (output format, progress bar, a `--config` loader) stay ordinary
parameters beside the model. `option_names(GreetArgs)` maps each field to the option that
sets it, for messages. A frozen dataclass whose fields are `Annotated[type,
typer.Option(...)]` with defaults is taken too (options several commands share that are not
a library model: `cli.filters.FilterOptions`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

import annotated_types
import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from inferbench.cli.outputs import output_file, output_folder
from inferbench.core.flags import Flag
from inferbench.core.hints import validated

R = TypeVar("R")
M = TypeVar("M", bound=BaseModel)


def _is_request_model(annotation: object) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _is_model(annotation: object) -> bool:
    return _is_request_model(annotation) or (
        isinstance(annotation, type) and dataclasses.is_dataclass(annotation)
    )


def _flag(field: FieldInfo) -> Flag:
    return next((m for m in field.metadata if isinstance(m, Flag)), Flag())


def option_names(model: type[BaseModel]) -> dict[str, str]:
    """Each field of a request model -> the option that sets it (its first spelling)."""
    return {
        name: (_flag(field).names or (f"--{name.replace('_', '-')}",))[0]
        for name, field in model.model_fields.items()
    }


def _cli_type(annotation: Any) -> Any:
    """The type Typer parses: a variadic tuple is a repeated option, a list to Typer."""
    if get_origin(annotation) is tuple:
        args = get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return list[args[0]]  # type: ignore[valid-type]
    return annotation


def _usage_errors(parse: Callable[[str], Any] | None) -> Callable[[str], Any] | None:
    """`parse` whose ValueError is click's usage error, in its own words (Typer would run it
    as a pydantic validator, which prefixes "Value error, ")."""
    if parse is None:
        return None

    def parsed(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    return parsed


def field_option(name: str, field: FieldInfo, option: str) -> Any:
    """The `typer.Option` of one request-model field (`option`: its name in messages)."""
    if not field.description:
        raise TypeError(f"{name}: give the field a description (it is the option's --help)")
    flag = _flag(field)
    default = ... if field.is_required() else field.get_default(call_default_factory=True)
    if isinstance(default, tuple):
        default = list(default)
    # click checks ge/le itself (its message); gt/lt are left to the model (build's message)
    low = next((m.ge for m in field.metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((m.le for m in field.metadata if isinstance(m, annotated_types.Le)), None)
    writes = {"file": output_file, "folder": output_folder}
    return typer.Option(
        default,
        *(flag.names or (option,)),
        help=field.description,
        hidden=flag.hidden,
        rich_help_panel=flag.panel,
        parser=writes[flag.writes](option) if flag.writes else _usage_errors(flag.parse),
        min=low if isinstance(low, int | float) else None,
        max=high if isinstance(high, int | float) else None,
    )


def option_parameters(model: type[Any]) -> list[inspect.Parameter]:
    """The fields of an options model as keyword-only parameters, for Typer to read."""
    if _is_request_model(model):
        names = option_names(model)
        return [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=field_option(name, field, names[name]),
                annotation=_cli_type(field.annotation),
            )
            for name, field in model.model_fields.items()
        ]
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


def build(model: type[M], values: dict[str, Any]) -> M:
    """`model` from its options' values, or an InputError naming the option it refused."""
    return validated(model, option_names(model), **values)


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
            values = {f: kwargs.pop(f) for f in fields}
            kwargs[name] = build(model, values) if _is_request_model(model) else model(**values)
        return command(**kwargs)

    spread = signature.replace(parameters=params)
    wrapper.__signature__ = spread  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    wrapper.__annotations__["return"] = signature.return_annotation
    return wrapper
