#!/usr/bin/env bash
# npacd at scale: PROVIDERS providers × K associations each, bound by one
# npac-provider-farm process (bench/provider_farm.h) with the full OSI handshake and an
# Ed25519-signed bind each (docs/PROTOCOL.md). Prints the binds/s of the bind phase,
# npacd's resident memory before and after (and per bound association), npacd's CPU over
# IDLE_SECONDS with every association bound and idle (µs of CPU per second per
# association), then releases everything. Loopback only, bounded, cleans up after itself.
#
#   bench/scale.sh [PROVIDERS] [K]          (defaults 2500 4; PROVIDERS at most 9999)
#
# Environment: BUILD (build directory, default build), DURABILITY (npacd --durability,
# default full), CONNECT_RATE (binds/s the farm starts, 0 = unpaced, the default),
# CONCURRENT (binds in flight, default 128), IDLE_SECONDS (default 10), FARM_THREADS
# (default 1), NPACD_THREADS (npacd --threads, default 1), KEEP=1 keeps the work
# directory (npacd.log, farm.json, npacd.db).
# Never run by `make test`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
PROVIDERS=${1:-2500}
K=${2:-4}
DURABILITY=${DURABILITY:-full}
CONNECT_RATE=${CONNECT_RATE:-0}
CONCURRENT=${CONCURRENT:-128}
IDLE_SECONDS=${IDLE_SECONDS:-10}
FARM_THREADS=${FARM_THREADS:-1}
BIN=$BUILD/bin
[[ $PROVIDERS =~ ^[0-9]+$ && $PROVIDERS -ge 1 && $PROVIDERS -le 9999 ]] || { echo "PROVIDERS must be 1..9999" >&2; exit 2; }
[[ $K =~ ^[0-9]+$ && $K -ge 1 && $K -le 8 ]] || { echo "K must be 1..8 (max_associations_per_sp is 8 by default)" >&2; exit 2; }
for exe in npacd npac-soa-sim npac-provider-farm; do
  [[ -x $BIN/$exe ]] || { echo "$BIN/$exe is missing: cmake --build $BUILD --target $exe" >&2; exit 2; }
done
TOTAL=$((PROVIDERS * K))

# Both npacd and the farm hold one descriptor per association (docs/OPERATIONS.md
# "Connection limits": well above the associations plus max_unbound_connections plus 64).
NEED_FDS=$((TOTAL + 1024))
HARD=$(ulimit -Hn)
if [[ $HARD != unlimited && $HARD -lt $NEED_FDS ]]; then
  echo "$TOTAL associations need $NEED_FDS descriptors per process; ulimit -Hn is $HARD" >&2; exit 2
fi
ulimit -n "$NEED_FDS"

source "$ROOT/bench/lib.sh"
NPACD_EXE=$BIN/npacd
WORK=$(mktemp -d /tmp/npacd-scale.XXXXXX)
NPACD_PID="" FARM_PID=""
cleanup() {
  [[ -n $FARM_PID ]] && kill -9 "$FARM_PID" 2>/dev/null || true
  [[ -n $NPACD_PID ]] && kill -9 "$NPACD_PID" 2>/dev/null || true
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

NPACD_THREADS=${NPACD_THREADS:-1}
[[ $NPACD_THREADS =~ ^[0-9]+$ && $NPACD_THREADS -ge 1 && $NPACD_THREADS -le 64 ]] || { echo "NPACD_THREADS must be 1..64" >&2; exit 2; }
bench_npacd_start "$WORK" "$DURABILITY" --threads "$NPACD_THREADS" || exit 1
"$BIN/npac-soa-sim" keygen --out "$WORK/sp.pem" --public-out "$WORK/key.pub.pem" >/dev/null

# Provisioning (not timed): one keep-alive connection, three requests per provider; the
# binds in flight must fit max_unbound_connections, or npacd drops the oldest of them.
seq -f '%04g' 1 "$PROVIDERS" >"$WORK/spids.txt"
BENCH_ACTOR=scale bench_provision "$WORK" soa "$([[ $K -gt 1 ]] && echo on || echo off)" \
  "max_unbound_connections=$((CONCURRENT * 2 > 256 ? CONCURRENT * 2 : 256))"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
RSS_BEFORE=$(rss_kib "$NPACD_PID")
B0=$(bench_cpu_ticks "$NPACD_PID")
M0=$(bench_thread_ticks "$NPACD_PID" npacd)

FROM=()
for i in $(seq "$K"); do FROM+=(--from "127.0.0.$((i + 1))"); done
# The hard cap: a bind phase as slow as 20 binds/s (--durability full waits for fsyncs per
# bind: about 45 binds/s measured), plus the idle period and the release.
CAP=$((TOTAL / 20 + IDLE_SECONDS + 120))
"$BIN/npac-provider-farm" --npac "127.0.0.1:$NPACD_LISTEN" --spid-file "$WORK/spids.txt" --key "$WORK/sp.pem" \
  --npac-key "$WORK/npac.pub.pem" --associations "$K" "${FROM[@]}" --connect-rate "$CONNECT_RATE" \
  --concurrent-binds "$CONCURRENT" --threads "$FARM_THREADS" --duration "${CAP}s" \
  --ready-file "$WORK/bound.json" --report "$WORK/farm.json" --log-level warn 2>"$WORK/farm.log" &
FARM_PID=$!
for _ in $(seq $((CAP * 10))); do
  [[ -s $WORK/bound.json ]] && break
  kill -0 "$FARM_PID" 2>/dev/null || break
  sleep 0.1
done
[[ -s $WORK/bound.json ]] || { echo "the farm ended before its bind phase did:" >&2; cat "$WORK/farm.log" >&2; exit 1; }

# What npacd holds with every association bound and idle: it has answered each AARE
# before the farm counts it, so the resident set is read at once.
RSS_AFTER=$(rss_kib "$NPACD_PID")
B1=$(bench_cpu_ticks "$NPACD_PID")
M1=$(bench_thread_ticks "$NPACD_PID" npacd)
# Binds admitted per transaction (npac/npacd/core/bind_queue.h: one commit per batch).
curl -s -f -m 5 -H "Authorization: Bearer $NPACD_TOKEN" "http://127.0.0.1:$NPACD_API/metrics" \
  | grep -E '^npacd_(binds_accepted|bind_commits)_total ' >"$WORK/bind_metrics.txt" || true
grep -E '^(Rss|Pss_Anon|Anonymous)' "/proc/$NPACD_PID/smaps_rollup" >"$WORK/smaps_after.txt" || true
T0=$(bench_cpu_ticks "$NPACD_PID")
sleep "$IDLE_SECONDS"
T1=$(bench_cpu_ticks "$NPACD_PID")
FARM_RSS=$(rss_kib "$FARM_PID")

kill -TERM "$FARM_PID"
FARM_EXIT=0
wait "$FARM_PID" || FARM_EXIT=$?
FARM_PID=""
bench_npacd_stop

python3 - "$WORK" "$PROVIDERS" "$K" "$RSS_BEFORE" "$RSS_AFTER" "$T0" "$T1" "$BENCH_HZ" "$IDLE_SECONDS" "$FARM_RSS" \
  "$FARM_EXIT" "$B0" "$B1" "$DURABILITY" "$M0" "$M1" <<'PY'
import json, sys
work = sys.argv[1]
providers, k, rss0, rss1, t0, t1, hz, idle, farm_rss, farm_exit, b0, b1 = map(int, sys.argv[2:14])
durability = sys.argv[14]
m0, m1 = map(int, sys.argv[15:17])
b = json.load(open(work + "/bound.json"))
f = json.load(open(work + "/farm.json"))
bound = b["binds_ok"]
print("npacd scale: %d providers x %d associations = %d, durability %s" % (providers, k, providers * k, durability))
print("  binds: %d ok, %d refused, %d failed, %d unverified of %d attempts" %
      (bound, b["binds_refused"], b["binds_failed"], b["binds_unverified"], b["bind_attempts"]))
if b["first_refusal"]: print("  first refusal: " + b["first_refusal"])
if b["first_failure"]: print("  first failure: " + b["first_failure"])
print("  bind phase %.2f s = %.0f binds/s (Ed25519, full OSI handshake); bind latency p50 %.1f ms, p99 %.1f ms, max %.1f ms" %
      (b["bind_phase_seconds"], b["binds_per_second"], b["bind_latency_ms"]["p50"], b["bind_latency_ms"]["p99"],
       b["bind_latency_ms"]["max"]))
print("  npacd CPU in the bind phase: %.2f s = %.0f us per bind (the farm: %.0f us per bind)" %
      ((b1 - b0) / hz, 1e6 * (b1 - b0) / hz / bound if bound else 0, 1e6 * f["cpu_seconds"] / bound if bound else 0))
if bound:
    # The core thread (npacd's main thread with --threads 1) decides every bind and serves
    # every provider: its share is what a bind storm costs the others.
    print("  of which the core thread %.0f us per bind" % (1e6 * (m1 - m0) / hz / bound))
m = dict(line.split() for line in open(work + "/bind_metrics.txt") if line.strip())
accepted, commits = float(m.get("npacd_binds_accepted_total", 0)), float(m.get("npacd_bind_commits_total", 0))
if commits:
    print("  bind commits: %d binds admitted in %d transactions = %.1f binds per commit" %
          (accepted, commits, accepted / commits))
per = (rss1 - rss0) / bound if bound else 0
print("  npacd RSS %d KiB before, %d KiB with all bound: %.1f KiB per bound association (target <= 32)" %
      (rss0, rss1, per))
cpu = (t1 - t0) / hz
print("  npacd CPU over %d s idle with all bound: %.3f s = %.2f us/s per association" %
      (idle, cpu, 1e6 * cpu / idle / bound if bound else 0))
print("  farm: RSS %d KiB, CPU %.2f s over %.1f s, exit %d (%s); answered %d, heartbeats %d, ended by npacd %d" %
      (farm_rss, f["cpu_seconds"], f["run_seconds"], farm_exit, f["stop_reason"], f["answered"], f["heartbeats"],
       f["ended_by_peer"]))
PY
