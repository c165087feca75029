# Build the virtual environment in which the conformance suite (pytest marker `upstream`)
# runs InferenceX's own tools as oracles: utils/matrix_logic/generate_sweep_configs.py,
# validation.py, utils/process_changelog.py, validate_perf_changelog.py,
# collect_eval_results.py and the agentic post-processing (utils/agentic/aggregation/
# process_agentic_result.py, power_adapter.py, utils/agentic/validation/). They import only
# pydantic, PyYAML and tabulate (the packages InferenceX's own workflows install for them);
# the agentic scripts need nothing beyond the standard library.
#
# Sourced by .ci/run, or by hand: `source .ci/services/25-inferencex-oracle.sh`
# (or `bash .ci/services/25-inferencex-oracle.sh`, which prints the interpreter's path).
# The venv lives in a cache folder outside the repository, reused while it still imports
# its packages:  ${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/inferbench/oracles}/inferencex
# Exports INFERBENCH_INFERENCEX_PYTHON, the path the tests/upstream fixtures read. Optional:
# on failure it logs why, exports nothing, and the oracle tests skip with a reason.

_inferbench_inferencex_oracle() {
  local cache venv py base
  cache=${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/inferbench/oracles}
  venv="$cache/inferencex"
  py="$venv/bin/python"
  if [ -x "$py" ] && "$py" -c 'import pydantic, yaml, tabulate' >/dev/null 2>&1; then
    echo "inferencex-oracle: reusing $venv" >&2
  else
    base=${INFERBENCH_ORACLE_BASE_PYTHON:-python3}
    command -v "$base" >/dev/null 2>&1 || { echo "inferencex-oracle: no $base" >&2; return 1; }
    mkdir -p "$cache" || { echo "inferencex-oracle: cannot create $cache" >&2; return 1; }
    rm -rf "$venv"
    "$base" -m venv "$venv" || { echo "inferencex-oracle: venv creation failed" >&2; return 1; }
    "$py" -m pip install --quiet --disable-pip-version-check 'pydantic>=2' 'pyyaml>=6' 'tabulate>=0.9' \
      || { echo "inferencex-oracle: pip install pydantic pyyaml tabulate failed" >&2; rm -rf "$venv"; return 1; }
    echo "inferencex-oracle: built $venv" >&2
  fi
  export INFERBENCH_INFERENCEX_PYTHON="$py"
  echo "inferencex-oracle: INFERBENCH_INFERENCEX_PYTHON=$py ($("$py" -c 'import pydantic, yaml; print("pydantic", pydantic.VERSION, "PyYAML", yaml.__version__)'))" >&2
}

if _inferbench_inferencex_oracle; then
  # Run as a script (not sourced): print the interpreter for the caller to capture.
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then printf '%s\n' "$INFERBENCH_INFERENCEX_PYTHON"; fi
else
  unset INFERBENCH_INFERENCEX_PYTHON
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit 1; fi
fi
