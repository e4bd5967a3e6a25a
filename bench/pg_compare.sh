#!/usr/bin/env bash
# bench/pg_compare.sh [N] [RUNS] — npacd's outbound queue on PostgreSQL against SQLite,
# in one invocation on one machine.
#
# Starts a throw-away PostgreSQL 15 cluster (tests/pg/cluster.sh) and makes it DURABLE
# before anything is measured: that script turns fsync, synchronous_commit and
# full_page_writes off for test speed, so they are set on again with ALTER SYSTEM and the
# server restarted, and SHOW must confirm all three are on. Then, for each of
#   SQLite full, SQLite normal, PostgreSQL full, PostgreSQL normal   (npacd --durability)
# one npacd on a fresh database (an SQLite file, or a database of its own in the
# cluster), ONE provider bound with 4 associations (SRR on, congestion_window 1000)
# answered by npac-provider-farm (npac-soa-sim when the farm is not built, or
# ANSWERER=sim), an untimed warm-up of min(N, 2000), then RUNS closed-loop bursts of N
# confirmed notifications by npacd_loadgen (batches of 1000 over 8 connections, ~300-byte
# PDUs; it reads every acknowledged_at from the same database). One table at the end:
# PDUs/s (median of the runs), submit→ack p50/p99 (medians), npacd CPU µs per PDU, and
# per durability the ratio PostgreSQL/SQLite.
#
# --durability on PostgreSQL is synchronous_commit per npacd session (full: on, normal:
# off; docs/DATABASE.md "PostgreSQL"); on SQLite PRAGMA synchronous FULL / NORMAL in WAL.
#
#   BUILD=build-dir bench/pg_compare.sh [N] [RUNS]   (defaults: build, 20000, 3)
#   ANSWERER=sim; NPACD_EXE another npacd binary; RUN_TIMEOUT (s, each loadgen run,
#   default 180); KEEP_TMP=1 keeps the work directory (the cluster is removed anyway).
# Every wait is bounded; the trap stops npacd, the answerer and the cluster and removes
# the work directory on any exit. Loopback only. Never run by `make test`.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
N=${1:-20000}
RUNS=${2:-3}
case "$N$RUNS" in '' | *[!0-9]*) echo "usage: $0 [N] [RUNS] (positive integers)" >&2; exit 2 ;; esac
[[ $N -gt 0 && $RUNS -gt 0 ]] || { echo "usage: $0 [N] [RUNS] (positive integers)" >&2; exit 2; }
BIN=$BUILD/bin
NPACD_EXE=${NPACD_EXE:-$BIN/npacd}
LOADGEN=$BUILD/bench/npacd_loadgen
FARM=$BIN/npac-provider-farm
CLUSTER=$ROOT/tests/pg/cluster.sh
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
RUN_SECS=${RUN_TIMEOUT:-180}
ANSWERER_CHOICE=${ANSWERER:-farm}
for f in "$NPACD_EXE" "$BIN/npac-soa-sim" "$LOADGEN" "$CLUSTER" "$PG_BINDIR/pg_ctl"; do
  [[ -x $f ]] || { echo "missing $f: build npacd npac-soa-sim npacd_loadgen (npac-provider-farm) in $BUILD (make bench builds the bench ones)" >&2; exit 2; }
done
command -v psql >/dev/null || { echo "missing psql (postgresql-client-15)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/npacd-pgcompare.XXXXXX)
chmod 755 "$WORK"  # the cluster below it runs as the postgres user, who must enter it
PGDIR=$WORK/pg
ROWS=$WORK/rows.tsv  # system  durability  run  rate  p50  p99  npacd_us
: >"$ROWS"
ANSWERER="" NPACD_PID=""
source "$ROOT/bench/lib.sh"
cleanup() {
  [[ -n $ANSWERER ]] && { kill "$ANSWERER" 2>/dev/null; wait "$ANSWERER" 2>/dev/null; }
  bench_npacd_stop
  [[ -d $PGDIR ]] && bash "$CLUSTER" stop "$PGDIR" >/dev/null 2>&1
  [[ ${KEEP_TMP:-0} == 1 ]] && echo "temp files kept in $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM
as_server() { if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pg() { psql "$PGURL" -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }

say "pg_compare: N=$N, runs=$RUNS, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), build $BUILD"

# ---------------------------------------------------------------- the durable cluster
bash "$CLUSTER" start "$PGDIR" >"$WORK/cluster.log" 2>&1 || { cat "$WORK/cluster.log" >&2; exit 1; }
PGURL=$(cat "$PGDIR/url")
for setting in "fsync = on" "synchronous_commit = on" "full_page_writes = on"; do
  pg "ALTER SYSTEM SET $setting" || { echo "ALTER SYSTEM SET $setting failed" >&2; exit 1; }
done
# fsync and full_page_writes take a reload, but a restart is certain for all three.
as_server "$PG_BINDIR/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 60 restart -m fast >/dev/null ||
  { echo "the PostgreSQL server did not restart:" >&2; tail -20 "$PGDIR/server.log" >&2; exit 1; }
for name in fsync synchronous_commit full_page_writes; do
  value=$(pg "SHOW $name")
  [[ $value == on ]] || { echo "PostgreSQL $name is '$value' after the restart, not on: not measuring" >&2; exit 1; }
done
say "PostgreSQL $(pg 'SHOW server_version') on ${PGURL#*@}: fsync=on synchronous_commit=on full_page_writes=on," \
  "shared_buffers=$(pg 'SHOW shared_buffers') wal_sync_method=$(pg 'SHOW wal_sync_method'); data in $PGDIR" \
  "($(df -T "$WORK" | awk 'NR == 2 { print $2 }'), the SQLite files on the same filesystem)"

# ---------------------------------------------------------------- one npacd
if [[ $ANSWERER_CHOICE == sim || ! -x $FARM ]]; then ANSWERER_KIND=npac-soa-sim; else ANSWERER_KIND=npac-provider-farm; fi
api() { curl -s -f -m 10 -H "Authorization: Bearer $NPACD_TOKEN" "$@"; }
# start_answerer: the provider of $DIR/spids.txt binds 4 associations and answers every
# confirmed PDU until stopped; returns once all 4 are bound (at most 60 s).
start_answerer() {
  local tries
  if [[ $ANSWERER_KIND == npac-provider-farm ]]; then
    "$FARM" --npac "127.0.0.1:$NPACD_LISTEN" --spid-file "$DIR/spids.txt" --key "$DIR/key.pem" \
      --npac-key "$DIR/npac.pub.pem" --associations 4 --system-type soa --from 127.0.0.2 --from 127.0.0.3 \
      --from 127.0.0.4 --from 127.0.0.5 --duration 2h --ready-file "$DIR/bound.json" \
      --report "$DIR/answerer.json" --log-level warn >"$DIR/answerer.log" 2>&1 &
  else
    "$BIN/npac-soa-sim" --npac "127.0.0.1:$NPACD_LISTEN" --spid 0001 --key "$DIR/key.pem" \
      --npac-key "$DIR/npac.pub.pem" --system-type soa --from 127.0.0.2 --from 127.0.0.3 --from 127.0.0.4 \
      --from 127.0.0.5 --expect 1 --keep-running --duration 2h --log-level warn --report "$DIR/answerer.json" \
      >"$DIR/answerer.log" 2>&1 &
  fi
  ANSWERER=$!
  for ((tries = 0; tries < 1200; tries++)); do
    [[ $(api "http://127.0.0.1:$NPACD_API/v1/associations" | grep -o '"state":"bound"' | wc -l) -ge 4 ]] && return 0
    kill -0 "$ANSWERER" 2>/dev/null || break
    sleep 0.05
  done
  say "  the 4 associations did not bind:"; tail -5 "$DIR/answerer.log"; return 1
}
stop_all() {
  [[ -n $ANSWERER ]] && { kill "$ANSWERER" 2>/dev/null; wait "$ANSWERER" 2>/dev/null; }
  ANSWERER=""
  bench_npacd_stop
}
# run SYSTEM LABEL RUN N: one loadgen burst; appends a row unless RUN is 0 (warm-up).
run() {
  local system=$1 label=$2 i=$3 n=$4 d0 d1 line
  d0=$(bench_cpu_ticks "$NPACD_PID")
  line=$("$LOADGEN" --api "127.0.0.1:$NPACD_API" --token-file "$DIR/npacd.db.token" --db "$DB" \
    --durability "$DURABILITY" -n "$n" --mode burst --timeout "$RUN_SECS" 2>"$WORK/loadgen.err" | grep '^RESULT ')
  d1=$(bench_cpu_ticks "$NPACD_PID")
  say "  $label run $i: ${line:-no RESULT line} | npacd CPU $(us_per $((d1 - d0)) "$(field n "$line")") us/PDU"
  if [[ $(field ok "$line") != 1 ]]; then
    say "    loadgen said: $(tr '\n' ' ' <"$WORK/loadgen.err")"
    [[ $i == 0 ]] || printf '%s\t%s\t%s\tFAIL\t\t\t\n' "$system" "$DURABILITY" "$i" >>"$ROWS"
    return 1
  fi
  [[ $i == 0 ]] && return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$system" "$DURABILITY" "$i" "$(field rate "$line")" \
    "$(field p50_ms "$line")" "$(field p99_ms "$line")" "$(us_per $((d1 - d0)) "$(field n "$line")")" >>"$ROWS"
}

WARMUP=$((N < 2000 ? N : 2000))
for config in sqlite/full sqlite/normal postgresql/full postgresql/normal; do
  SYSTEM=${config%/*} DURABILITY=${config#*/}
  DIR=$WORK/$SYSTEM-$DURABILITY
  mkdir -p "$DIR"
  if [[ $SYSTEM == postgresql ]]; then
    pg "CREATE DATABASE npacd_$DURABILITY" || { printf '%s\t%s\t1\tFAIL\t\t\t\n' "$SYSTEM" "$DURABILITY" >>"$ROWS"; continue; }
    DB=${PGURL%/*}/npacd_$DURABILITY
    export NPACD_DB=$DB
  else
    DB=$DIR/npacd.db
    unset NPACD_DB
  fi
  say ""; say "== $SYSTEM, npacd --durability $DURABILITY: 1 provider x 4 associations ($ANSWERER_KIND), warm-up $WARMUP, $RUNS runs of $N =="
  if bench_npacd_start "$DIR" "$DURABILITY" &&
    "$BIN/npac-soa-sim" keygen --out "$DIR/key.pem" --public-out "$DIR/key.pub.pem" >/dev/null &&
    echo 0001 >"$DIR/spids.txt" && bench_provision "$DIR" soa on congestion_window=1000 && start_answerer; then
    run "$SYSTEM" warm-up 0 "$WARMUP"
    for ((i = 1; i <= RUNS; i++)); do run "$SYSTEM" "$config" "$i" "$N"; done
  else
    say "  not measured (see above)"
    printf '%s\t%s\t1\tFAIL\t\t\t\n' "$SYSTEM" "$DURABILITY" >>"$ROWS"
  fi
  stop_all
done
unset NPACD_DB

# ---------------------------------------------------------------- the table
say ""; say "== pg_compare (N=$N, $RUNS runs each, $(nproc) CPUs; PDUs/s end to end; CPU in microseconds per PDU) =="
python3 - "$ROWS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
groups = {}
for r in rows:
    groups.setdefault((r[0], r[1]), []).append(r)
def median(vals):
    vals = sorted(vals)
    return vals[(len(vals) - 1) // 2] if vals else None
def col(rs, i):
    return median([float(r[i]) for r in rs if r[3] != "FAIL" and r[i] != ""])
fmt = lambda v, f: "-" if v is None else f % v
print("| engine     | durability | PDU/s (median) | p50 ms | p99 ms | npacd CPU us/PDU | runs ok |")
print("|------------|------------|----------------|--------|--------|------------------|---------|")
med = {}
for system in ("sqlite", "postgresql"):
    for durability in ("full", "normal"):
        rs = groups.get((system, durability), [])
        good = [r for r in rs if r[3] != "FAIL"]
        med[(system, durability)] = col(rs, 3)
        print("| %-10s | %-10s | %14s | %6s | %6s | %16s | %7s |" % (system, durability, fmt(col(rs, 3), "%.0f"),
              fmt(col(rs, 4), "%.1f"), fmt(col(rs, 5), "%.1f"), fmt(col(rs, 6), "%.1f"), "%d/%d" % (len(good), len(rs))))
print()
for durability in ("full", "normal"):
    a, b = med[("postgresql", durability)], med[("sqlite", durability)]
    print("PostgreSQL/SQLite, --durability %-6s: %s" % (durability, "not measured" if not a or not b else "%.2fx" % (a / b)))
print("(p50/p99: submission -> acknowledgement as npacd_loadgen reads acknowledged_at, 1 ms resolution, the"
      " median over the runs; npacd CPU: user+system of the npacd process over the run, per acknowledged PDU)")
PY
