"""The `vllm` a GPU benchmark script finds first on PATH in the CPU tests: vLLM's CPU build.

InferenceX's scripts start `vllm serve` with the flags of their GPU and model
(`--kv-cache-dtype fp8`, `--quantization deepseek_v4_fp8`, `--tokenizer-mode deepseek_v4`,
`--speculative-config ...`, `--tensor-parallel-size 8`). vLLM's CPU build serving the tiny
Llama takes none of those, so this stand-in, written as `vllm` into a folder put before the
vLLM venv on PATH, keeps the flags that mean the same on a CPU (the port, the lengths, the
batch limits, the served name, prefix caching), binds 127.0.0.1 (tests serve on loopback
only), caps --max-model-len (see MAX_LEN), adds --enforce-eager, and says in the server
log (its stderr) every flag it dropped. The script itself is never changed; this is the
engine's side of the seam, for the tests only (on a GPU the script's `vllm` is the real one).
"""

from __future__ import annotations

from pathlib import Path

# flags that take a value and mean the same on the CPU build
KEEP_VALUE = frozenset(
    {"--port", "--max-model-len", "--max-num-seqs", "--max-num-batched-tokens",
     "--served-model-name", "--seed"}
)  # fmt: skip
KEEP_FLAG = frozenset(
    {"--trust-remote-code", "--enable-prefix-caching", "--no-enable-prefix-caching",
     "--disable-uvicorn-access-log", "--enable-prompt-tokens-details"}
)  # fmt: skip
# GPU-only switches a script exports for its engine, which the CPU build must not see
DROP_ENV = ("VLLM_USE_V2_MODEL_RUNNER", "VLLM_USE_RUST_FRONTEND", "TORCH_CUDA_ARCH_LIST")
# tools/tiny_model.py's model has 4096 positions; lengths up to this run beyond them
# (VLLM_ALLOW_LONG_MAX_MODEL_LEN: random weights do not care) so that a script's eval context
# (8k1k: 9472) holds; a longer one (the agentic scripts' 1M) is capped to fit the KV cache
MAX_LEN = 32768

_BODY = """
import os
import sys

REAL = {real!r}
KEEP_VALUE = {keep_value!r}
KEEP_FLAG = {keep_flag!r}
argv = sys.argv[1:]
if argv[:1] != ["serve"] or len(argv) < 2:
    os.execv(REAL, [REAL, *argv])
model, rest = argv[1], argv[2:]
kept, dropped, i = [], [], 0
while i < len(rest):
    name, value = rest[i], None
    if name.startswith("--") and "=" in name:
        name, value = name.split("=", 1)
    elif i + 1 < len(rest) and not rest[i + 1].startswith("--"):
        value, i = rest[i + 1], i + 1
    i += 1
    if name == "--max-model-len" and value is not None:
        value = str(min(int(value), {max_len}))
    if name in KEEP_VALUE and value is not None:
        kept += [name, value]
    elif name in KEEP_FLAG and value is None:
        kept.append(name)
    else:
        dropped.append(name if value is None else f"{{name}} {{value[:60]}}")
if "--max-model-len" not in kept:
    kept += ["--max-model-len", "{max_len}"]
env = dict(os.environ)
gone = [k for k in {drop_env!r} if env.pop(k, None) is not None]
env["VLLM_ALLOW_LONG_MAX_MODEL_LEN"] = "1"
print(
    "inferbench CPU test stand-in for vllm: vLLM's CPU build serves the tiny model; "
    f"dropped {{dropped}}; unset {{gone}}; added --host 127.0.0.1 --enforce-eager",
    file=sys.stderr,
    flush=True,
)
os.execve(REAL, [REAL, "serve", model, *kept, "--host", "127.0.0.1", "--enforce-eager"], env)
"""


def write_cpu_vllm(folder: Path, vllm_bin: Path) -> Path:
    """Write the stand-in as `folder/vllm` (run by the vLLM venv's Python); returns folder."""
    folder.mkdir(parents=True, exist_ok=True)
    body = _BODY.format(
        real=str(vllm_bin / "vllm"),
        keep_value=sorted(KEEP_VALUE),
        keep_flag=sorted(KEEP_FLAG),
        max_len=MAX_LEN,
        drop_env=DROP_ENV,
    )
    script = folder / "vllm"
    script.write_text(f"#!{vllm_bin / 'python'}\n{body}")
    script.chmod(0o755)
    return folder
