# Start a one-node Slurm (munge, slurmctld, slurmd) on this machine for the `slurm` tests.
# Sourced by .ci/run as root after the Debian packages `slurm-wlm munge` are installed.
# State, spool and logs live in a temporary folder; the node is this host, sized from nproc
# and free. Exports INFERBENCH_SLURM_DIR. Written as a function so `set -e` in the caller
# does not end CI when Slurm cannot start: the slurm tests then skip with a reason.

_inferbench_start_slurm() {
  command -v slurmctld >/dev/null 2>&1 || { echo "slurm: slurmctld not installed" >&2; return 1; }
  command -v munged >/dev/null 2>&1 || { echo "slurm: munged not installed" >&2; return 1; }
  if sinfo -h >/dev/null 2>&1; then
    echo "slurm: already running"; return 0
  fi

  # munge: key owned by munge, mode 0400; runtime folder owned by munge
  if [ ! -s /etc/munge/munge.key ]; then
    mkdir -p /etc/munge
    if command -v mungekey >/dev/null 2>&1; then mungekey -c -f -k /etc/munge/munge.key
    else dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null; fi
  fi
  chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    su -s /bin/sh munge -c /usr/sbin/munged || { echo "slurm: munged failed" >&2; return 1; }
    for _ in $(seq 1 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
  fi

  local dir host cpus mem
  dir=$(mktemp -d /tmp/inferbench-slurm.XXXXXX)
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')
  mkdir -p /etc/slurm
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=inferbench-ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=600
KillWait=5
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  slurmctld || { echo "slurm: slurmctld failed (see $dir/log)" >&2; return 1; }
  slurmd || { echo "slurm: slurmd failed (see $dir/log)" >&2; return 1; }
  for _ in $(seq 1 60); do
    if sinfo -h -o '%T' 2>/dev/null | grep -qx idle; then
      export INFERBENCH_SLURM_DIR="$dir"
      echo "slurm: node $host idle ($cpus CPUs, ${mem} MiB); state in $dir"
      return 0
    fi
    sleep 0.5
  done
  echo "slurm: node never became idle; sinfo says: $(sinfo -h 2>&1)" >&2
  return 1
}

_inferbench_start_slurm
