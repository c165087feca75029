# Install the real `srtctl` from ../shared/upstream/srt-slurm into its own virtual
# environment (outside the repository) and put it on PATH for the conformance suite
# (pytest marker `upstream`) and the srtctl backend tests.
#
# Sourced by .ci/run, or by hand: `source .ci/services/30-srtctl.sh` (or
# `bash .ci/services/30-srtctl.sh`, which prints the venv's interpreter). ../shared is
# read-only in CI, so the sources are copied into a temporary folder before pip builds them.
# The venv lives in a cache folder outside the repository and is rebuilt when the checkout's
# pyproject.toml or schema changes:
#   ${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/inferbench/oracles}/srtctl
# Exports PATH (with the venv's bin), INFERBENCH_SRTCTL (the executable) and
# INFERBENCH_SRTCTL_PYTHON (its interpreter, for tests that use srtctl's own loader).
# Optional: on failure it logs why, exports nothing, and the srtctl tests skip with a reason.

_inferbench_srtctl() {
  local here src cache venv py stamp fingerprint tmp
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  src="$here/../shared/upstream/srt-slurm"
  if [ ! -f "$src/pyproject.toml" ] || [ ! -d "$src/src/srtctl" ]; then
    echo "srtctl: no srt-slurm checkout at ../shared/upstream/srt-slurm" >&2
    return 1
  fi
  cache=${INFERBENCH_ORACLE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/inferbench/oracles}
  venv="$cache/srtctl"
  py="$venv/bin/python"
  fingerprint=$(cat "$src/pyproject.toml" "$src/src/srtctl/core/schema.py" | sha256sum | cut -c1-16)
  stamp="$venv/.inferbench-srt-slurm-$fingerprint"
  if [ -f "$stamp" ] && [ -x "$venv/bin/srtctl" ] && "$py" -c 'import srtctl' >/dev/null 2>&1; then
    echo "srtctl: reusing $venv" >&2
  else
    command -v python3 >/dev/null 2>&1 || { echo "srtctl: no python3" >&2; return 1; }
    mkdir -p "$cache" || { echo "srtctl: cannot create $cache" >&2; return 1; }
    rm -rf "$venv"
    tmp=$(mktemp -d /tmp/inferbench-srtctl-src.XXXXXX)
    # What the wheel is built from: the project metadata and the package sources.
    if ! cp -r "$src/pyproject.toml" "$src/README.md" "$src/LICENSE" "$src/src" "$tmp/"; then
      echo "srtctl: copying the checkout failed" >&2; rm -rf "$tmp"; return 1
    fi
    python3 -m venv "$venv" || { echo "srtctl: venv creation failed" >&2; rm -rf "$tmp"; return 1; }
    if ! "$py" -m pip install --quiet --disable-pip-version-check "$tmp"; then
      echo "srtctl: pip install of the srt-slurm checkout failed" >&2
      rm -rf "$tmp" "$venv"; return 1
    fi
    rm -rf "$tmp"
    touch "$stamp"
    echo "srtctl: built $venv" >&2
  fi
  if ! "$venv/bin/srtctl" --help >/dev/null 2>&1; then
    echo "srtctl: installed, but 'srtctl --help' fails" >&2
    return 1
  fi
  case ":$PATH:" in *":$venv/bin:"*) ;; *) export PATH="$venv/bin:$PATH" ;; esac
  export INFERBENCH_SRTCTL="$venv/bin/srtctl"
  export INFERBENCH_SRTCTL_PYTHON="$py"
  echo "srtctl: INFERBENCH_SRTCTL=$INFERBENCH_SRTCTL (srtctl $("$py" -c 'from importlib.metadata import version; print(version("srtctl"))'))" >&2
}

if _inferbench_srtctl; then
  # Run as a script (not sourced): print the interpreter for the caller to capture.
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then printf '%s\n' "$INFERBENCH_SRTCTL_PYTHON"; fi
else
  unset INFERBENCH_SRTCTL INFERBENCH_SRTCTL_PYTHON
  if [ "${BASH_SOURCE[0]}" = "$0" ]; then exit 1; fi
fi
