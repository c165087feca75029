"""Options generated from a request model's fields: spelling, default, help, bounds, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest
import typer
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from inferbench.bench.agentic.invocation import ReplayArgs
from inferbench.bench.invocation import BenchArgs
from inferbench.cli.options import option_names, with_options
from inferbench.core.errors import InputError
from inferbench.core.flags import Flag
from inferbench.core.model import FrozenModel
from inferbench.evals.invocation import EvalArgs


class GreetArgs(FrozenModel):
    name: Annotated[str, Flag("--name", "-n")] = Field(description="who to greet")
    times: int = Field(1, ge=1, le=10, description="how often")
    ratio: float = Field(0.5, gt=0, description="a share")
    tags: tuple[str, ...] = Field((), description="labels, one per flag")
    out: Annotated[Path | None, Flag("--output", writes="file")] = Field(
        None, description="file to write"
    )
    secret: Annotated[bool, Flag(hidden=True, panel="Refused")] = Field(
        False, description="accepted, refused"
    )


def _app(seen: list[GreetArgs]) -> typer.Typer:
    app = typer.Typer()

    @app.command()
    @with_options
    def greet(args: GreetArgs, loud: bool = typer.Option(False, "--loud", help="shout")) -> None:
        seen.append(args)

    return app


def _option(app: typer.Typer, name: str) -> typer.core.TyperOption:
    command = typer.main.get_command(app)
    return next(p for p in command.params if p.name == name)  # type: ignore[return-value]


def test_an_option_is_made_from_each_field() -> None:
    app = _app([])
    name = _option(app, "name")
    assert (name.opts, name.required, name.help) == (["--name", "-n"], True, "who to greet")
    times = _option(app, "times")
    assert (times.opts, times.default, times.min, times.max) == (["--times"], 1, 1, 10)
    assert _option(app, "tags").multiple
    secret = _option(app, "secret")
    assert (secret.hidden, secret.rich_help_panel, secret.is_flag) == (True, "Refused", True)
    assert _option(app, "loud").opts == ["--loud"]  # a plain parameter beside the model


def test_the_command_gets_the_built_model() -> None:
    seen: list[GreetArgs] = []
    result = CliRunner().invoke(_app(seen), ["-n", "ann", "--tags", "a", "--tags", "b"])
    assert result.exit_code == 0, result.output
    assert seen == [GreetArgs(name="ann", tags=("a", "b"))]


def _said(output: str) -> str:
    """The words of an error box, without its frame."""
    return " ".join(output.replace("│", " ").replace("╰", " ").replace("─", " ").split())


def test_a_bound_is_checked_as_a_hand_written_option_checks_it() -> None:
    hand = typer.Typer()

    @hand.command()
    def greet(times: int = typer.Option(1, "--times", min=1, max=10)) -> None:
        pass

    generated = _said(CliRunner().invoke(_app([]), ["-n", "x", "--times", "11"]).output)
    written = _said(CliRunner().invoke(hand, ["--times", "11"]).output)
    assert "Invalid value for '--times'" in generated
    assert "less than or equal to 10" in generated
    assert generated.split("Invalid value")[1] == written.split("Invalid value")[1]


def test_a_value_only_the_model_refuses_names_its_option() -> None:
    result = CliRunner().invoke(_app([]), ["-n", "x", "--ratio", "0"])
    assert isinstance(result.exception, InputError)
    assert result.exception.location is not None
    assert result.exception.location.key == "--ratio"
    assert "greater than 0" in str(result.exception)


def test_an_output_option_refuses_a_folder_before_the_command_runs(tmp_path: Path) -> None:
    seen: list[GreetArgs] = []
    result = CliRunner().invoke(_app(seen), ["-n", "x", "--output", str(tmp_path)])
    assert result.exit_code != 0 and not seen
    assert "--output" in str(result.exception or result.output)


class Bare(BaseModel):
    size: int = 0


def test_a_field_without_help_is_refused_when_the_command_is_made() -> None:
    def command(args: Bare) -> None:
        pass

    with pytest.raises(TypeError, match="size: give the field a description"):
        with_options(command)


@pytest.mark.parametrize(
    ("command", "model", "own"),
    [
        ("bench", BenchArgs, {"config", "disable_tqdm", "fmt"}),
        ("replay", ReplayArgs, set()),
        ("eval", EvalArgs, set()),
    ],
)
def test_a_commands_options_come_from_its_request_model_once(
    command: str, model: type[BaseModel], own: set[str]
) -> None:
    from inferbench.cli.main import app

    made = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    params = {p.name: p for p in made.params}
    names = option_names(model)
    for name, field in model.model_fields.items():
        assert params[name].help == field.description
        assert params[name].opts[0] == names[name]
    assert set(params) - set(model.model_fields) == own  # the CLI's own: format, progress
