#!/usr/bin/env bash
# Builds the admin API's HTTP libFuzzer targets with clang (NPAC_FUZZ=ON, ASan+UBSan) and
# runs them for a bounded time over seed requests (fuzz/http_framing_input.h,
# fuzz/admin_api_input.h):
#   bench/fuzz_http.sh [seconds]          fuzz_http_framing that long (default 120 s): raw bytes on
#                                         one connection, request after request through the framing
#                                         checks (Transfer-Encoding, Content-Length, Host, Authorization)
#   API_SECONDS=60 bench/fuzz_http.sh     also fuzz_admin_api that long (default 0: skipped; bench/fuzz_cmip.sh runs it too)
# Prints executions and crashes per target; exits non-zero if any crash was found.
set -euo pipefail
FRAMING_SECONDS=${1:-120}
API_SECONDS=${API_SECONDS:-0}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
CORPUS=$ROOT/fuzz-corpus
JOBS=${JOBS:-2}

command -v clang++ >/dev/null || { echo "clang++ not found (apt-get install clang)"; exit 2; }
cmake -S "$ROOT" -B "$BUILD" -DNPAC_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ \
  -DNPAC_TESTS=OFF -DNPAC_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$BUILD" --target fuzz_http_framing $([ "$API_SECONDS" -gt 0 ] && echo fuzz_admin_api) \
  -j "$JOBS" >/dev/null

mkdir -p "$CORPUS/http_framing" "$CORPUS/admin_api" "$CORPUS/artifacts"
# Seeds: pipelined requests framed every way a client may, and the smuggling attempts of
# issue 24 (a body after a Transfer-Encoding npacd does not take).
seed() { printf '%b' "$2" >"$CORPUS/http_framing/seed-$1"; }
seed two-gets 'GET /v1/providers HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer npac_x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n'
seed length 'POST /v1/providers HTTP/1.1\r\nHost: x\r\nContent-Length: 13\r\n\r\n{"spid":"1"}\nGET / HTTP/1.0\r\n\r\n'
seed chunked 'POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n'
seed te-gzip 'POST /v1/providers HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\nGET /v1/whoami HTTP/1.1\r\nHost: x\r\n\r\n'
seed te-chunked-gzip 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\nGET /s HTTP/1.1\r\nHost: x\r\n\r\n'
seed te-split 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed te-cl 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\nContent-Length: 4\r\n\r\nGET /'
seed http10-te 'POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
seed no-host 'GET / HTTP/1.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n'

status=0
run() {  # name seconds corpus
  local name=$1 secs=$2 dir=$3 log="$CORPUS/$1.log"
  local before
  before=$(ls "$CORPUS/artifacts" | grep -c "" || true)
  # -rss_limit_mb and -max_len bound the run; -timeout flags a hang as a crash.
  "$BUILD/fuzz/$name" -max_total_time="$secs" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$CORPUS/artifacts/" "$dir" >"$log" 2>&1 || true
  local execs crashes cov
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
  crashes=$(( $(ls "$CORPUS/artifacts" | grep -c "" || true) - before ))
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
  echo "$name: ${secs}s, executions=$execs, crashes=$crashes, ${cov:-cov: ?}, corpus=$(ls "$dir" | wc -l) files (log: $log)"
  if [ "$crashes" -ne 0 ]; then status=1; fi
}
run fuzz_http_framing "$FRAMING_SECONDS" "$CORPUS/http_framing"
if [ "$API_SECONDS" -gt 0 ]; then run fuzz_admin_api "$API_SECONDS" "$CORPUS/admin_api"; fi
exit $status
