"""`inferbench bench` as a drop-in for sa-bench and `vllm bench serve`: their spellings, their
file names and fields, the values refused, `--config FILE`, and one naming rule for points."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from harness.testserver import TestServer
from inferbench.bench.dialect import api_of, resolve_tokenizer
from inferbench.bench.invocation import BenchArgs, resolve
from inferbench.bench.naming import point_stem, result_path
from inferbench.bench.result import read_point_result
from inferbench.bench.settings import ApiKind
from inferbench.cli.main import main
from inferbench.core.errors import InputError


def _cli(args: list[str], capsys: pytest.CaptureFixture[str] | None = None) -> int:
    with pytest.raises(SystemExit) as exc:
        main(["bench", *args])
    code = exc.value.code
    return code if isinstance(code, int) else 1


def test_vllm_bench_serve_spelling_writes_vllm_names(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = _cli(
        [
            "--backend",
            "openai",
            "--host",
            "127.0.0.1",
            "--port",
            str(server.port),
            "--model",
            "org/Tiny-1B",
            "--dataset-name",
            "random",
            "--random-input-len",
            "64",
            "--random-output-len",
            "8",
            "--max-concurrency",
            "2",
            "--num-prompts",
            "6",
            "--request-rate",
            "inf",
            "--goodput",
            "ttft:60000",
            "tpot:60000",
            "--metadata",
            "version=0.3.3",
            "tp=2",
            "--metric-percentiles",
            "50,95",
            "--save-result",
            "--result-dir",
            str(tmp_path),
            "--label",
            "nightly",
            "--disable-tqdm",
        ]
    )
    assert code == 0, capsys.readouterr().err
    (path,) = tmp_path.glob("nightly-infqps-concurrency2-Tiny-1B-*.json")
    top = orjson.loads(path.read_bytes())
    assert top["failed"] == 0 and top["completed"] == 6
    assert top["request_goodput"] == pytest.approx(6 / top["duration"])
    assert top["version"] == "0.3.3" and top["tp"] == "2"
    assert {"p50_ttft_ms", "p95_itl_ms", "p99_tpot_ms", "p99.9_e2el_ms"} <= set(top)
    assert top["model_id"] == "org/Tiny-1B" and top["max_concurrency"] == 2
    again = read_point_result(path)  # extra keys are told apart from sa-bench's
    assert again.inferbench.metadata == {"version": "0.3.3", "tp": "2"}
    assert again.sa.failed == 0


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--backend", "tgi"], "--backend"),
        (["--backend", "nope"], "--backend"),
        (["--backend", "openai-chat", "--endpoint", "/v1/completions"], "--endpoint"),
        (["--endpoint", "/generate"], "--endpoint"),
        (["--profile"], "--profile"),
        (["--best-of", "2"], "--best-of"),
        (["--tokenizer-mode", "mistral"], "--tokenizer-mode"),
        (["--tokenizer", "no-such-org/no-such-model"], "--tokenizer"),
        (["--dataset-name", "sharegpt"], "--dataset-path"),
        (["--dataset-name", "sonnet", "--dataset-path", "x"], "--dataset-name"),
        (["--goodput", "itl:5"], "--goodput"),
        (["--goodput", "ttft:fast"], "--goodput"),
        (["--metadata", "completed=3"], "--metadata"),
        (["--metadata", "novalue"], "--metadata"),
        (["--percentile-metrics", "ttft,foo"], "--percentile-metrics"),
        (["--metric-percentiles", "0,99"], "--metric-percentiles"),
        (["--slo", "ttft=1", "--goodput", "ttft:1"], "--goodput"),
        (["--output", "a.json", "--result-filename", "b.json"], "--output"),
        (["--random-prefix-len", "8", "--prefix-groups", "2", "--prefix-len", "4"], "prefix"),
        (["stray"], "stray"),
    ],
)
def test_what_cannot_be_honoured_is_refused_by_name(
    flags: list[str], named: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    base = ["--base-url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "4"]
    code = _cli([*base, "--concurrency", "1", "--num-prompts", "1", *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert named in err and "Traceback" not in err


def test_sa_bench_request_rate_inf_is_a_closed_loop_at_the_cap() -> None:
    inv = resolve(
        BenchArgs(
            base_url="http://x:1",
            model="m",
            isl=8,
            osl=4,
            concurrency="16",
            request_rate=float("inf"),
            num_prompts=160,
            warmups=32,
            range_ratio=0.8,
            dataset_name="random",
            backend="vllm",
        )
    )
    (point,) = inv.points
    assert point.closed_loop and point.concurrency == 16 and point.warmups == 32
    assert inv.workload.range_mode.value == "inferencex"  # type: ignore[union-attr]
    no_cap = resolve(
        BenchArgs(
            base_url="http://x:1", model="m", isl=8, osl=4, num_prompts=5, request_rate=float("inf")
        )
    )
    assert no_cap.points[0].concurrency == 5


def test_backend_and_endpoint_name_the_api() -> None:
    assert api_of("vllm", None) is ApiKind.COMPLETIONS
    assert api_of("openai-chat", None) is ApiKind.CHAT
    assert api_of(None, "/v1/chat/completions") is ApiKind.CHAT
    assert api_of("sglang", "/v1/completions") is ApiKind.COMPLETIONS
    assert api_of(None, None) is ApiKind.COMPLETIONS


def test_tokenizer_from_a_folder_or_the_hf_cache(
    tmp_path: Path, word_tokenizer: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "hub" / "models--org--Tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "tokenizer.json").write_bytes(word_tokenizer.read_bytes())
    (tmp_path / "hub" / "models--org--Tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--org--Tiny" / "refs" / "main").write_text("abc123\n")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_tokenizer("org/Tiny") == snapshot / "tokenizer.json"
    assert resolve_tokenizer(str(word_tokenizer.parent)) == word_tokenizer
    with pytest.raises(InputError, match="no tokenizer.json"):
        resolve_tokenizer(str(tmp_path))


def test_config_file_is_the_flags_as_data(
    server: TestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(
        f"base-url: http://127.0.0.1:{server.port}\n"
        "model: m\n"
        "random_input_len: 32\n"
        "osl: 4\n"
        "concurrency: [1, 2]\n"
        "num-prompts: 4\n"
        "goodput: {ttft: 60000}\n"
        "disable-tqdm: true\n"
        f"result-dir: {tmp_path / 'out'}\n"
    )
    # a flag on the command line wins over the file
    assert _cli(["--config", str(config), "--concurrency", "3"]) == 0, capsys.readouterr().err
    (path,) = (tmp_path / "out").glob("*.json")
    assert path.name == "conc3.json"
    top = orjson.loads(path.read_bytes())
    assert top["input_lens"] == [32] * 4 and top["request_goodput"] is not None
    capsys.readouterr()

    bad = tmp_path / "bad.yaml"
    bad.write_text("model: m\nisl: 8\nconcurrencyy: 4\n")
    assert _cli(["--config", str(bad), "--base-url", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "bad.yaml:3" in err and "concurrency" in err and "Traceback" not in err


def test_one_naming_rule_for_several_points(tmp_path: Path) -> None:
    assert point_stem(64) == "conc64"
    assert point_stem(None, 2.5) == "rate2.5" and point_stem(8, 2.0) == "rate2_conc8"
    out = tmp_path / "out.json"
    assert result_path(out, None, "conc4", many=False) == out
    assert result_path(out, None, "conc4", many=True) == tmp_path / "out_conc4.json"
    assert result_path(None, tmp_path, "conc4", many=True) == tmp_path / "conc4.json"
    assert result_path(None, None, "conc4", many=True) is None


def test_sim_estimate_follows_the_same_rule(tmp_path: Path) -> None:
    from inferbench.cli.main import app

    small = [
        "sim",
        "estimate",
        "--model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--gpu",
        "h100",
        "--isl",
        "64",
        "--osl",
        "8",
        "--max-model-len",
        "1024",
        "--num-prompts",
        "8",
        "--concurrency",
        "2,4",
    ]
    app([*small, "--output", str(tmp_path / "out.json")], standalone_mode=False)
    assert sorted(p.name for p in tmp_path.glob("out_*.json")) == [
        "out_conc2.json",
        "out_conc4.json",
    ]
    app([*small, "--result-dir", str(tmp_path / "d")], standalone_mode=False)
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["conc2.json", "conc4.json"]
    with pytest.raises(InputError, match="--output .*: is a directory"):
        app([*small, "--output", str(tmp_path / "d")], standalone_mode=False)


def test_repeats_are_separate_files_with_their_requests(server: TestServer, tmp_path: Path) -> None:
    """`--repeats 2`: each point measured twice (conc2.json, conc2_r2.json), each file with
    its requests' samples, ingested as two measurements of one point."""
    from inferbench.results.ingest import ingest_paths
    from inferbench.results.store import open_store

    args = ["--base-url", f"http://127.0.0.1:{server.port}", "--model", "org/Tiny-1B"]
    args += ["--isl", "64", "--osl", "8", "--concurrency", "2", "--num-prompts", "6"]
    code = _cli([*args, "--repeats", "2", "--result-dir", str(tmp_path / "d"), "--disable-tqdm"])
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["conc2.json", "conc2_r2.json"]
    for path in (tmp_path / "d").iterdir():
        samples = read_point_result(path).inferbench.samples
        assert samples is not None and len(samples.ttft_ms) == len(samples.tokens) == 6
        assert len(samples.tpot_ms) == 6 and all(t > 0 for t in samples.e2el_ms)
    db = f"sqlite:///{tmp_path / 'r.sqlite'}"
    identity = {"model-prefix": "tiny", "precision": "bf16", "framework": "vllm", "tp": 1}
    identity |= {"runner": "h100", "isl": 64, "osl": 8, "run-id": "r"}
    assert ingest_paths([tmp_path / "d"], db, identity=identity).inserted == 2
    with open_store(db) as store:
        stored = [s.record for s in store.query()]
        assert sorted(r.provenance.repeat for r in stored) == [1, 2]
        assert len({r.point_key() for r in stored}) == 1
        samples = store.samples([r.natural_key() for r in stored])
    assert {s.size for s in samples.values()} == {6}
