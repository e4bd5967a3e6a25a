# bench/lib.sh — what the load scripts (bench/compare.sh, bench/scale.sh,
# bench/threads.sh) each need around one npacd: free loopback ports, npacd started on a
# fresh database in a work directory and waited for, its token read, its providers
# provisioned through the admin API, its CPU time read from /proc, and npacd stopped.
# Sourced, never run; it sets no shell options (it works under set -eu too) and installs
# no trap: the caller's cleanup stops what it started (NPACD_PID names the npacd of
# bench_npacd_start).
#
#   NPACD_EXE     the npacd binary (the caller sets it; default $BIN/npacd)
#   BENCH_ACTOR   when set, the "actor" of every provisioning request (the audit log's)
#   NPACD_DB      when set, bench_npacd_start's --db (e.g. a postgresql:// URL)
#
# Loopback only: every address here is 127.0.0.1.

BENCH_HZ=$(getconf CLK_TCK)

# say TEXT…: one line of output. field KEY LINE: the value of KEY=value in LINE (a RESULT
# line of npacd_loadgen or the peers), or nothing. us_per TICKS N: CPU ticks as µs per item.
say() { printf '%s\n' "$*"; }
field() { # key line -> value of key=value in line, or empty
  local l=" $2 "
  [[ $l == *" $1="* ]] || return 0
  l=${l#* "$1"=}
  printf '%s' "${l%% *}"
}
us_per() { awk -v t="$1" -v n="$2" -v hz="$BENCH_HZ" 'BEGIN { if (n > 0) printf "%.1f", 1e6 * t / hz / n }'; }

# bench_free_ports N: N distinct free TCP ports on 127.0.0.1, on one line. The sockets
# are held together until all are bound, so the N ports differ.
bench_free_ports() {
  python3 -c '
import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' "$1"
}

# bench_cpu_ticks PID: user + system CPU time of PID in clock ticks (proc(5) stat fields
# 14 and 15, every thread of the process); 0 when PID is gone or empty.
bench_cpu_ticks() {
  awk '{print $14 + $15}' "/proc/${1:-0}/stat" 2>/dev/null || echo 0
}

# bench_thread_ticks PID NAME: user + system CPU time, in clock ticks, of PID's threads
# named NAME (proc(5) /proc/PID/task/TID/stat; a thread's name is its comm, e.g. npacd's
# main thread "npacd", which runs the core with --threads 1); 0 when there are none.
bench_thread_ticks() {
  local total=0 stat rest name ticks
  for stat in /proc/"${1:-0}"/task/*/stat; do
    [[ -r $stat ]] || continue
    rest=$(<"$stat") || continue
    name=${rest#*(}; name=${name%%)*}
    [[ $name == "$2" ]] || continue
    ticks=$(awk '{sub(/^.*\) /, ""); print $12 + $13}' <<<"$rest")
    total=$((total + ticks))
  done
  echo "$total"
}

# bench_npacd_start DIR DURABILITY [npacd flag…]: npacd on a fresh database DIR/npacd.db
# (log DIR/npacd.log, --log-level warn) with the association listener and the admin API
# on free loopback ports. Returns once /health answers and DIR/npacd.db.token is written
# (at most 10 s), setting NPACD_PID, NPACD_LISTEN, NPACD_API (ports) and NPACD_TOKEN.
# When npacd exits or does not start in time: stops it, prints the log's tail on stderr,
# returns 1.
bench_npacd_start() {
  local dir=$1 durability=$2 tries
  shift 2
  mkdir -p "$dir"
  read -r NPACD_LISTEN NPACD_API < <(bench_free_ports 2)
  # NPACD_DB (a postgresql:// URL): that database instead of DIR/npacd.db, the token
  # still written to DIR/npacd.db.token.
  local db=(--db "$dir/npacd.db")
  [[ -z ${NPACD_DB:-} ]] || db=(--db "$NPACD_DB" --token-file "$dir/npacd.db.token")
  "${NPACD_EXE:-$BIN/npacd}" "${db[@]}" --listen "127.0.0.1:$NPACD_LISTEN" \
    --api "127.0.0.1:$NPACD_API" --durability "$durability" --log-level warn "$@" >"$dir/npacd.log" 2>&1 &
  NPACD_PID=$!
  NPACD_TOKEN=""
  for ((tries = 0; tries < 200; tries++)); do
    if [[ -s $dir/npacd.db.token ]] && curl -s -f -o /dev/null -m 1 "http://127.0.0.1:$NPACD_API/health"; then
      NPACD_TOKEN=$(cat "$dir/npacd.db.token")
      return 0
    fi
    kill -0 "$NPACD_PID" 2>/dev/null || break
    sleep 0.05
  done
  echo "npacd did not start (within 10 s, or it exited); the end of $dir/npacd.log:" >&2
  tail -5 "$dir/npacd.log" >&2
  bench_npacd_stop
  return 1
}

# bench_npacd_stop: SIGTERM to NPACD_PID (npacd drains, releases every association and
# commits the queue), SIGKILL if it is still there after 30 s; clears NPACD_PID.
bench_npacd_stop() {
  local tries
  [[ -n ${NPACD_PID:-} ]] || return 0
  kill -TERM "$NPACD_PID" 2>/dev/null || true
  for ((tries = 0; tries < 300; tries++)); do
    kill -0 "$NPACD_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$NPACD_PID" 2>/dev/null || true
  wait "$NPACD_PID" 2>/dev/null || true
  NPACD_PID=""
  return 0
}

# bench_provision DIR SYSTEM_TYPE SRR [TUNABLE=VALUE…]: over one keep-alive connection
# to the npacd of bench_npacd_start, sets each global tunable given, then provisions
# every SPID of DIR/spids.txt (one a line) as a SYSTEM_TYPE provider with the public key
# DIR/key.pub.pem as key list 1 key 1 (Ed25519), SRR on or off (NANC 353); writes the
# NPAC's public key 1/1 to DIR/npac.pub.pem. Returns non-zero with the refused request on
# stderr when npacd refuses one.
bench_provision() {
  python3 - "$NPACD_API" "$1" "$2" "$3" "${BENCH_ACTOR:-}" "${@:4}" <<'PY'
import http.client, json, sys
port, work, system_type, srr, actor, tunables = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4] == "on", sys.argv[5], sys.argv[6:]
token = open(work + "/npacd.db.token").read().strip()
pem = open(work + "/key.pub.pem").read()
spids = [l.strip() for l in open(work + "/spids.txt") if l.strip()]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
def call(method, path, body=None):
    if body is not None and actor:
        body["actor"] = actor
    conn.request(method, path, body=None if body is None else json.dumps(body),
                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    if r.status >= 300:
        sys.exit("%s %s: %d %s" % (method, path, r.status, data.decode(errors="replace")))
    return json.loads(data) if data else None
for t in tunables:
    name, value = t.split("=", 1)
    call("PUT", "/v1/tunables/" + name, {"value": int(value)})
for spid in spids:
    call("POST", "/v1/providers", {"spid": spid, "name": "bench " + spid, "system_type": system_type})
    call("POST", "/v1/providers/%s/keys" % spid,
         {"key_list_id": 1, "key_id": 1, "algorithm": "ed25519", "public_key_pem": pem})
    if srr:
        call("PUT", "/v1/providers/%s/srr" % spid, {"on": True})
open(work + "/npac.pub.pem", "w").write(call("GET", "/v1/npac-keys/1/1/public")["public_key_pem"])
PY
}
