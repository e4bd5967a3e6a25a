#!/usr/bin/env bash
# Usage: cluster.sh start|stop|restart|halt|resume|pause|unpause DIR
#
# The throw-away PostgreSQL 15 cluster the test suite runs the db/ stores against
# (CTest fixture npac_pg, tests/CMakeLists.txt). `start` creates a fresh cluster in DIR
# listening on 127.0.0.1 only, on a free port, and writes DIR/port and DIR/url
# (postgresql://postgres@127.0.0.1:PORT/postgres); a cluster left in DIR by an
# interrupted run is stopped and removed first. `stop` stops the server and removes DIR;
# a missing DIR is not an error. `restart` stops a running cluster (fast shutdown: every
# session is disconnected) and starts it again on the same port, as an operator's
# restart of the database server would. `halt` stops the server and keeps the cluster;
# `resume` starts a halted cluster again on its port (a database server that is down for
# a while, then back). `pause` stops the server's processes with SIGSTOP, the postmaster
# first so it forks no new backend: a server that hangs with every connection open, which
# the kernel keeps answering at the TCP level; `unpause` sends them SIGCONT.
#
# initdb and postgres refuse to run as root, so as root every server command runs as the
# `postgres` system user (created by Debian's postgresql-15 package) and DIR belongs to
# it. DIR should sit under /tmp or /dev/shm so that user can reach it.
#
# Environment: PG_BINDIR (default /usr/lib/postgresql/15/bin), PG_START_TIMEOUT and
# PG_STOP_TIMEOUT in seconds (default 60 and 30).
set -euo pipefail

readonly pg_bindir=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
readonly start_timeout=${PG_START_TIMEOUT:-60}
readonly stop_timeout=${PG_STOP_TIMEOUT:-30}
readonly port_attempts=10

die() {
  echo "cluster.sh: $*" >&2
  exit 1
}

usage() {
  echo "usage: cluster.sh start|stop|restart|halt|resume|pause|unpause DIR" >&2
  exit 2
}

[ $# = 2 ] || usage
readonly action=$1
[ -n "$2" ] || usage
case $2 in
  /*) readonly dir=$2 ;;
  *) readonly dir=$PWD/$2 ;;
esac
[ "$dir" != / ] || die "refusing to use / as the cluster directory"
readonly data=$dir/data
readonly server_log=$dir/server.log
readonly initdb_log=$dir/initdb.log
# The server user must be able to enter the working directory (the caller's may be /root).
cd /

[ -x "$pg_bindir/pg_ctl" ] && [ -x "$pg_bindir/initdb" ] ||
  die "no PostgreSQL server programs in $pg_bindir (install postgresql-15, or set PG_BINDIR)"

if [ "$(id -u)" = 0 ]; then
  id postgres >/dev/null 2>&1 ||
    die "running as root but there is no 'postgres' user to run the server (install postgresql-15)"
  as_server() { runuser -u postgres -- "$@"; }
else
  as_server() { "$@"; }
fi

# Stops whatever server runs from $data, if any: fast shutdown (rolls back open
# sessions), then immediate if that does not finish in time.
stop_server() {
  [ -f "$data/postmaster.pid" ] || return 0
  if as_server "$pg_bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_server "$pg_bindir/pg_ctl" -D "$data" stop -m fast -w -t "$stop_timeout" >/dev/null 2>&1 ||
      as_server "$pg_bindir/pg_ctl" -D "$data" stop -m immediate -w -t "$stop_timeout" >/dev/null 2>&1 ||
      die "the server in $data does not stop (see $server_log)"
  fi
}

# The file that marks DIR as made by this script, so a mistyped DIR is never removed.
readonly marker=$dir/npac-test-cluster

remove_dir() {
  [ -e "$dir" ] || return 0
  if [ ! -e "$marker" ] && [ -n "$(ls -A -- "$dir")" ]; then
    die "$dir is not empty and was not made by cluster.sh: not removing it"
  fi
  stop_server
  rm -rf -- "$dir"
}

show_log() {
  if [ -s "$1" ]; then
    echo "---- $1 ----" >&2
    tail -n 50 "$1" >&2
    echo "----" >&2
  fi
}

# A port nothing listens on now, from the dynamic range below the kernel's ephemeral
# ports (32768+), so a client's outgoing connection does not take it meanwhile. Another
# process may still take it before the server binds: start retries then.
pick_port() {
  local port
  for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 12000))
    if [ -z "$(ss -Htln "sport = :$port" 2>/dev/null)" ]; then
      echo "$port"
      return 0
    fi
  done
  echo "$port"
}

start() {
  # An interrupted run (ctest killed) leaves its server running in $dir: start afresh.
  remove_dir
  mkdir -p -- "$dir"
  : >"$marker"
  chmod 755 "$dir"
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$dir"
  fi

  if ! as_server timeout "$start_timeout" "$pg_bindir/initdb" -D "$data" -A trust -U postgres --no-sync \
         -E UTF8 --locale=C.UTF-8 >"$initdb_log" 2>&1; then
    show_log "$initdb_log"
    die "initdb failed in $data"
  fi

  # A test cluster holds nothing worth keeping: fsync and synchronous_commit off make
  # commits cheap, and a crash only loses a cluster the next start recreates anyway.
  # max_connections: npacd opens several connections per node and CTest runs two test
  # processes at once.
  cat >>"$data/postgresql.conf" <<EOF

# tests/pg/cluster.sh
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
include = 'npac_port.conf'
max_connections = 250
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
EOF

  local port attempt
  for attempt in $(seq 1 "$port_attempts"); do
    port=$(pick_port)
    echo "port = $port" | as_server tee "$data/npac_port.conf" >/dev/null
    : >"$server_log"
    chown --reference="$dir" "$server_log"
    if as_server "$pg_bindir/pg_ctl" -D "$data" -l "$server_log" -w -t "$start_timeout" \
         start >/dev/null 2>&1; then
      echo "$port" >"$dir/port"
      echo "postgresql://postgres@127.0.0.1:$port/postgres" >"$dir/url"
      chmod 644 "$dir/port" "$dir/url"
      echo "PostgreSQL test cluster in $dir on 127.0.0.1:$port"
      return 0
    fi
    # A server that did not come up in time may still be starting: take it down.
    stop_server
    if grep -q "Address already in use" "$server_log"; then
      echo "cluster.sh: port $port is taken (attempt $attempt of $port_attempts), trying another" >&2
      continue
    fi
    show_log "$server_log"
    die "the PostgreSQL server in $data did not start"
  done
  show_log "$server_log"
  die "no free port for the PostgreSQL server after $port_attempts attempts"
}

restart() {
  [ -f "$data/postmaster.pid" ] || die "no cluster runs in $dir"
  as_server "$pg_bindir/pg_ctl" -D "$data" -l "$server_log" -w -t "$start_timeout" restart -m fast \
    >/dev/null 2>&1 || { show_log "$server_log"; die "the PostgreSQL server in $data did not restart"; }
}

halt() {
  [ -f "$data/postmaster.pid" ] || die "no cluster runs in $dir"
  stop_server
}

resume() {
  [ -e "$marker" ] && [ -d "$data" ] || die "no cluster in $dir to resume (cluster.sh start makes one)"
  as_server "$pg_bindir/pg_ctl" -D "$data" -l "$server_log" -w -t "$start_timeout" start >/dev/null 2>&1 ||
    { show_log "$server_log"; die "the PostgreSQL server in $data did not start again"; }
}

# The postmaster's pid (the first line of postmaster.pid) and its children's.
server_pids() {
  [ -f "$data/postmaster.pid" ] || die "no cluster runs in $dir"
  local postmaster
  postmaster=$(head -n 1 "$data/postmaster.pid")
  echo "$postmaster"
  pgrep -P "$postmaster" || true
}

pause() {
  local pid
  for pid in $(server_pids); do kill -STOP "$pid"; done
  # A backend forked while the list was read: the postmaster forks no more now.
  for pid in $(server_pids); do kill -STOP "$pid"; done
}

unpause() {
  local pids pid
  pids=$(server_pids)
  # Children first, the postmaster last: it finds its backends running when it runs.
  for pid in $(echo "$pids" | tail -n +2) $(echo "$pids" | head -n 1); do kill -CONT "$pid"; done
}

case $action in
  start) start ;;
  pause) pause ;;
  unpause) unpause ;;
  restart) restart ;;
  halt) halt ;;
  resume) resume ;;
  stop) remove_dir ;;
  *) usage ;;
esac
