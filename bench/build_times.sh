#!/usr/bin/env bash
# The build figures of issue "The house", measured the same way every time, on a fresh
# clone with the compiler cache off (what a fresh machine or a CI run without a cache pays):
#
#   make run     from the clone to a listening npacd (GET /ready answers), in seconds
#   make test    from a second clone: install check, configure, build, every test
#   route edit   in the make-test tree: one route file touched, `cmake --build` again
#
# Usage: bench/build_times.sh [REV] [PARTS]   (REV: default HEAD of this checkout;
#        PARTS: any of "run test edit", default all three)
# Output: one line per part, "<part> <seconds> s", and the logs under $OUT (default
# /tmp/npac-build-times). Nothing else may run on the machine meanwhile: the figures
# are wall times on its cores. Each part stops by itself (make run's npacd is stopped
# once it answers, or after 30 minutes).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-HEAD}
parts=${2:-run test edit}
out=${OUT:-/tmp/npac-build-times}
rm -rf "$out" && mkdir -p "$out"
export CCACHE_DISABLE=1
commit=$(git -C "$here" rev-parse "$rev")
echo "revision $commit, $(nproc) cores, compiler cache off"

clone() {
  git clone -q "$here" "$1" && git -C "$1" checkout -q "$commit"
}

if [[ " $parts " == *" run "* ]]; then
  clone "$out/run"
  start=$(date +%s.%N)
  (cd "$out/run" && exec make run >"$out/run.log" 2>&1) &
  runner=$!
  ready=""
  for _ in $(seq 1 1800); do
    if curl -sf http://127.0.0.1:10180/ready >/dev/null 2>&1; then ready=yes; break; fi
    kill -0 "$runner" 2>/dev/null || break
    sleep 1
  done
  end=$(date +%s.%N)
  # make run starts build/bin/npacd by its relative path: the npacd to stop is the one
  # whose working directory is this clone.
  for pid in $(pgrep -x npacd); do
    [ "$(readlink "/proc/$pid/cwd")" = "$out/run" ] && kill -INT "$pid"
  done
  wait "$runner" 2>/dev/null
  if [ -n "$ready" ]; then
    echo "make run $(echo "$end - $start" | bc | cut -d. -f1) s (to GET /ready)"
  else
    echo "make run failed: see $out/run.log"
  fi
fi

if [[ " $parts " == *" test "* || " $parts " == *" edit "* ]]; then
  clone "$out/test"
fi

if [[ " $parts " == *" test "* ]]; then
  start=$(date +%s)
  (cd "$out/test" && make test >"$out/test.log" 2>&1)
  rc=$?
  echo "make test $(( $(date +%s) - start )) s (exit $rc; $(grep -E 'tests passed|tests failed' "$out/test.log" | tail -1))"
fi

if [[ " $parts " == *" edit "* ]]; then
  [ -d "$out/test/build" ] || (cd "$out/test" && make build >"$out/edit-build.log" 2>&1)
  route=$out/test/npac/npacd/api/token_routes.cc
  echo "// edited" >>"$route"
  start=$(date +%s.%N)
  cmake --build "$out/test/build" -j "$(nproc)" >"$out/edit.log" 2>&1
  rc=$?
  end=$(date +%s.%N)
  echo "route edit $(echo "$end - $start" | bc | cut -d. -f1) s (exit $rc; token_routes.cc, then every target)"
  git -C "$out/test" checkout -q -- npac/npacd/api/token_routes.cc
fi
