"""`inferbench eval` end to end: exit codes, the result file, clear refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inferbench.cli.main import main
from inferbench.evals.result import EvalStatus, read_eval_result

from .conftest import needs_lm_eval
from .known_answers import known_answer_server, write_dataset


def _main(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exc:
        main(["eval", *args])
    return exc.value.code if isinstance(exc.value.code, int) else 1


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_eval_command_writes_the_score(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_dataset(tmp_path / "gsm.jsonl")
    with known_answer_server(known=6) as srv:
        code = _main(
            ["--base-url", srv.url, "--model", "known", "--dataset", str(data),
             "--concurrency", "4", "--output-dir", str(tmp_path / "out")]
        )  # fmt: skip
    assert code == 0
    result = read_eval_result(tmp_path / "out" / "eval_gsm8k.json")
    assert result.status is EvalStatus.OK and result.primary is not None
    assert result.primary.value == pytest.approx(0.6)
    # stdout is not a terminal under pytest: progress is timestamped lines, not a spinner
    said = [line.split(" ", 2) for line in capsys.readouterr().err.splitlines()]
    progress = [w[2] for w in said if len(w) == 3 and re.fullmatch(r"\+\d+s", w[1])]
    step = f"lm-eval gsm8k against {srv.url}"
    assert progress[0] == step and progress[-1] == f"{step}: done"
    assert set(progress[1:-1]) <= {step}  # the heartbeat, on an eval longer than 10 s


def test_bad_input_exits_2_with_a_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = ["--base-url", "http://127.0.0.1:1", "--model", "m"]
    assert _main([*base, "--task", "mmlu"]) == 2
    assert "unknown eval task" in capsys.readouterr().err
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty"))
    assert _main([*base, "--output-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not in the local Hugging Face cache" in err and "Traceback" not in err
    assert read_eval_result(tmp_path / "eval_gsm8k.json").status is EvalStatus.UNAVAILABLE


@needs_lm_eval
@pytest.mark.slow
@pytest.mark.integration
def test_a_dataset_lm_eval_cannot_use_is_one_line_without_its_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"foo": 1}\n')  # no `question`: lm-eval's prompt template fails
    with known_answer_server(known=6) as srv:
        code = _main(
            ["--base-url", srv.url, "--model", "known", "--dataset", str(data),
             "--result-dir", str(tmp_path / "out")]
        )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    result = read_eval_result(tmp_path / "out" / "eval_gsm8k.json")
    assert result.status is EvalStatus.FAILED and result.reason is not None
    # the cause, by name; none of lm-eval's (or jinja's) stack frames
    assert "UndefinedError: 'question' is undefined" in result.reason
    assert "lm_eval_gsm8k.log" in result.reason
    for frame in ('File "', "Traceback", "raise ", "line 1, in"):
        assert frame not in result.reason and frame not in err, err
