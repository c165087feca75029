"""Every output option against a symlink, a FIFO, a device node, a pipe and a directory.

Each command runs for real (in-process, as the `inferbench` script runs it) and the target
is looked at afterwards: a symlink is still a link and its file holds the output; a FIFO is
still a FIFO and its reader got the output; a device node is still that device; a `/dev/fd/N`
pipe (a shell's `>(jq .)`) got the output; a directory given for a file is left untouched
with exit 2 naming the option. Folder options take a directory or a link to one and refuse a
FIFO or device the same way.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from harness.testserver import ServerConfig, serve_in_thread

from .clirun import run_cli
from .corpus import EXAMPLES, RESULT_NAME

LAUNCHER_TREE = Path(__file__).resolve().parents[1] / "config" / "fixtures" / "launcher_tree"
SIM = ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--isl", "64"]
SIM += ["--osl", "8", "--num-prompts", "4", "--concurrency", "2"]


@dataclass(frozen=True)
class Inputs:
    """What the commands read: a server, a store with one point, a calibration points file."""

    url: str
    db: str
    points: Path


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inputs]:
    from harness.synthetic import SyntheticConfig, sa_bench_result
    from inferbench.results.ingest import ingest_paths
    from inferbench.sim.calibrate import Measured, MeasuredPoint

    tmp = tmp_path_factory.mktemp("inputs")
    result = tmp / RESULT_NAME
    result.write_text(json.dumps(sa_bench_result(SyntheticConfig(), 4, rng=random.Random(0))))
    db = f"sqlite:///{tmp / 'r.sqlite'}"
    assert ingest_paths([result], db, workers=1).inserted == 1
    job = {"model": "meta-llama/Llama-3.1-8B-Instruct", "precision": "bf16", "runner": "h100",
           "framework": "vllm", "tp": 1, "isl": 512, "osl": 128}  # fmt: skip
    points = [
        MeasuredPoint(name=f"p{c}", job={**job, "conc": c}, measured=Measured(tok_s_gpu=t))
        for c, t in ((8, 4000.0), (32, 9000.0))
    ]
    (tmp / "points.yaml").write_text(
        yaml.safe_dump({"points": [p.model_dump(mode="json", exclude_none=True) for p in points]})
    )
    with serve_in_thread(ServerConfig()) as srv:
        yield Inputs(f"http://127.0.0.1:{srv.port}", db, tmp / "points.yaml")


def _json(data: bytes) -> None:
    assert json.loads(data)


def _jsonl(data: bytes) -> None:
    lines = data.decode().splitlines()
    assert lines and all(json.loads(line) is not None for line in lines)


def _yaml(data: bytes) -> None:
    assert yaml.safe_load(data)


@dataclass(frozen=True)
class FileOption:
    """A command line whose option names a file: `args(inputs, target)`, its exit codes."""

    id: str
    args: Callable[[Inputs, str], list[str]]
    content: Callable[[bytes], None]
    codes: frozenset[int] = frozenset({0})
    option: str = "--output"


def _bench(inputs: Inputs, *extra: str) -> list[str]:
    return ["bench", "--base-url", inputs.url, "--model", "m", "--isl", "8", "--osl", "4",
            "--concurrency", "1", "--num-prompts", "2", "--workers", "1", "--disable-tqdm",
            *extra]  # fmt: skip


FILE_OPTIONS = [
    FileOption(
        "sweep",
        lambda i, t: ["sweep", "--root", str(EXAMPLES), "--format", "json", "--output", t],
        _json,
    ),
    FileOption(
        "traces-synth", lambda i, t: ["traces", "synth", "-o", t, "--sessions", "2"], _jsonl
    ),
    FileOption(
        "sim-calibrate",
        lambda i, t: ["sim", "calibrate", str(i.points), "-o", t, "--no-loo"],
        _yaml,
    ),
    FileOption(
        "sim-estimate",
        lambda i, t: ["sim", "estimate", *SIM, "--output", t],
        _json,
        option="--output",
    ),
    FileOption(
        "results-export",
        lambda i, t: ["results", "export", "--format", "json", "--db", i.db, "--output", t],
        _json,
    ),
    FileOption(
        "bench-result-file",
        lambda i, t: _bench(i, "--output", t),
        _json,
        option="--output",
    ),
    FileOption(
        "bench-detail-file",
        lambda i, t: _bench(i, "--detail-file", t),
        _jsonl,
        option="--detail-file",
    ),
    FileOption(
        "bench-result-filename",
        lambda i, t: _bench(
            i, "--result-dir", str(Path(t).parent), "--result-filename", Path(t).name
        ),
        _json,
        option="--result-filename",
    ),
    FileOption(
        "replay",
        lambda i, t: [
            "replay",
            "--base-url",
            i.url,
            "--model",
            "m",
            "--concurrency",
            "1",
            "--synth",
            "sessions=1,turns=2,delay=0",
            "--sessions",
            "1",
            "--output",
            t,
        ],  # fmt: skip
        _json,
        option="--output",
    ),
    FileOption(
        # no dataset in an empty HF cache: the eval is `unavailable` (exit 2), still written
        "eval",
        lambda i, t: [
            "eval",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--output",
            t,
        ],  # fmt: skip
        _json,
        codes=frozenset({2}),
        option="--output",
    ),
]


def _make_device(path: Path) -> Path:
    """A character device like /dev/null at `path` (root may mknod), else /dev/null itself."""
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EACCES):
            raise
        return Path("/dev/null")
    return path


class FifoReader:
    """Reads a FIFO in a thread from before the command opens it until it closes it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = b""
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        with open(self.path, "rb") as handle:
            self.data = handle.read()

    def finish(self) -> bytes:
        # a command that never opened the FIFO leaves the reader waiting for a writer: be one
        with contextlib.suppress(OSError):
            os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
        self.thread.join(30)
        assert not self.thread.is_alive(), "the FIFO reader never finished"
        return self.data


class PipeReader:
    """The read end of an os.pipe() whose write end is named /dev/fd/N, as `>(cmd)` is."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        self.chunks: list[bytes] = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    @property
    def name(self) -> str:
        return f"/dev/fd/{self.write_fd}"

    def _read(self) -> None:
        while chunk := os.read(self.read_fd, 65536):
            self.chunks.append(chunk)
        os.close(self.read_fd)

    def finish(self) -> bytes:
        os.close(self.write_fd)
        self.thread.join(30)
        assert not self.thread.is_alive()
        return b"".join(self.chunks)


KINDS = ("symlink", "fifo", "device", "pipe", "directory")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("INFERBENCH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("INFERBENCH_DB", raising=False)


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("opt", FILE_OPTIONS, ids=[o.id for o in FILE_OPTIONS])
def test_a_file_option_never_replaces_its_target(
    opt: FileOption,
    kind: str,
    inputs: Inputs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = out / "result.json"
    if kind == "symlink":
        real = out / "real.json"
        real.write_text("old")
        target.symlink_to(real.name)
        ran = run_cli(opt.args(inputs, str(target)), capsys)
        assert ran.code in opt.codes, ran.text
        assert target.is_symlink() and os.readlink(target) == real.name
        opt.content(real.read_bytes())
    elif kind == "fifo":
        os.mkfifo(target)
        reader = FifoReader(target)
        ran = run_cli(opt.args(inputs, str(target)), capsys)
        data = reader.finish()
        assert ran.code in opt.codes, ran.text
        assert stat.S_ISFIFO(target.lstat().st_mode)
        opt.content(data)
    elif kind == "device":
        device = _make_device(target)
        before = device.lstat()
        ran = run_cli(opt.args(inputs, str(device)), capsys)
        assert ran.code in opt.codes, ran.text
        after = device.lstat()
        assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev
        assert after.st_ino == before.st_ino  # the same node, not a new one in its place
    elif kind == "pipe":
        if opt.id == "bench-result-filename":
            pytest.skip("a --result-filename is a name in --result-dir, never /dev/fd/N")
        pipe = PipeReader()
        try:
            ran = run_cli(opt.args(inputs, pipe.name), capsys)
        finally:
            data = pipe.finish()
        assert ran.code in opt.codes, ran.text
        opt.content(data)
    else:
        target.mkdir()
        (target / "keep").write_text("mine")
        ran = run_cli(opt.args(inputs, str(target)), capsys)
        assert ran.code == 2, ran.text
        assert opt.option in ran.text and "is a directory" in ran.text, ran.text
        assert sorted(p.name for p in target.iterdir()) == ["keep"]
        assert (target / "keep").read_text() == "mine"
    assert "internal error" not in ran.text and "Traceback" not in ran.text, ran.text
    assert not [p for p in out.rglob(".*.tmp")], "a temporary file was left behind"


@dataclass(frozen=True)
class FolderOption:
    """A command line whose option names a folder; `wrote` checks what it wrote there."""

    id: str
    args: Callable[[Inputs, str], list[str]]
    wrote: Callable[[Path], bool] | None  # None: only its refusals are run (it writes nothing)
    option: str
    codes: frozenset[int] = frozenset({0})


def _has(pattern: str) -> Callable[[Path], bool]:
    return lambda folder: any(folder.glob(pattern))


FOLDER_OPTIONS = [
    FolderOption(
        "bench-result-dir",
        lambda i, t: _bench(i, "--output-dir", t),
        _has("conc1.json"),
        "--output-dir",
    ),
    FolderOption(
        "sim-estimate-result-dir",
        lambda i, t: ["sim", "estimate", *SIM, "--output-dir", t],
        _has("conc2.json"),
        "--output-dir",
    ),
    FolderOption(
        "eval-result-dir",
        lambda i, t: [
            "eval",
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "m",
            "--output-dir",
            t,
        ],  # fmt: skip
        _has("eval_gsm8k.json"),
        "--output-dir",
        codes=frozenset({2}),
    ),
    FolderOption(
        "report",
        lambda i, t: ["report", "--db", i.db, "--no-plots", "--output-dir", t],
        _has("index.html"),
        "--output",
    ),
    FolderOption(
        "clusters-import",
        lambda i, t: ["clusters", "import", "--root", str(LAUNCHER_TREE), "--output", t],
        _has("*.yaml"),
        "--output",
    ),
    FolderOption(
        "run-runs-dir",
        lambda i, t: ["run", "--root", str(EXAMPLES), "--dry-run", "--runs-dir", t],
        None,
        "--runs-dir",
    ),
    FolderOption(
        "demo-runs-dir",
        lambda i, t: ["demo", "--runs-dir", t],
        None,
        "--runs-dir",
    ),
]


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ("symlink", "directory", "fifo", "device", "file"))
@pytest.mark.parametrize("opt", FOLDER_OPTIONS, ids=[o.id for o in FOLDER_OPTIONS])
def test_a_folder_option_takes_a_folder_and_refuses_the_rest(
    opt: FolderOption,
    kind: str,
    inputs: Inputs,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = tmp_path / "target"
    if kind in ("symlink", "directory"):
        if opt.wrote is None:
            pytest.skip(f"{opt.id} writes nothing its test can run")
        real = tmp_path / "real" if kind == "symlink" else target
        real.mkdir()
        if kind == "symlink":
            target.symlink_to(real)
        ran = run_cli(opt.args(inputs, str(target)), capsys)
        assert ran.code in opt.codes, ran.text
        assert opt.wrote(real), sorted(real.iterdir())
        assert target.is_symlink() == (kind == "symlink")
    else:
        if kind == "fifo":
            os.mkfifo(target)
        elif kind == "file":
            target.write_text("mine")
        else:
            target = _make_device(target)
        before = target.lstat()
        ran = run_cli(opt.args(inputs, str(target)), capsys)
        assert ran.code == 2, ran.text
        assert opt.option in ran.text and "not a folder" in ran.text, ran.text
        after = target.lstat()
        assert (after.st_mode, after.st_ino, after.st_size) == (
            before.st_mode,
            before.st_ino,
            before.st_size,
        )
    assert "internal error" not in ran.text and "Traceback" not in ran.text, ran.text


@pytest.mark.parametrize("name", ["", ".", "../x", "a/b"])
def test_a_result_filename_stays_a_plain_name(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8"]
    args += ["--osl", "4", "--num-prompts", "1", "--result-dir", str(tmp_path / "d")]
    ran = run_cli([*args, "--result-filename", name], capsys)
    assert ran.code == 2 and "--result-filename" in ran.text and "fix:" in ran.text, ran.text
    assert not (tmp_path / "d").exists() and not (tmp_path / "x").exists()


def test_a_stream_takes_one_point(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """out_conc4.json beside /dev/stdout would be a new file in /dev: refused before running."""
    args = ["bench", "--base-url", "http://127.0.0.1:9", "--model", "m", "--isl", "8"]
    args += ["--osl", "4", "--num-prompts", "1", "--concurrency", "1,2"]
    ran = run_cli([*args, "--output", "/dev/stdout"], capsys)
    assert ran.code == 2 and "--output /dev/stdout is a stream" in ran.text, ran.text
    ran = run_cli(["sim", "estimate", *SIM[:-1], "2,4", "--output", "-"], capsys)
    assert ran.code == 2 and "--output - is a stream" in ran.text, ran.text


def test_dash_and_dev_stdout_write_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("-", "/dev/stdout"):
        ran = run_cli(["traces", "synth", "-o", name, "--sessions", "2"], capsys)
        assert ran.code == 0, ran.text
        _jsonl(ran.out.encode())
    assert list(tmp_path.iterdir()) == []  # no file named '-'


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.parametrize("kind", ("symlink", "fifo", "device", "directory"))
def test_sim_serve_record_sends_never_replaces_its_target(kind: str, tmp_path: Path) -> None:
    """`sim serve` writes --record-sends when it stops (SIGTERM), so it runs as a process."""
    import signal
    import subprocess
    import sys
    import urllib.request

    target = tmp_path / "sends.jsonl"
    reader: FifoReader | None = None
    real = tmp_path / "real.jsonl"
    if kind == "symlink":
        target.symlink_to(real.name)
    elif kind == "fifo":
        os.mkfifo(target)
        reader = FifoReader(target)
    elif kind == "device":
        target = _make_device(target)
    else:
        target.mkdir()
    before = target.lstat()
    cmd = [sys.executable, "-m", "inferbench.cli.main", "sim", "serve", "--port", "0",
           "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "h100", "--isl", "64",
           "--osl", "8", "--record-sends", str(target)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if kind == "directory":
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == 2 and "--record-sends" in err and "is a directory" in err
            assert list(target.iterdir()) == []
            return
        assert "listening on" in line, line
        body = json.dumps({"model": "meta-llama/Llama-3.1-8B-Instruct", "prompt": "hi",
                           "max_tokens": 4, "stream": True}).encode()  # fmt: skip
        url = line.strip().rsplit(" ", 1)[-1] + "/v1/completions"
        request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200 and b"[DONE]" in resp.read()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    after = target.lstat()
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    if kind == "symlink":
        _jsonl(real.read_bytes())
    elif reader is not None:
        _jsonl(reader.finish())
