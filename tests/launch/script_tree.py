"""A small benchmark tree whose single-node script follows InferenceX's conventions.

`runners/launch_gpu-a.sh` picks the script the way InferenceX's launchers do (tagged name
first, then the historical one); the script sources `benchmarks/benchmark_lib.sh` (written
here, after InferenceX's: wait_for_server_ready polls /health with curl while the server
lives, run_benchmark_serving calls `python3 $PWD/utils/bench_serving/benchmark_serving.py`
with sa-bench's argv), starts `SERVER_CMD` in the background with its log at
/workspace/server.log, and benchmarks with `--result-dir /workspace/`.

`server_cmd` is the seam: a shell command line (the script's variables allowed) that starts
the engine in the foreground on $PORT. Tests swap it for a stub, the simulator, or an engine.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

LIB = r"""#!/usr/bin/env bash
export PORT="${PORT:-8888}"

check_env_vars() {
    local missing=()
    for name in "$@"; do [[ -z "${!name:-}" ]] && missing+=("$name"); done
    if [[ ${#missing[@]} -gt 0 ]]; then echo "missing: ${missing[*]}"; exit 1; fi
}

wait_for_server_ready() {
    local port="" log="" pid=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --port) port="$2"; shift 2 ;;
            --server-log) log="$2"; shift 2 ;;
            --server-pid) pid="$2"; shift 2 ;;
            *) shift ;;
        esac
    done
    until curl --output /dev/null --silent --fail "http://127.0.0.1:${port}/health"; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "Process died before the server became ready." >&2
            cat "$log" >&2
            exit 1
        fi
        sleep 0.2
    done
}

run_benchmark_serving() {
    local model="" port="" isl="" osl="" ratio="" prompts="" conc="" name="" dir=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model="$2"; shift 2 ;;
            --port) port="$2"; shift 2 ;;
            --input-len) isl="$2"; shift 2 ;;
            --output-len) osl="$2"; shift 2 ;;
            --random-range-ratio) ratio="$2"; shift 2 ;;
            --num-prompts) prompts="$2"; shift 2 ;;
            --max-concurrency) conc="$2"; shift 2 ;;
            --result-filename) name="$2"; shift 2 ;;
            --result-dir) dir="$2"; shift 2 ;;
            *) shift ;;
        esac
    done
    python3 "$(pwd)/utils/bench_serving/benchmark_serving.py" \
        --model "$model" --backend vllm --base-url "http://127.0.0.1:$port" \
        --dataset-name random --random-input-len "$isl" --random-output-len "$osl" \
        --random-range-ratio "$ratio" --num-prompts "$prompts" --max-concurrency "$conc" \
        --request-rate inf --ignore-eos --save-result --num-warmups 0 \
        --percentile-metrics 'ttft,tpot,itl,e2el' \
        --result-dir "$dir" --result-filename "$name.json"
}
"""

LAUNCHER = r"""#!/usr/bin/env bash
export PORT=8888
FRAMEWORK_SUFFIX=$([[ "$FRAMEWORK" == "trt" ]] && printf '_trt' || printf '')
SPEC_SUFFIX=$([[ "$SPEC_DECODING" == "mtp" ]] && printf '_mtp' || printf '')
BENCH_BASE="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_gpua"
BENCH_SCRIPT="${BENCH_BASE}_${FRAMEWORK}${SPEC_SUFFIX}.sh"
if [[ ! -f "$BENCH_SCRIPT" ]]; then
    BENCH_SCRIPT="${BENCH_BASE}${FRAMEWORK_SUFFIX}${SPEC_SUFFIX}.sh"
fi
srun --container-mounts=$GITHUB_WORKSPACE:/workspace/ bash "$BENCH_SCRIPT"
"""

SCRIPT = r"""#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"

check_env_vars MODEL TP CONC ISL OSL RANDOM_RANGE_RATIO RESULT_FILENAME

SERVER_LOG=/workspace/server.log
if [[ $CONC -ge 8 ]]; then
    BATCH=$CONC
else
    BATCH=8
fi
export SERVE_MODE=throughput

set -x
MODEL_LEN=$MAX_MODEL_LEN {server_cmd} > $SERVER_LOG 2>&1 &
SERVER_PID=$!

wait_for_server_ready --port "$PORT" --server-log "$SERVER_LOG" --server-pid "$SERVER_PID"

run_benchmark_serving \
    --model "$MODEL" \
    --port "$PORT" \
    --backend vllm \
    --input-len "$ISL" \
    --output-len "$OSL" \
    --random-range-ratio "$RANDOM_RANGE_RATIO" \
    --num-prompts $(( CONC * 2 )) \
    --max-concurrency "$CONC" \
    --result-filename "$RESULT_FILENAME" \
    --result-dir /workspace/
"""

MASTER = """llama-fp8-gpua-vllm:
  image: vllm/vllm-openai:v0.10.2
  model: meta-llama/Llama-3.1-8B-Instruct
  model-prefix: llama
  runner: gpua
  precision: fp8
  framework: vllm
  multinode: false
  scenarios:
    fixed-seq-len:
      - isl: 256
        osl: 32
        search-space:
          - {tp: 1, conc-list: [2, 4]}
"""

RUNNERS = """labels:
  gpua:
    - gpu-a_00
    - gpu-b_00
"""

# the simulator as the script's engine, on the script's $PORT
SIM_CMD = (
    "{python} -m inferbench.cli.main sim serve --host 127.0.0.1 --port $PORT --model $MODEL "
    "--gpu h100 --isl $ISL --osl $OSL --max-model-len $MAX_MODEL_LEN"
)

# what the script starts, unless a test swaps it: vLLM as InferenceX scripts call it
VLLM_CMD = "vllm serve $MODEL --host 0.0.0.0 --port $PORT --tensor-parallel-size $TP " + (
    "--max-num-seqs $BATCH --max-model-len $MAX_MODEL_LEN"
)


def write_tree(root: Path, server_cmd: str = VLLM_CMD, name: str = "llama_fp8_gpua.sh") -> Path:
    """Write the tree under `root`; returns the script's path."""
    files = {
        "benchmarks/benchmark_lib.sh": LIB,
        "runners/launch_gpu-a.sh": LAUNCHER,
        "configs/runners.yaml": RUNNERS,
        "configs/nvidia-master.yaml": MASTER,
        f"benchmarks/single_node/fixed_seq_len/{name}": SCRIPT.replace("{server_cmd}", server_cmd),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root / "benchmarks/single_node/fixed_seq_len" / name
