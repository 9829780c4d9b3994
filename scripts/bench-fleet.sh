#!/usr/bin/env bash
# Benchmark of `cvo fleet` at scale (issue 33): N simulated clusters served by one
# `cvo sim serve --clusters N` process (assets/demo-cluster each: 33 ClusterOperators), and one
# `cvo fleet -o json --watch` over all of them. Measured from outside, on the fleet process:
#   - memory: VmRSS / RssAnon once every cluster has answered and after the idle window, per
#     cluster (total / N), and the marginal cost per cluster against a fleet of 1 context;
#   - idle CPU: utime+stime ticks over IDLE seconds, as % of one core, total and per cluster;
#   - connections: the fleet's TCP connections to the simulator (per cluster);
#   - latency: K spec.channel changes, each on a random cluster (a PATCH straight to that
#     cluster's API), until the new channel is in a line of the --watch output: min, median,
#     p95, max in ms, measured from the PATCH's answer (and from its start).
# Usage: scripts/bench-fleet.sh [N] [IDLE_SECONDS] [CHANGES]   (defaults 100 60 20)
# Env: CVO_BIN (default target/release/cvo). Needs python3. Prints one line per figure.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
N=${1:-100}
IDLE=${2:-60}
CHANGES=${3:-20}
[ -x "$BIN" ] || { echo "bench-fleet: $BIN is not an executable" >&2; exit 1; }
DIR=$(mktemp -d /tmp/cvo-bench-fleet-XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$DIR"; }
trap cleanup EXIT
export XDG_STATE_HOME="$DIR"

"$BIN" sim serve --clusters "$N" --from assets/demo-cluster --kubeconfig-out "$DIR/kc" \
    >"$DIR/sim.out" 2>"$DIR/sim.err" &
pids+=($!)
until grep -q "cvo sim serving" "$DIR/sim.out" 2>/dev/null; do sleep 0.1; done
echo "sim: $(cat "$DIR/sim.out")"

HZ=$(getconf CLK_TCK)
status() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Baseline: a fleet of one context, for the marginal cost per cluster.
"$BIN" fleet --kubeconfig "$DIR/kc" --contexts cvo-sim-0 -o json --watch >"$DIR/one.jsonl" 2>"$DIR/one.err" &
one=$!
pids+=($one)
until [ -s "$DIR/one.jsonl" ]; do sleep 0.1; done
sleep 5
rss_one=$(status "$one" VmRSS)
kill "$one"

# The fleet of N, its output timestamped line by line by the latency driver below.
mkfifo "$DIR/out"
"$BIN" fleet --kubeconfig "$DIR/kc" -o json --watch >"$DIR/out" 2>"$DIR/fleet.err" &
FLEET=$!
pids+=($FLEET)
python3 - "$DIR" "$N" "$IDLE" "$CHANGES" "$FLEET" "$HZ" "$rss_one" <<'PY'
import json, os, random, socket, ssl, statistics, sys, tempfile, threading, time, base64
import http.client
d, n, idle, changes, pid, hz, rss_one = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])

def status(k):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(k + ":"):
            return int(line.split()[1])
def ticks():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])

# Kubeconfig (YAML) read without a YAML library: the fields sim serve writes, in its order.
import re
text = open(f"{d}/kc").read()
servers = dict(re.findall(r"- name: (cvo-sim-\d+)\n  cluster:\n    server: (\S+)", text))
if not servers:  # field order differs: a looser read
    servers = {}
    for block in text.split("- cluster:")[1:]:
        s = re.search(r"server: (\S+)", block); nm = re.search(r"name: (cvo-sim-\d+)", block)
        if s and nm: servers[nm.group(1)] = s.group(1)
tokens = {}
for block in re.split(r"\n- ", text.split("users:")[1]):
    nm = re.search(r"name: (cvo-sim-\d+)", block); tk = re.search(r"token: (\S+)", block)
    if nm and tk: tokens[nm.group(1)] = tk.group(1)
ca = re.search(r"certificate-authority-data: (\S+)", text).group(1)
cafile = f"{d}/ca.pem"; open(cafile, "wb").write(base64.b64decode(ca))
ctx = ssl.create_default_context(cafile=cafile)
assert len(servers) == n and len(tokens) == n, (len(servers), len(tokens))

lines = []  # (time, set of bench channels seen)
first = threading.Event()
def reader():
    with open(f"{d}/out") as f:
        for line in f:
            t = time.monotonic()
            doc = json.loads(line)
            lines.append((t, {r["context"]: r.get("channel") for r in doc["clusters"]}))
            first.set()
threading.Thread(target=reader, daemon=True).start()
t0 = time.monotonic()
first.wait(120)
rows = lines[0][1]
print(f"first table: {len(rows)} clusters after {time.monotonic() - t0:.2f}s")
time.sleep(10)
rss0, anon0 = status("VmRSS"), status("RssAnon")
fds = os.listdir(f"/proc/{pid}/fd")
socks = sum(1 for fd in fds if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))
k0, w0 = ticks(), time.monotonic()
time.sleep(idle)
k1, w1 = ticks(), time.monotonic()
rss1, anon1 = status("VmRSS"), status("RssAnon")
cpu = (k1 - k0) / hz / (w1 - w0) * 100
print(f"memory: VmRSS {rss1} KiB ({rss1 / n:.0f} KiB per cluster), RssAnon {anon1} KiB; a fleet of 1: {rss_one} KiB; marginal {(rss1 - rss_one) / (n - 1):.0f} KiB per cluster")
print(f"idle CPU over {w1 - w0:.0f}s: {k1 - k0} ticks = {cpu:.3f} % of one core, {cpu / n:.5f} % per cluster")
print(f"sockets: {socks} ({socks / n:.1f} per cluster)")

lat, lat_start = [], []
for i in range(changes):
    c = f"cvo-sim-{random.randrange(n)}"
    ch = f"bench-{i}"
    url = servers[c].rstrip("/").split("//", 1)[1]
    host, port = url.split(":")
    start = time.monotonic()
    conn = http.client.HTTPSConnection(host, int(port), context=ctx, timeout=10)
    conn.request("PATCH", "/apis/config.openshift.io/v1/clusterversions/version",
                 body=json.dumps({"spec": {"channel": ch}}),
                 headers={"Authorization": f"Bearer {tokens[c]}", "Content-Type": "application/merge-patch+json"})
    r = conn.getresponse(); r.read(); conn.close()
    assert r.status == 200, r.status
    answered = time.monotonic()
    seen = None
    while seen is None and time.monotonic() - answered < 5:
        for t, chans in list(lines):
            if chans.get(c) == ch:
                seen = t; break
        time.sleep(0.001)
    assert seen is not None, f"{c} {ch} never seen"
    lat.append((seen - answered) * 1000); lat_start.append((seen - start) * 1000)
    time.sleep(0.3)
lat.sort(); lat_start.sort()
p95 = lambda v: v[min(len(v) - 1, int(round(0.95 * (len(v) - 1))))]
print(f"latency of a change ({changes} changes, ms after the PATCH answered): min {lat[0]:.1f}, median {statistics.median(lat):.1f}, p95 {p95(lat):.1f}, max {lat[-1]:.1f}")
print(f"latency from the PATCH's start (ms): min {lat_start[0]:.1f}, median {statistics.median(lat_start):.1f}, p95 {p95(lat_start):.1f}, max {lat_start[-1]:.1f}")
PY
