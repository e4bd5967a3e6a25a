#!/usr/bin/env bash
# Builds the cmip libFuzzer targets with clang (NPAC_FUZZ=ON, ASan+UBSan) and runs them for
# a bounded time over a seed corpus generated from known-good frames.
#   bench/fuzz_cmip.sh [seconds]        default 300 s for the whole inbound path
#   BER_SECONDS=60 bench/fuzz_cmip.sh   also run fuzz_ber (default 0: skipped)
#   API_SECONDS=60 bench/fuzz_cmip.sh   run fuzz_admin_api that long (default 30; 0 skips)
#   SCENARIO_SECONDS=60 bench/fuzz_cmip.sh  run fuzz_scenario (npacctl plan) that long (default 0)
#   CONFIG_SECONDS=60 bench/fuzz_cmip.sh    run fuzz_config_file (npacd --config, with its options' ranges) that long (default 0)
#   BATCH_SECONDS=60 bench/fuzz_cmip.sh     run fuzz_pdu_batch (POST /v1/pdu-batches' body) that long (default 0)
#   DB_URL_SECONDS=60 bench/fuzz_cmip.sh    run fuzz_db_url (--db URL redaction, SQL placeholders) that long (default 0)
#   NOTIFY_SECONDS=60 bench/fuzz_cmip.sh    run fuzz_notification (LISTEN channel and payload) that long (default 0)
#   THROTTLE_SECONDS=60 bench/fuzz_cmip.sh  run fuzz_throttle_exchange (other nodes' throttle reports, throttle-group body) that long (default 0)
# Prints executions and crashes per target; exits non-zero if any crash was found.
set -euo pipefail
SECONDS_TOTAL=${1:-300}
BER_SECONDS=${BER_SECONDS:-0}
API_SECONDS=${API_SECONDS:-30}
SCENARIO_SECONDS=${SCENARIO_SECONDS:-0}
CONFIG_SECONDS=${CONFIG_SECONDS:-0}
BATCH_SECONDS=${BATCH_SECONDS:-0}
DB_URL_SECONDS=${DB_URL_SECONDS:-0}
NOTIFY_SECONDS=${NOTIFY_SECONDS:-0}
THROTTLE_SECONDS=${THROTTLE_SECONDS:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
CORPUS=$ROOT/fuzz-corpus
JOBS=${JOBS:-2}

command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 2; }
cmake -S "$ROOT" -B "$BUILD" -DNPAC_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DNPAC_TESTS=OFF -DNPAC_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target fuzz_upper_layers fuzz_ber fuzz_admin_api fuzz_cmip_seeds \
  $([ "$SCENARIO_SECONDS" -gt 0 ] && echo fuzz_scenario) \
  $([ "$CONFIG_SECONDS" -gt 0 ] && echo fuzz_config_file) \
  $([ "$BATCH_SECONDS" -gt 0 ] && echo fuzz_pdu_batch) \
  $([ "$DB_URL_SECONDS" -gt 0 ] && echo fuzz_db_url) \
  $([ "$NOTIFY_SECONDS" -gt 0 ] && echo fuzz_notification) \
  $([ "$THROTTLE_SECONDS" -gt 0 ] && echo fuzz_throttle_exchange) -j "$JOBS" >/dev/null

mkdir -p "$CORPUS/upper_layers" "$CORPUS/ber" "$CORPUS/admin_api" "$CORPUS/artifacts"
"$BUILD/fuzz/fuzz_cmip_seeds" "$CORPUS/upper_layers" "$CORPUS/ber"
# Admin API seeds: whole HTTP requests, and "target\nbody" inputs (fuzz/admin_api_input.h).
api_seed() { printf '%b' "$2" >"$CORPUS/admin_api/seed-$1"; }
api_seed get-provider 'GET /v1/providers/0001?limit=5 HTTP/1.1\r\nHost: x\r\nX-Npac-Actor: ops\r\n\r\n'
api_seed post-message 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 249\r\n\r\n{"messages":[{"spid":"0001","function":"notifications","operation":"event-report","idempotency_key":"k-1","object_class":"1.3.6.1.4.1.103.7.0.0.1.3","instance":{"dn":[[{"id":"2.5.4.3","value":"13044e504143"}]]},"type":"1.3.6","information":"0400"}]}'
api_seed post-broadcast 'POST /v1/broadcasts HTTP/1.1\r\nHost: x\r\nContent-Length: 248\r\n\r\n{"function":"lsms-data-download","to":["0001","0002"],"operation":"event-report","idempotency_key":"act-1","object_class":"1.3.6.1.4.1.103.7.0.0.1.3","instance":{"dn":[[{"id":"2.5.4.3","value":"13044e504143"}]]},"type":"1.3.6","information":"0400"}'
api_seed broadcast-all '/v1/broadcasts\n{"function":"notifications","to":"all","operation":"delete","object_class":"1.3.6","instance":{"non_specific":"00"}}'
api_seed answer '/v1/inbound/7/response?actor=a%20b\n{"outcome":"error","error_code":"noSuchAction","parameter":"0400"}'
api_seed bad-utf8 '/v1/providers/%ff%c3%28?spid=%ed%a0%80\n{"name":"\xc3"}'

status=0
run() {  # name seconds corpus
  local name=$1 secs=$2 dir=$3 log="$CORPUS/$1.log"
  local before
  before=$(ls "$CORPUS/artifacts" | grep -c "" || true)
  # -rss_limit_mb and -max_len bound the run; -timeout flags a hang as a crash.
  "$BUILD/fuzz/$name" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$CORPUS/artifacts/" "$dir" >"$log" 2>&1 || true
  local execs crashes
  execs=$(grep -aEo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
  crashes=$(( $(ls "$CORPUS/artifacts" | grep -c "" || true) - before ))
  local cov
  cov=$(grep -aEo 'cov: [0-9]+' "$log" | tail -1 || true)
  echo "$name: ${secs}s, executions=$execs, crashes=$crashes, ${cov:-cov: ?}, corpus=$(ls "$dir" | wc -l) files (log: $log)"
  if [ "$crashes" -ne 0 ]; then status=1; fi
}
run fuzz_upper_layers "$SECONDS_TOTAL" "$CORPUS/upper_layers"
if [ "$BER_SECONDS" -gt 0 ]; then run fuzz_ber "$BER_SECONDS" "$CORPUS/ber"; fi
if [ "$API_SECONDS" -gt 0 ]; then run fuzz_admin_api "$API_SECONDS" "$CORPUS/admin_api"; fi
if [ "$SCENARIO_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/scenario" && cp "$ROOT"/docs/examples/*.json "$CORPUS/scenario/"
  run fuzz_scenario "$SCENARIO_SECONDS" "$CORPUS/scenario"
fi
if [ "$CONFIG_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/config_file" && cp "$ROOT"/packaging/npacd.toml "$CORPUS/config_file/"
  # Seeds for what the reader decodes and the ranges it applies (npac/npacd/config_file.h).
  printf 'db = "var/a\\"b\\\\c\\u00e9.db"\nnode = '"'"'n-1'"'"' # literal\n' >"$CORPUS/config_file/seed-strings"
  printf 'api-max-connections = 65_536\napi-operator-reserve = +0\nlog-max-size = 1024\nthreads = 64\n' \
    >"$CORPUS/config_file/seed-numbers"
  printf 'api-max-per-client = -1\nlog-max-files = 99999999999999999999999\n' >"$CORPUS/config_file/seed-out-of-range"
  run fuzz_config_file "$CONFIG_SECONDS" "$CORPUS/config_file"
fi
if [ "$BATCH_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/pdu_batch"
  printf 'NPB10001\x08\x03\x03k-1\x00\x05\xa1\x03\x02\x01\x00' >"$CORPUS/pdu_batch/seed-header"
  run fuzz_pdu_batch "$BATCH_SECONDS" "$CORPUS/pdu_batch"
fi
if [ "$DB_URL_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/db_url"
  printf 'postgresql://npacd:secret@db1:5432/npac?sslmode=verify-full' >"$CORPUS/db_url/seed-url"
  printf "UPDATE t SET a = ? WHERE b = '?' AND c IN (SELECT value FROM json_each(?))" >"$CORPUS/db_url/seed-sql"
  run fuzz_db_url "$DB_URL_SECONDS" "$CORPUS/db_url"
fi
if [ "$NOTIFY_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/notification"
  printf '\017npacd_submitted0001' >"$CORPUS/notification/seed-submitted"
  printf '\015npacd_changedprovider:0001' >"$CORPUS/notification/seed-provider"
  run fuzz_notification "$NOTIFY_SECONDS" "$CORPUS/notification"
fi
if [ "$THROTTLE_SECONDS" -gt 0 ]; then
  mkdir -p "$CORPUS/throttle"
  # Even first byte: reports (limits, then per exchange a count of reports and their fields);
  # odd: a throttle-group body.
  printf '\000\377\020\062\002\001\001a\000\100\100\000\000\000\000\000\000\000\000\000\000\000\000\000\000\012\001\000\000\000\000\000\000\000\000\005' \
    >"$CORPUS/throttle/seed-report"
  printf '\001{"name":"bureau-a","members":["0001","0002"],"max_rate":10000,"max_pending":12000,"onset_1":80,"abatement_1":60,"onset_2":100,"abatement_2":70,"min_abatement_time":"2s","peer_loss_reduction_percent":50}' \
    >"$CORPUS/throttle/seed-body"
  run fuzz_throttle_exchange "$THROTTLE_SECONDS" "$CORPUS/throttle"
fi
exit $status
