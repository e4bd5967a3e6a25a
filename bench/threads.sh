#!/usr/bin/env bash
# bench/threads.sh [PROVIDERS] [K] [N] — what `npacd --threads T` buys with many providers.
#
# npacd shards providers over T core event loops, each provider's logical association
# (NANC 353) on exactly one of them, so one provider never uses more than one loop: the
# effect of T shows only with many providers loaded at once. Here PROVIDERS SOA providers
# (default 8) each bind K associations (default 2, SRR on, congestion_window 1000), all
# bound by one npac-provider-farm (bench/provider_farm.h: it answers every confirmed PDU
# as npac-soa-sim does), and npacd_loadgen submits N confirmed notifications (default
# 50,000; POST /v1/messages, batches of 1000 over 8 connections) spread round-robin over
# all the providers (--spids), then waits for every acknowledgement.
#
# For each durability (normal, then full) one npacd per T of THREADS is started and
# bound, each gets an untimed warm-up of min(N, 10000), then RUNS timed runs per T
# alternate between them (1 2, 2 1, 1 2, …) so that drift in the machine's other load
# falls on every T alike; the npacds not being measured sit idle meanwhile. Per run:
# PDUs/s (first submission until the last acknowledgement), submit→ack p50/p99 (from the
# queue's acknowledged_at, 1 ms resolution), and the CPU per PDU of npacd (all threads,
# proc(5) utime + stime before and after), of the farm and of the loadgen. Then one table
# of medians and, per durability, each T's ratio to the first T of THREADS.
#
#   BUILD=build-dir bench/threads.sh [PROVIDERS] [K] [N]   (defaults: build, 8, 2, 50000)
#
# Environment: THREADS ("1 2"), DURABILITIES ("normal full"), RUNS (3), FORMAT (json:
# POST /v1/messages; pdu-batch: the same PDUs already encoded, POST /v1/pdu-batches), WARMUP
# (min(N, 10000); 0 skips it), RUN_TIMEOUT (each loadgen's --timeout, 300 s), FARM_THREADS
# (1), NPACD_EXE (another npacd binary, with this build's tools), KEEP_TMP=1 keeps the
# work directory (logs, databases, the farms' reports). An npacd without --threads is
# measured with THREADS=1 only (the line saying so names it). Loopback only, bounded
# (every wait has a deadline, every process a cap), cleans up after itself. Needs the
# targets npacd npac-soa-sim npac-provider-farm npacd_loadgen. Never run by `make test`.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${BUILD:-$ROOT/build}" && pwd)
PROVIDERS=${1:-8}
K=${2:-2}
N=${3:-50000}
RUNS=${RUNS:-3}
THREADS=${THREADS:-1 2}
DURABILITIES=${DURABILITIES:-normal full}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
FARM_THREADS=${FARM_THREADS:-1}
FORMAT=${FORMAT:-json}
WARMUP=${WARMUP:-$((N < 10000 ? N : 10000))}
BIN=$BUILD/bin
NPACD_EXE=${NPACD_EXE:-$BIN/npacd}
LOADGEN=$BUILD/bench/npacd_loadgen
FARM=$BIN/npac-provider-farm
usage() { echo "usage: $0 [PROVIDERS 1..9999] [K 1..8] [N >= 1]; RUNS >= 1, THREADS and DURABILITIES lists: $1" >&2; exit 2; }
[[ $PROVIDERS =~ ^[0-9]+$ && $PROVIDERS -ge 1 && $PROVIDERS -le 9999 ]] || usage "PROVIDERS '$PROVIDERS'"
[[ $K =~ ^[0-9]+$ && $K -ge 1 && $K -le 8 ]] || usage "K '$K' (max_associations_per_sp is 8 by default)"
[[ $N =~ ^[0-9]+$ && $N -ge 1 ]] || usage "N '$N'"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || usage "RUNS '$RUNS'"
[[ $WARMUP =~ ^[0-9]+$ ]] || usage "WARMUP '$WARMUP'"
for t in $THREADS; do [[ $t =~ ^[0-9]+$ && $t -ge 1 ]] || usage "THREADS '$THREADS'"; done
[[ -n $THREADS && $(tr ' ' '\n' <<<"$THREADS" | grep -c .) == $(tr ' ' '\n' <<<"$THREADS" | grep . | sort -u | wc -l) ]] ||
  usage "THREADS '$THREADS' (each count once)"
[[ $FORMAT == json || $FORMAT == pdu-batch ]] || usage "FORMAT '$FORMAT' (json, pdu-batch)"
for d in $DURABILITIES; do [[ $d == normal || $d == full ]] || usage "DURABILITIES '$DURABILITIES' (normal, full)"; done
for f in "$NPACD_EXE" "$BIN/npac-soa-sim" "$FARM" "$LOADGEN"; do
  [[ -x $f ]] || { echo "missing $f: build the targets npacd npac-soa-sim npac-provider-farm npacd_loadgen in $BUILD (make bench builds the bench ones)" >&2; exit 2; }
done
source "$ROOT/bench/lib.sh"

# Every association is a descriptor in npacd and in the farm ("Connection limits").
ulimit -n $((PROVIDERS * K + 1024)) 2>/dev/null || true
WORK=$(mktemp -d /tmp/npacd-threads.XXXXXX)
ROWS=$WORK/rows.tsv  # durability threads run rate p50 p99 npacd_us farm_us loadgen_us
: >"$ROWS"
declare -A NP_PID NP_DIR NP_API FARM_PID T0
cleanup() {
  local p
  for p in "${FARM_PID[@]}" "${NP_PID[@]}"; do [[ -n $p ]] && kill -9 "$p" 2>/dev/null; done
  for p in "${FARM_PID[@]}" "${NP_PID[@]}"; do [[ -n $p ]] && wait "$p" 2>/dev/null; done
  [[ ${KEEP_TMP:-0} == 1 ]] && echo "work directory kept: $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo interrupted; exit 130' INT TERM
# Each thread's CPU seconds of process $1, largest first: whether T core loops are busy.
thread_secs() {
  local t
  for t in /proc/"$1"/task/*; do awk '{print $14 + $15}' "$t/stat" 2>/dev/null; done |
    sort -rn | awk -v hz="$BENCH_HZ" '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 / hz }'
}

HAS_THREADS=0
"$NPACD_EXE" --help 2>&1 | grep -q -- '--threads' && HAS_THREADS=1
if [[ $HAS_THREADS == 0 && $THREADS != 1 ]]; then
  say "npacd $NPACD_EXE has no --threads: measuring THREADS=1 only (the default, one core loop)"
  THREADS=1
fi
seq -f '%04g' 1 "$PROVIDERS" >"$WORK/spids.txt"
SPIDS=$(paste -sd, "$WORK/spids.txt")
"$BIN/npac-soa-sim" keygen --out "$WORK/key.pem" --public-out "$WORK/key.pub.pem" >/dev/null
FROM=()
for ((j = 0; j < K; j++)); do FROM+=(--from "127.0.0.$((j + 2))"); done
say "threads: $PROVIDERS providers x $K associations, N=$N ($FORMAT), runs=$RUNS, THREADS=\"$THREADS\", $(nproc) CPUs," \
  "load average $(cut -d' ' -f1-3 /proc/loadavg), npacd $NPACD_EXE ($("$NPACD_EXE" --version 2>/dev/null | head -1))"

# start_one DURABILITY T: npacd --threads T on a fresh database, its providers
# provisioned and bound by one farm; returns once the farm says every bind succeeded and
# npacd lists them all bound (at most 60 s).
start_one() {
  local durability=$1 t=$2 dir=$WORK/$1-$2 want=$((PROVIDERS * K)) tries flags=()
  [[ $HAS_THREADS == 1 ]] && flags=(--threads "$t")
  NP_DIR[$t]=$dir
  bench_npacd_start "$dir" "$durability" "${flags[@]}" 2>&1 || return 1
  NP_PID[$t]=$NPACD_PID NP_API[$t]=$NPACD_API
  cp "$WORK/spids.txt" "$WORK/key.pub.pem" "$dir/"
  bench_provision "$dir" soa "$([[ $K -gt 1 ]] && echo on || echo off)" congestion_window=1000 \
    max_unbound_connections=256 || return 1
  "$FARM" --npac "127.0.0.1:$NPACD_LISTEN" --spid-file "$dir/spids.txt" --key "$WORK/key.pem" \
    --npac-key "$dir/npac.pub.pem" --associations "$K" "${FROM[@]}" --system-type soa --threads "$FARM_THREADS" \
    --duration 2h --ready-file "$dir/bound.json" --report "$dir/farm.json" --log-level warn >"$dir/farm.log" 2>&1 &
  FARM_PID[$t]=$!
  for ((tries = 0; tries < 1200; tries++)); do
    if [[ -s $dir/bound.json ]]; then
      local ok
      ok=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["binds_ok"])' "$dir/bound.json")
      [[ $ok == "$want" ]] || { say "  --threads $t: $ok of $want binds succeeded: $(cat "$dir/bound.json")"; return 1; }
      [[ $(curl -s -f -m 10 -H "Authorization: Bearer $NPACD_TOKEN" "http://127.0.0.1:$NPACD_API/v1/associations" |
        grep -o '"state":"bound"' | wc -l) -ge $want ]] && return 0
    fi
    kill -0 "${FARM_PID[$t]}" 2>/dev/null || break
    sleep 0.05
  done
  say "  --threads $t: the $want associations did not bind within 60 s:"; tail -5 "$dir/farm.log"
  return 1
}
# stop_one T: the farm releases its associations (SIGTERM, it writes farm.json), then npacd stops.
stop_one() {
  local t=$1 f
  if [[ -n ${FARM_PID[$t]:-} ]]; then
    kill -TERM "${FARM_PID[$t]}" 2>/dev/null
    wait "${FARM_PID[$t]}" 2>/dev/null
    FARM_PID[$t]=""
  fi
  f=${NP_DIR[$t]}/farm.json
  [[ -s $f ]] && say "  --threads $t: $(python3 -c '
import json, sys
f = json.load(open(sys.argv[1]))
print("the farm answered %d PDUs, %d to %d per provider; %d associations ended by npacd" % (f["answered"],
      f["answered_per_provider"]["min"], f["answered_per_provider"]["max"], f["ended_by_peer"]))' "$f")"
  NPACD_PID=${NP_PID[$t]:-}
  bench_npacd_stop
  NP_PID[$t]=""
  # Anything npacd logged at warn or above (--log-level warn) is worth seeing, but the
  # first start's notice that it created the NPAC key.
  local logged
  logged=$(grep -v 'no usable NPAC key: created' "${NP_DIR[$t]}/npacd.log")
  [[ -n $logged ]] && { say "  --threads $t: npacd logged:"; head -5 <<<"$logged" | sed 's/^/    /'; }
  return 0
}
# run_one DURABILITY T RUN N: one loadgen run against npacd --threads T; appends a row
# (rate FAIL when the run failed) unless RUN is 0 (the warm-up).
run_one() {
  local durability=$1 t=$2 run=$3 n=$4 d0 d1 f0 f1 line label
  label=$([[ $run == 0 ]] && echo warm-up || echo "run $run")
  d0=$(bench_cpu_ticks "${NP_PID[$t]}"); f0=$(bench_cpu_ticks "${FARM_PID[$t]}")
  line=$("$LOADGEN" --api "127.0.0.1:${NP_API[$t]}" --token-file "${NP_DIR[$t]}/npacd.db.token" \
    --db "${NP_DIR[$t]}/npacd.db" --durability "$durability" -n "$n" --timeout "$RUN_TIMEOUT" --mode burst \
    --format "$FORMAT" --spids "$SPIDS" 2>"$WORK/loadgen.err" | grep '^RESULT ')
  d1=$(bench_cpu_ticks "${NP_PID[$t]}"); f1=$(bench_cpu_ticks "${FARM_PID[$t]}")
  say "  --threads $t $label: $(field rate "$line") PDUs/s, p50 $(field p50_ms "$line") ms, p99 $(field p99_ms "$line") ms," \
    "npacd CPU $(us_per $((d1 - d0)) "$n") us/PDU (ok=$(field ok "$line"))"
  if [[ $(field ok "$line") != 1 ]]; then
    say "    ${line:-no RESULT line}"
    say "    loadgen said: $(tr '\n' ' ' <"$WORK/loadgen.err")"
    [[ $run == 0 ]] || printf '%s\t%s\t%s\tFAIL\t\t\t\t\t\n' "$durability" "$t" "$run" >>"$ROWS"
    return 1
  fi
  [[ $run == 0 ]] && return 0
  local done_n; done_n=$(field n "$line")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$durability" "$t" "$run" "$(field rate "$line")" \
    "$(field p50_ms "$line")" "$(field p99_ms "$line")" "$(us_per $((d1 - d0)) "$done_n")" \
    "$(us_per $((f1 - f0)) "$done_n")" \
    "$(awk -v c="$(field loadgen_cpu_s "$line")" -v n="$done_n" 'BEGIN { printf "%.1f", 1e6 * c / n }')" >>"$ROWS"
}

for DURABILITY in $DURABILITIES; do
  say ""; say "== --durability $DURABILITY: npacd --threads ${THREADS// /, }; warm-up $WARMUP, $RUNS runs of $N each =="
  LIVE=()
  for t in $THREADS; do
    if start_one "$DURABILITY" "$t"; then
      LIVE+=("$t")
      [[ $WARMUP -gt 0 ]] && run_one "$DURABILITY" "$t" 0 "$WARMUP"
    else
      printf '%s\t%s\t1\tFAIL\t\t\t\t\t\n' "$DURABILITY" "$t" >>"$ROWS"
      stop_one "$t"
    fi
  done
  for t in "${LIVE[@]}"; do T0[$t]=$(thread_secs "${NP_PID[$t]}"); done
  for ((i = 1; i <= RUNS; i++)); do
    order=("${LIVE[@]}")
    # Every other round runs the T in reverse order, so neither always goes first.
    if ((i % 2 == 0)); then order=(); for ((j = ${#LIVE[@]} - 1; j >= 0; j--)); do order+=("${LIVE[j]}"); done; fi
    for t in "${order[@]}"; do run_one "$DURABILITY" "$t" "$i" "$N"; done
  done
  for t in "${LIVE[@]}"; do
    say "  --threads $t: CPU seconds of each npacd thread, largest first: $(thread_secs "${NP_PID[$t]}")" \
      "(before the timed runs: ${T0[$t]})"
    stop_one "$t"
  done
done

say ""; say "== npacd --threads: $PROVIDERS providers x $K associations, N=$N, medians of $RUNS runs =="
python3 - "$ROWS" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
groups = {}
for r in rows:
    groups.setdefault((r[0], int(r[1])), []).append(r)
def median(vals):
    vals = sorted(vals)
    return vals[(len(vals) - 1) // 2] if vals else None
def col(rs, i):
    return median([float(r[i]) for r in rs if r[i] != ""])
fmt = lambda v, f="%.1f": "-" if v is None else f % v
print("%-7s %-10s %9s %9s %9s %8s %8s %9s %8s %10s %5s" % ("threads", "durability", "PDU/s med", "min", "max",
      "p50 ms", "p99 ms", "npacd us", "farm us", "loadgen us", "runs"))
med = {}
for key in groups:
    rs = groups[key]
    good = [r for r in rs if r[3] != "FAIL"]
    rates = [float(r[3]) for r in good]
    if good:
        med[key] = (median(rates), col(good, 6))
    print("%-7d %-10s %9s %9s %9s %8s %8s %9s %8s %10s %5s" % (key[1], key[0], fmt(median(rates), "%.0f"),
          fmt(min(rates) if rates else None, "%.0f"), fmt(max(rates) if rates else None, "%.0f"), fmt(col(good, 4)),
          fmt(col(good, 5)), fmt(col(good, 6)), fmt(col(good, 7)), fmt(col(good, 8)), "%d/%d" % (len(good), len(rs))))
print("(PDU/s: first submission -> last acknowledgement; p50/p99: submission -> acknowledgement per message,"
      " closed loop, 1 ms resolution; CPU per PDU in us, user + system, all threads: npacd, the farm"
      " answering for every provider, npacd_loadgen; runs: successful/all)")
print()
for d in dict.fromkeys(k[0] for k in groups):
    ts = sorted(t for (dd, t) in groups if dd == d)
    if len(ts) == 1:
        print("--durability %-6s: only --threads %d measured, no ratio" % (d, ts[0]))
    base = (d, ts[0])
    for t in ts[1:]:
        if base in med and (d, t) in med:
            r, c = med[(d, t)][0] / med[base][0], med[(d, t)][1] / med[base][1]
            print("--durability %-6s: %d threads / %d = %.2fx PDUs/s, %.2fx npacd CPU per PDU" % (d, t, ts[0], r, c))
        else:
            gone = [k for k in (base, (d, t)) if k not in med]
            print("--durability %-6s: %d threads / %d: not measured (no successful run with %s)" %
                  (d, t, ts[0], " nor ".join("%d threads" % k[1] for k in gone)))
PY
