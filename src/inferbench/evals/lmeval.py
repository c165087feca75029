"""Run lm-evaluation-harness against an OpenAI-compatible endpoint and read its scores.

lm-eval runs in its own process (`python -m lm_eval`, the interpreter that has it), with
the Hugging Face libraries offline: data come from a local file or the local cache, never
from the network. The API key, when the endpoint needs one, reaches lm-eval through its
environment (OPENAI_API_KEY), never its command line, so it is in no log. Every way this
can go wrong (lm-eval absent or too old, data missing, the server failing mid-eval, a
timeout, output without scores) ends in an `EvalResult` with a status and a reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

from inferbench.core.fsio import describe_file_type
from inferbench.core.lifetime import child_setup
from inferbench.core.redact import Redactor, query_secrets, redact_url, split_userinfo
from inferbench.evals.result import EvalResult, EvalScore, EvalStatus
from inferbench.evals.spec import EvalApi, EvalSpec, TaskInfo, task_dir

MIN_LM_EVAL = (0, 4, 9)  # the release InferenceX pins (0.4.9.2) and newer
_SCORE = re.compile(r"^(?P<metric>[^,]+),(?P<filter>.+)$")


class EvalUnavailable(Exception):
    """The eval cannot start here; the message says what to install or provide."""


def lm_eval_version(python: str) -> str | None:
    """lm-eval's version in `python`'s environment, or None when it is not installed."""
    probe = "import importlib.metadata as m; print(m.version('lm-eval'))"
    try:
        done = subprocess.run(
            [python, "-c", probe], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def check_lm_eval(python: str) -> str:
    version = lm_eval_version(python)
    if version is None:
        raise EvalUnavailable(
            f"lm-eval is not installed for {python}: pip install 'inferbench[evals]' "
            "(or 'lm-eval[api]>=0.4.9')"
        )
    if _version_tuple(version) < MIN_LM_EVAL:
        raise EvalUnavailable(
            f"lm-eval {version} is too old (needs >= 0.4.9): pip install -U 'lm-eval[api]'"
        )
    return version


def _hf_cached(dataset: str) -> bool:
    """Whether a Hugging Face dataset is in the local caches (datasets' or the hub's)."""
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    hub = Path(os.environ.get("HF_HUB_CACHE") or home / "hub")
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    org, _, name = dataset.partition("/")
    return (hub / f"datasets--{org}--{name}").is_dir() or any(
        datasets_cache.glob(f"{org}___{name}*")
    )


def _data_files(info: TaskInfo, dataset: Path) -> dict[str, str]:
    """A file stands for every split; a folder holds `<split>.jsonl` (or .json) per split."""
    if dataset.is_file():
        return {split: str(dataset.resolve()) for split in info.splits}
    if dataset.is_dir():
        files = {}
        for split in info.splits:
            found = [dataset / f"{split}{ext}" for ext in (".jsonl", ".json")]
            match = next((f for f in found if f.is_file()), None)
            if match is None:
                raise EvalUnavailable(f"{dataset} has no {split}.jsonl for task {info.name}")
            files[split] = str(match.resolve())
        return files
    if os.path.exists(dataset):  # a FIFO or device: say which, not "does not exist"
        kind = describe_file_type(os.stat(dataset).st_mode)
        raise EvalUnavailable(f"eval dataset {dataset} is {kind}, not a file or folder")
    raise EvalUnavailable(f"eval dataset {dataset} does not exist")


TREE_TASKS = Path("utils") / "evals"  # an InferenceX tree's task files and their helpers
TREE_PATCH = TREE_TASKS / "patches" / "lm_eval_sitecustomize.py"


def task_source(spec: EvalSpec) -> Path:
    """The folder the task file comes from: the tree's utils/evals when it has the task,
    else the bundled copies (tests/upstream holds them equal to the tree's)."""
    if spec.tree is not None and (spec.tree / TREE_TASKS / spec.info.file).is_file():
        return spec.tree / TREE_TASKS
    return task_dir()


def prepare_patch(spec: EvalSpec, work: Path) -> Path:
    """A folder holding lm-eval's `sitecustomize.py` (the tree's patch, else inferbench's),
    put first on lm-eval's PYTHONPATH, as InferenceX's `_patch_lm_eval` does."""
    source = spec.tree / TREE_PATCH if spec.tree is not None else None
    if source is None or not source.is_file():
        source = Path(str(resources.files("inferbench.evals") / "patches" / "sitecustomize.py"))
    work.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, work / "sitecustomize.py")
    return work


def prepare_task(spec: EvalSpec, work: Path) -> Path:
    """The task file lm-eval reads, its data pointed at the local file or the cache."""
    info = spec.info
    work.mkdir(parents=True, exist_ok=True)
    source = task_source(spec)
    for helper in source.glob("*.py"):
        if helper.name != "__init__.py" and not helper.name.startswith("test_"):
            shutil.copy(helper, work / helper.name)
    name = info.file
    text = (source / name).read_text()
    if spec.dataset is not None:
        files = _data_files(info, spec.dataset)
        lines = [
            line
            for line in text.splitlines()
            if not line.startswith(("dataset_path:", "dataset_name:"))
        ]
        lines += ["dataset_path: json", "dataset_kwargs:", "  data_files:"]
        lines += [f"    {split}: {json.dumps(path)}" for split, path in files.items()]
        text = "\n".join(lines) + "\n"
    elif not _hf_cached(info.hf_dataset):
        raise EvalUnavailable(
            f"{info.hf_dataset} is not in the local Hugging Face cache and nothing is "
            f"downloaded at run time: give --eval-dataset FILE, or fetch it once with "
            f"huggingface-cli download --repo-type dataset {info.hf_dataset}"
        )
    path = work / name
    path.write_text(text)
    return path


def lm_eval_argv(
    python: str, spec: EvalSpec, base_url: str, model: str, task_file: Path, out_dir: Path
) -> list[str]:
    """InferenceX's lm-eval invocation, for the chat or the completions API."""
    root = base_url.rstrip("/").removesuffix("/v1")
    chat = spec.api is EvalApi.CHAT
    url = f"{root}/v1/chat/completions" if chat else f"{root}/v1/completions"
    model_args = [
        f"model={model}",
        f"base_url={url}",
        f"num_concurrent={spec.concurrency}",
        f"max_retries={spec.max_retries}",
        f"timeout={spec.timeout_s:g}",
        "tokenized_requests=False",
        f"max_length={spec.context_length}",
    ]
    model_args += ["eos_string=</s>"] if chat else ["tokenizer_backend=None"]
    argv = [python, "-m", "lm_eval", "--model"]
    argv += ["local-chat-completions", "--apply_chat_template"] if chat else ["local-completions"]
    argv += ["--tasks", str(task_file), "--output_path", str(out_dir), "--log_samples"]
    argv += ["--model_args", ",".join(model_args)]
    argv += ["--gen_kwargs", f"max_tokens={spec.max_output_tokens},temperature=0,top_p=1"]
    if spec.num_fewshot is not None:
        argv += ["--num_fewshot", str(spec.num_fewshot)]
    if spec.limit is not None:
        argv += ["--limit", str(spec.limit)]
    return argv


def parse_results(out_dir: Path, info: TaskInfo) -> tuple[tuple[EvalScore, ...], Path | None]:
    """Scores of the task from lm-eval's newest results file, and its samples log."""
    files = sorted(out_dir.rglob("results_*.json"), key=lambda p: p.stat().st_mtime)
    if not files:
        return (), None
    data = json.loads(files[-1].read_text())
    block = data.get("results", {}).get(info.lm_eval_task, {})
    n = data.get("n-samples", {}).get(info.lm_eval_task, {})
    samples = int(n.get("effective") or n.get("original") or 0)
    scores = []
    for key, value in block.items():
        match = _SCORE.match(key)
        if match is None or "_stderr" in match["metric"] or not isinstance(value, int | float):
            continue
        stderr = block.get(f"{match['metric']}_stderr,{match['filter']}")
        scores.append(
            EvalScore(
                metric=match["metric"],
                filter=match["filter"],
                value=float(value),
                stderr=float(stderr) if isinstance(stderr, int | float) else None,
                samples=samples,
            )
        )
    logs = sorted(out_dir.rglob(f"samples_{info.lm_eval_task}_*.jsonl"))
    return tuple(sorted(scores, key=lambda s: (s.metric, s.filter))), (logs[-1] if logs else None)


def is_simulator(base_url: str, timeout_s: float = 5.0) -> bool:
    """Whether the endpoint is `inferbench sim serve` (its /v1/models says so)."""
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        with urllib.request.urlopen(f"{root}/v1/models", timeout=timeout_s) as resp:
            data = json.loads(resp.read())
    except (OSError, ValueError):
        return False
    models = data.get("data") if isinstance(data, dict) else None
    if not isinstance(models, list) or not models:
        return False
    return all(isinstance(m, dict) and m.get("owned_by") == "inferbench-sim" for m in models)


# The last line of a Python traceback: `pkg.module.SomeError: message` (or just the name).
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt|Warning)\w*)(?::\s*(.*))?$"
)


def failure_summary(log: str) -> str:
    """What went wrong, in one line, from the end of lm-eval's log: the exception it died of
    (`UndefinedError: 'question' is undefined`), never the frames above it (third-party
    stack lines mean nothing to the user and hide the cause); else its last plain lines."""
    lines = [line.rstrip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):
        match = _EXCEPTION.match(line)
        if match:
            name, message = match.group(1), (match.group(2) or "").strip()
            return f"{name}: {message}" if message else name
    plain = [
        line.strip()
        for line in lines
        if not line[:1].isspace() and not line.startswith(("Traceback", 'File "', "$ "))
    ]
    return " | ".join(plain[-2:])[:300] or "no message"


def _tail(path: Path, lines: int = 12) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def run_eval(
    base_url: str,
    model: str,
    spec: EvalSpec,
    out_dir: Path,
    *,
    python: str | None = None,
    simulated: bool | None = None,
    wall_timeout_s: float | None = None,
) -> EvalResult:
    """Run one eval; whatever happens, the outcome is an EvalResult (logs under out_dir)."""
    python = python or sys.executable
    info = spec.info
    out_dir = out_dir.resolve()  # lm-eval runs from inside it: a relative path would double
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / f"lm_eval_{info.name}.log"
    started = datetime.now(UTC)
    sim = is_simulator(base_url) if simulated is None else simulated

    def result(
        status: EvalStatus,
        reason: str | None = None,
        scores: tuple[EvalScore, ...] = (),
        version: str | None = None,
        samples: Path | None = None,
    ) -> EvalResult:
        return EvalResult(
            task=info.name,
            lm_eval_task=info.lm_eval_task,
            status=status,
            reason=reason,
            simulated=sim and bool(scores),  # an eval that produced no score is not "simulated"
            scores=scores,
            primary_metric=info.primary[0],
            primary_filter=info.primary[1],
            model=model,
            base_url=redact_url(base_url),
            spec=spec,
            harness_version=version,
            started_at=started.isoformat(),
            finished_at=datetime.now(UTC).isoformat(),
            log_file=log_path.name if log_path.exists() else None,
            samples_file=str(samples.relative_to(out_dir)) if samples else None,
        )

    try:
        version = check_lm_eval(python)
        task_file = prepare_task(spec, out_dir / f"lm_eval_{info.name}" / "task")
    except EvalUnavailable as exc:
        return result(EvalStatus.UNAVAILABLE, str(exc))
    raw_dir = out_dir / f"lm_eval_{info.name}"
    _, userinfo = split_userinfo(base_url)
    password = (userinfo or "").partition(":")[2]
    hide = Redactor.of([*query_secrets(base_url)[1], userinfo, password])
    argv = lm_eval_argv(python, spec, base_url, model, task_file, raw_dir)
    site = prepare_patch(spec, raw_dir / "site")
    path = os.environ.get("PYTHONPATH")
    env = {
        **os.environ,
        "PYTHONPATH": f"{site}{os.pathsep}{path}" if path else str(site),
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "OPENAI_API_KEY": os.environ.get("OPENAI_API_KEY") or "EMPTY",
    }
    try:
        with log_path.open("w") as log:
            log.write("$ " + hide(" ".join(argv)) + "\n")
            log.flush()
            done = subprocess.run(
                argv,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=raw_dir.parent,
                preexec_fn=child_setup(signal.SIGTERM),  # not left running if we are killed
                timeout=wall_timeout_s,
                check=False,
            )
    except subprocess.TimeoutExpired:
        return result(EvalStatus.FAILED, f"lm-eval ran past {wall_timeout_s:g} s", (), version)
    scores, samples = parse_results(raw_dir, info)
    if done.returncode != 0:
        why = f"lm-eval exited {done.returncode}: {failure_summary(_tail(log_path, 200))}"
        return result(EvalStatus.FAILED, f"{why} (full log: {log_path.name})", scores, version)
    if not scores or not any(s.samples for s in scores):
        return result(EvalStatus.FAILED, "lm-eval wrote no scores", scores, version)
    return result(EvalStatus.OK, None, scores, version, samples)
