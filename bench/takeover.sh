#!/usr/bin/env bash
# bench/takeover.sh [RUNS] — how long a provider is without delivery when the npacd node
# serving it dies: kill -9 of the owner to the first delivery by the other node, as a
# distribution over RUNS runs (default 20). docs/OPERATIONS.md "Two sites".
#
# One throw-away PostgreSQL 15 cluster (tests/pg/cluster.sh). Each run: a fresh database,
# npacd nodes a and b on it (--node a / --node b), provider 0001 provisioned, npac-soa-sim
# bound to a (--npac a --npac b, --rebind-delay $REBIND_DELAY), a feeder submitting one
# confirmed notification every 50 ms through b's API (so the owner a is woken by NOTIFY),
# and once a has delivered some, kill -9 of a. Measured from the kill, by polling b's API
# every 20 ms:
#   bound  — b lists the provider's association (the lease expired, the sim re-bound)
#   first  — b's count of acknowledged messages of 0001 grows: the first delivery by b,
#            answered (the answer adds one loopback round trip to the delivery)
# A summary line per measure: min, p50, p90, max (seconds). The lease is
# provider_lease_timeout (LEASE, default 5s, the tunable's default).
#
#   BUILD=build-dir bench/takeover.sh [RUNS]   LEASE=5s REBIND_DELAY=100ms KEEP_TMP=1
# Every wait is bounded; the trap stops every process and the cluster. Loopback only.
# Never run by `make test`.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
RUNS=${1:-20}
case "$RUNS" in '' | *[!0-9]*) echo "usage: $0 [RUNS] (a positive integer)" >&2; exit 2 ;; esac
[[ $RUNS -gt 0 ]] || { echo "usage: $0 [RUNS] (a positive integer)" >&2; exit 2; }
LEASE=${LEASE:-5s}
REBIND_DELAY=${REBIND_DELAY:-100ms}
BIN=$BUILD/bin
CLUSTER=$ROOT/tests/pg/cluster.sh
for f in "$BIN/npacd" "$BIN/npac-soa-sim" "$CLUSTER"; do
  [[ -x $f ]] || { echo "missing $f: build npacd and npac-soa-sim in $BUILD" >&2; exit 2; }
done
command -v psql >/dev/null || { echo "missing psql (postgresql-client-15)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/npacd-takeover.XXXXXX)
chmod 755 "$WORK"
PGDIR=$WORK/pg
ROWS=$WORK/rows.tsv
: >"$ROWS"
PIDS=()
source "$ROOT/bench/lib.sh"
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  PIDS=()
}
cleanup() {
  stop_all
  [[ -d $PGDIR ]] && bash "$CLUSTER" stop "$PGDIR" >/dev/null 2>&1
  [[ ${KEEP_TMP:-0} == 1 ]] && echo "temp files kept in $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM
pg() { psql "$PGURL" -X -q -t -A -v ON_ERROR_STOP=1 -c "$1"; }
now() { date +%s.%N; }
api() { # port path [curl args…]
  local port=$1 path=$2
  shift 2
  curl -s -m 5 -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" "$@" \
    "http://127.0.0.1:$port$path"
}
associations() { api "$1" /v1/associations | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["associations"]))' 2>/dev/null || echo -1; }
acknowledged() { api "$1" /v1/providers/0001/queue | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["acknowledged"])' 2>/dev/null || echo -1; }

say "takeover: runs=$RUNS, provider_lease_timeout=$LEASE, sim --rebind-delay $REBIND_DELAY, $(nproc) CPUs," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg), build $BUILD"
bash "$CLUSTER" start "$PGDIR" >"$WORK/cluster.log" 2>&1 || { cat "$WORK/cluster.log" >&2; exit 1; }
BASE_URL=$(cat "$PGDIR/url")
PGURL=$BASE_URL
NOTIFICATION='{"spid":"0001","function":"notifications","operation":"event-report","object_class":"1.3.6.1.4.1.103.7.0.0.1.3","instance":{"dn":[[{"id":"2.5.4.3","value":"13044e504143"}]]},"type":"1.3.6.1.4.1.103.7.0.0.5.1","information":"0400"}'

for ((run = 1; run <= RUNS; run++)); do
  DIR=$WORK/run$run
  mkdir -p "$DIR/a" "$DIR/b"
  pg "CREATE DATABASE takeover_$run" || { echo "run $run: CREATE DATABASE failed" >&2; continue; }
  URL=${BASE_URL%/*}/takeover_$run
  read -r A_LISTEN A_API B_LISTEN B_API < <(bench_free_ports 4)
  "$BIN/npacd" --db "$URL" --node a --token-file "$DIR/a/token" --listen "127.0.0.1:$A_LISTEN" \
    --api "127.0.0.1:$A_API" --log-level info >"$DIR/a/npacd.log" 2>&1 &
  A_PID=$!
  PIDS+=("$A_PID")
  for ((t = 0; t < 200; t++)); do [[ -s $DIR/a/token ]] && break; sleep 0.05; done
  [[ -s $DIR/a/token ]] || { echo "run $run: node a did not start" >&2; tail -5 "$DIR/a/npacd.log" >&2; stop_all; continue; }
  TOKEN=$(cat "$DIR/a/token")
  "$BIN/npacd" --db "$URL" --node b --token-file "$DIR/b/token" --listen "127.0.0.1:$B_LISTEN" \
    --api "127.0.0.1:$B_API" --log-level info >"$DIR/b/npacd.log" 2>&1 &
  B_PID=$!
  PIDS+=("$B_PID")
  for ((t = 0; t < 200; t++)); do curl -s -f -o /dev/null -m 1 "http://127.0.0.1:$B_API/health" && break; sleep 0.05; done
  "$BIN/npac-soa-sim" keygen --out "$DIR/key.pem" >/dev/null 2>&1
  api "$A_API" /v1/tunables/provider_lease_timeout -X PUT -d "{\"value\":\"$LEASE\"}" >/dev/null
  api "$A_API" /v1/providers -X POST -d '{"spid":"0001","name":"takeover","system_type":"soa"}' >/dev/null
  python3 -c 'import json,sys; print(json.dumps({"key_list_id":1,"key_id":1,"algorithm":"ed25519","public_key_pem":open(sys.argv[1]).read()}))' \
    "$DIR/key.pem.pub" >"$DIR/key.json"
  api "$A_API" /v1/providers/0001/keys -X POST -d @"$DIR/key.json" >/dev/null
  api "$A_API" /v1/npac-keys/1/1/public | python3 -c 'import json,sys; sys.stdout.write(json.load(sys.stdin)["public_key_pem"])' \
    >"$DIR/npac.pub.pem"
  "$BIN/npac-soa-sim" --npac "127.0.0.1:$A_LISTEN" --npac "127.0.0.1:$B_LISTEN" --spid 0001 --key "$DIR/key.pem" \
    --npac-key "$DIR/npac.pub.pem" --from 127.0.0.2 --functions soa-management,notifications \
    --rebind-attempts 1000 --rebind-delay "$REBIND_DELAY" --duration 120s --log-level warn \
    --report "$DIR/sim.json" >"$DIR/sim.log" 2>&1 &
  PIDS+=("$!")
  for ((t = 0; t < 200; t++)); do [[ $(associations "$A_API") == 1 ]] && break; sleep 0.05; done
  # The feeder: one message every 50 ms through b, bounded (at most 60 s).
  (for ((f = 0; f < 1200; f++)); do
     api "$B_API" /v1/messages -X POST -d "{\"messages\":[$NOTIFICATION]}" >/dev/null
     sleep 0.05
   done) &
  PIDS+=("$!")
  for ((t = 0; t < 200; t++)); do [[ $(acknowledged "$B_API") -ge 20 ]] && break; sleep 0.05; done
  before=$(acknowledged "$B_API")
  if [[ $before -lt 20 ]]; then
    echo "run $run: node a did not deliver (acknowledged $before)" >&2; tail -5 "$DIR/a/npacd.log" >&2; stop_all; continue
  fi
  t0=$(now)
  { kill -KILL "$A_PID"; wait "$A_PID"; } 2>/dev/null
  bound="" first=""
  for ((t = 0; t < 3000; t++)); do
    [[ -z $bound && $(associations "$B_API") -ge 1 ]] && bound=$(now)
    acked=$(acknowledged "$B_API")
    [[ -n $bound && $acked -gt $before ]] && first=$(now)
    [[ -n $first ]] && break
    sleep 0.02
  done
  if [[ -z $first ]]; then
    echo "run $run: no delivery by b within the bound" >&2; tail -5 "$DIR/b/npacd.log" >&2
  else
    awk -v r="$run" -v t0="$t0" -v b="$bound" -v f="$first" 'BEGIN { printf "%d\t%.3f\t%.3f\n", r, b - t0, f - t0 }' >>"$ROWS"
    say "run $run: bound at b $(cut -f2 <(tail -1 "$ROWS")) s, first delivery by b $(cut -f3 <(tail -1 "$ROWS")) s after the kill"
  fi
  stop_all
  pg "DROP DATABASE takeover_$run WITH (FORCE)" >/dev/null
done

say ""
say "kill -9 of the owner → (seconds), over $(wc -l <"$ROWS") run(s):"
for col in 2 3; do
  name=$([[ $col == 2 ]] && echo "bound at the other node  " || echo "first delivery there     ")
  cut -f$col "$ROWS" | sort -n | awk -v name="$name" '
    { v[NR] = $1 }
    END {
      if (NR == 0) { print name ": no run"; exit }
      p50 = v[int((NR + 1) * 0.5)]; p90 = v[int(NR * 0.9) > 0 ? int(NR * 0.9) : 1]
      printf "%s min %.3f  p50 %.3f  p90 %.3f  max %.3f\n", name, v[1], p50, p90, v[NR]
    }'
done
