# Start a throwaway PostgreSQL (Debian's packages) on 127.0.0.1 for the results-store
# tests, and export INFERBENCH_TEST_PG_URL. Sourced by .ci/run (as root) after apt has
# installed `postgresql`; also usable by hand: `source .ci/services/10-postgres.sh`,
# then `inferbench_pg_stop` when done. Never touches the distribution's own cluster.

inferbench_pg_start() {
  local bindir port pw run_as
  bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ]; then
    echo "postgres: no PostgreSQL server binaries found (apt-get install postgresql)" >&2
    return 1
  fi
  INFERBENCH_PG_DIR=$(mktemp -d /tmp/inferbench-pg.XXXXXX)
  run_as=()
  if [ "$(id -u)" = 0 ]; then
    # initdb refuses to run as root: hand the throwaway directory to the postgres user.
    chown postgres: "$INFERBENCH_PG_DIR"
    run_as=(runuser -u postgres --)
  fi
  # An ephemeral port: ask the kernel for a free one, then give it to the server.
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  pw=$(python3 -c 'import secrets; print(secrets.token_hex(12))')
  printf '%s\n' "$pw" > "$INFERBENCH_PG_DIR/pw"
  [ "$(id -u)" = 0 ] && chown postgres: "$INFERBENCH_PG_DIR/pw"
  "${run_as[@]}" "$bindir/initdb" -D "$INFERBENCH_PG_DIR/data" -U postgres \
      --auth-local=trust --auth-host=scram-sha-256 --pwfile="$INFERBENCH_PG_DIR/pw" >/dev/null \
    || { echo "postgres: initdb failed" >&2; return 1; }
  "${run_as[@]}" "$bindir/pg_ctl" -D "$INFERBENCH_PG_DIR/data" -l "$INFERBENCH_PG_DIR/server.log" \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $INFERBENCH_PG_DIR -c fsync=off" -w start >/dev/null \
    || { echo "postgres: server did not start; see $INFERBENCH_PG_DIR/server.log" >&2; return 1; }
  "${run_as[@]}" "$bindir/psql" -h "$INFERBENCH_PG_DIR" -p "$port" -U postgres -v ON_ERROR_STOP=1 -q \
      -c "CREATE USER inferbench PASSWORD '$pw'" \
      -c "CREATE DATABASE inferbench_test OWNER inferbench" >/dev/null \
    || { echo "postgres: could not create the test database" >&2; return 1; }
  INFERBENCH_PG_BINDIR=$bindir
  export INFERBENCH_TEST_PG_URL="postgresql+psycopg://inferbench:$pw@127.0.0.1:$port/inferbench_test"
  echo "postgres: test server on 127.0.0.1:$port (data in $INFERBENCH_PG_DIR)"
}

inferbench_pg_stop() {
  [ -n "${INFERBENCH_PG_DIR:-}" ] && [ -d "$INFERBENCH_PG_DIR/data" ] || return 0
  if [ "$(id -u)" = 0 ]; then
    runuser -u postgres -- "$INFERBENCH_PG_BINDIR/pg_ctl" -D "$INFERBENCH_PG_DIR/data" -m fast -w stop >/dev/null
  else
    "$INFERBENCH_PG_BINDIR/pg_ctl" -D "$INFERBENCH_PG_DIR/data" -m fast -w stop >/dev/null
  fi
  rm -rf "$INFERBENCH_PG_DIR"
  unset INFERBENCH_TEST_PG_URL INFERBENCH_PG_DIR
}

if inferbench_pg_start; then
  # Stop the server when the sourcing shell exits, keeping any EXIT trap already set.
  _inferbench_prev_exit=$(trap -p EXIT | sed -e "s/^trap -- '\(.*\)' EXIT$/\1/")
  # shellcheck disable=SC2064
  trap "inferbench_pg_stop; ${_inferbench_prev_exit}" EXIT
else
  unset INFERBENCH_TEST_PG_URL
fi
