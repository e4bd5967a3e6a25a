#!/usr/bin/env bash
# The operator's answer time while a reader token floods the admin API with expensive
# reads (issue 24 item 2; docs/API.md "Expensive reads"). npacd gets PROVIDERS providers
# (none bound), ROWS queued notifications spread over them and AUDIT_ROWS audit entries
# (tunable changes), so that GET /metrics and GET /v1/audit-log?limit=10000 cost what they
# cost at that size. Then, for each flood:
#
#   metrics   CONNS keep-alive connections of one reader token, each looping GET /metrics
#   audit     the same looping GET /v1/audit-log?limit=10000
#   events    CONNS event streams of that token (GET /v1/events?interval_ms=200), each
#             read as it comes
#
# an operator asks GET /v1/providers (what `npacctl sp list` asks) every 0.25 s over a new
# connection for FLOOD_SECONDS, and the script prints the operator's answer times (p50,
# p95, max), the flood's answers by status (200, 429, …) and npacd's CPU over the flood —
# and the same operator figures with no flood first (the baseline). Every address is
# 127.0.0.1; every loop is bounded in time; npacd is stopped at the end.
#
#   bench/api_flood.sh [BUILD_DIR]
#
# Environment: PROVIDERS (default 700), ROWS (137000), AUDIT_ROWS (10000), CONNS (32),
# FLOOD_SECONDS (20), FLOODS (which floods, default "metrics audit events"), NPACD_EXE
# (the npacd to measure, default BUILD_DIR/bin/npacd: point it at another build to
# compare), KEEP=1 keeps the work directory.
# Never run by `make test`.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BIN=$BUILD/bin
PROVIDERS=${PROVIDERS:-700}
ROWS=${ROWS:-137000}
AUDIT_ROWS=${AUDIT_ROWS:-10000}
CONNS=${CONNS:-32}
FLOOD_SECONDS=${FLOOD_SECONDS:-20}
FLOODS=${FLOODS:-metrics audit events}
for n in PROVIDERS ROWS AUDIT_ROWS CONNS FLOOD_SECONDS; do
  [[ ${!n} =~ ^[0-9]+$ ]] || { echo "$n must be a whole number" >&2; exit 2; }
done
[[ $PROVIDERS -ge 1 && $PROVIDERS -le 9999 ]] || { echo "PROVIDERS must be 1..9999" >&2; exit 2; }
[[ $CONNS -ge 1 && $CONNS -le 200 ]] || { echo "CONNS must be 1..200" >&2; exit 2; }
[[ $FLOOD_SECONDS -ge 1 && $FLOOD_SECONDS -le 600 ]] || { echo "FLOOD_SECONDS must be 1..600" >&2; exit 2; }

source "$ROOT/bench/lib.sh"
NPACD_EXE=${NPACD_EXE:-$BIN/npacd}
[[ -x $NPACD_EXE ]] || { echo "$NPACD_EXE is missing: cmake --build $BUILD --target npacd" >&2; exit 2; }
WORK=$(mktemp -d /tmp/npacd-api-flood.XXXXXX)
NPACD_PID=""
cleanup() {
  [[ -n $NPACD_PID ]] && kill -9 "$NPACD_PID" 2>/dev/null || true
  if [[ ${KEEP:-0} == 1 ]]; then echo "work directory kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# The per-address connection limit (32 by default) is raised so that the flood's 32
# connections and the operator's, all from 127.0.0.1, measure the thread's work alone
# (docs/API.md "Connection limits" is another bound).
bench_npacd_start "$WORK" normal --api-max-per-client 128 || exit 1
say "npacd $NPACD_EXE (pid $NPACD_PID), API 127.0.0.1:$NPACD_API"

python3 - "$NPACD_API" "$NPACD_TOKEN" "$NPACD_PID" "$PROVIDERS" "$ROWS" "$AUDIT_ROWS" "$CONNS" "$FLOOD_SECONDS" \
  "$BENCH_HZ" "$FLOODS" <<'PY'
import http.client, json, os, sys, threading, time

port, operator = int(sys.argv[1]), sys.argv[2]
pid, providers, rows, audit_rows = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
conns, flood_seconds, hz = int(sys.argv[7]), int(sys.argv[8]), int(sys.argv[9])
floods = sys.argv[10].split()

def connect():
    return http.client.HTTPConnection("127.0.0.1", port, timeout=120)

def call(conn, method, path, token, body=None):
    headers = {"Authorization": "Bearer " + token}
    if body is not None:
        headers["Content-Type"] = "application/json"
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    r = conn.getresponse()
    return r.status, r.read()

def must(conn, method, path, token, body=None):
    status, data = call(conn, method, path, token, body)
    if status >= 300:
        sys.exit("%s %s: %d %s" % (method, path, status, data[:300].decode(errors="replace")))
    return json.loads(data) if data else None

def cpu_ticks():
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (proc(5) fields 14, 15)

setup = connect()
t0 = time.time()
spids = ["%04d" % (i + 1) for i in range(providers)]
for spid in spids:
    must(setup, "POST", "/v1/providers", operator, {"spid": spid, "name": "flood " + spid, "system_type": "soa"})
info = "04024e50"
batch = []
def flush():
    must(setup, "POST", "/v1/messages", operator, {"messages": batch})
    batch.clear()
for i in range(rows):
    batch.append({"spid": spids[i % providers], "function": "notifications", "operation": "event-report",
                  "object_class": "1.3.6.1.4.1.103.7.0.0.1.3",
                  "instance": {"dn": [[{"id": "2.5.4.3", "value": "13044e504143"}]]},
                  "type": "1.3.6.1.4.1.103.7.0.0.5.1", "information": info})
    if len(batch) == 1000:
        flush()
if batch:
    flush()
for i in range(audit_rows):
    must(setup, "PUT", "/v1/tunables/congestion_window", operator, {"value": 100 + i % 2})
reader = must(setup, "POST", "/v1/tokens", operator, {"name": "flood-reader", "role": "reader"})["token"]
# Readers may be bounded by tunables this npacd has; an older npacd has none of them.
setup.close()
print("setup: %d providers, %d queued rows, %d audit rows in %.0f s" % (providers, rows, audit_rows, time.time() - t0))

def sizes():
    c = connect()
    for path in ("/metrics", "/v1/audit-log?limit=10000", "/v1/providers"):
        t = time.perf_counter()
        status, data = call(c, "GET", path, operator)
        print("  GET %-28s %d, %7d bytes, %6.1f ms (operator, alone)" % (path, status, len(data), 1000 * (time.perf_counter() - t)))
    c.close()
sizes()

def operator_times(seconds, stop=None):
    times = []
    end = time.time() + seconds
    while time.time() < end:
        c = connect()
        t = time.perf_counter()
        status, _ = call(c, "GET", "/v1/providers", operator)
        times.append((time.perf_counter() - t, status))
        c.close()
        time.sleep(0.25)
    return times

def show(name, times):
    ok = sorted(t for t, s in times if s == 200)
    other = [s for t, s in times if s != 200]
    if not ok:
        print("%-9s operator: no answer 200 (%s)" % (name, other))
        return
    p = lambda q: ok[min(len(ok) - 1, int(q * len(ok)))]
    print("%-9s operator GET /v1/providers: n=%d p50=%.0f ms p95=%.0f ms max=%.0f ms%s" %
          (name, len(ok), 1000 * p(0.5), 1000 * p(0.95), 1000 * ok[-1],
           " other statuses %s" % other if other else ""))

show("baseline", operator_times(min(5, flood_seconds)))

def flood_process(path, seconds_file, counts_queue):
    # In its own process, so that the flood's threads never hold the measuring one back
    # (Python's interpreter lock).
    stop = threading.Event()
    counts = {}
    lock = threading.Lock()
    def stream():
        # An event stream: one request, then read whatever comes until the flood ends.
        import socket
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n\r\n" % (path, reader)).encode())
        head = b""
        while not stop.is_set():
            try:
                data = s.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            if not head:
                head = data
                status = int(data.split(b" ", 2)[1])
                with lock:
                    counts[status] = counts.get(status, 0) + 1
        s.close()
    def loop():
        if path.startswith("/v1/events"):
            return stream()
        c = connect()
        while not stop.is_set():
            try:
                status, _ = call(c, "GET", path, reader)
            except Exception as e:  # a closed connection: open another one
                status = type(e).__name__
                c.close()
                c = connect()
            with lock:
                counts[status] = counts.get(status, 0) + 1
        c.close()
    threads = [threading.Thread(target=loop) for _ in range(conns)]
    for t in threads:
        t.start()
    while not os.path.exists(seconds_file):
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    counts_queue.put(counts)

def flood(path):
    import multiprocessing, tempfile
    done = tempfile.mktemp(prefix="api-flood-done-")
    q = multiprocessing.Queue()
    worker = multiprocessing.Process(target=flood_process, args=(path, done, q))
    ticks = cpu_ticks()
    start = time.time()
    worker.start()
    time.sleep(1)  # the flood is under way
    times = operator_times(flood_seconds)
    open(done, "w").close()
    counts = q.get(timeout=180)
    worker.join(timeout=60)
    os.unlink(done)
    elapsed = time.time() - start
    cpu = (cpu_ticks() - ticks) / hz / elapsed * 100
    return times, counts, cpu

for name, path in (("metrics", "/metrics"), ("audit", "/v1/audit-log?limit=10000"),
                   ("events", "/v1/events?interval_ms=200")):
    if name not in floods:
        continue
    times, counts, cpu = flood(path)
    show(name, times)
    print("%-9s flood: %d connections of a reader token on GET %s for %d s: %s; npacd CPU %.0f %%" %
          (name, conns, path, flood_seconds, ", ".join("%s x%d" % (k, v) for k, v in sorted(counts.items(), key=str)), cpu))
PY
bench_npacd_stop
