#!/usr/bin/env bash
# Measures `cvo demo --registry` against a real local registry: starts Debian's
# `docker-registry` on a random free 127.0.0.1 port with its own storage (in a temp dir,
# removed at the end), runs `cvo demo --headless --until-complete --speed SPEED --registry
# ADDR` RUNS times, and prints for each run: the demo's release-source line (key generation
# time, and time for key + 3 pushes + 3 signatures), the time from start to `update to 4.16.4
# Completed`, the VERIFIED column of 4.16.4, wall time and peak RSS of the whole demo from
# /usr/bin/time -v, and the registry's requests by method during that run (from its log).
#
#   scripts/demo-registry.sh [RUNS]         default RUNS=3
# Env: CVO_BIN (default target/debug/cvo: the key generation check is about a debug build),
#      SPEED (default 20).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/debug/cvo}
RUNS=${1:-3}
SPEED=${SPEED:-20}
[ -x "$BIN" ] || { echo "demo-registry: no $BIN (cargo build first)" >&2; exit 1; }
REG=$(command -v docker-registry || true)
[ -n "$REG" ] || { echo "demo-registry: docker-registry not found (apt-get install docker-registry)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/cvo-demo-registry.XXXXXX)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
ADDR=127.0.0.1:$PORT
cat > "$WORK/config.yml" <<YML
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $WORK/storage
http:
  addr: $ADDR
YML
"$REG" serve "$WORK/config.yml" 2> "$WORK/registry.log" &
REG_PID=$!
trap 'kill $REG_PID 2>/dev/null || true; wait $REG_PID 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 100); do curl -sf "http://$ADDR/v2/" >/dev/null && break; sleep 0.1; done
echo "registry $ADDR, $BIN, speed $SPEED"
for i in $(seq "$RUNS"); do
  before=$(grep -c "response completed" "$WORK/registry.log" || true)
  /usr/bin/time -v -o "$WORK/time.txt" "$BIN" demo --headless --until-complete --speed "$SPEED" \
    --registry "$ADDR" > "$WORK/out.txt" 2> "$WORK/err.txt" || { cat "$WORK/out.txt" "$WORK/err.txt" >&2; exit 1; }
  source=$(grep -o "releases from the registry .*" "$WORK/out.txt" || echo "NOT FROM THE REGISTRY")
  first=$(head -1 "$WORK/out.txt" | cut -c1-12)
  done_at=$(grep "update to 4.16.4 Completed" "$WORK/out.txt" | cut -c1-12)
  verified=$(awk '/^STATE/{t=1;next} t&&$2=="4.16.4"{print $NF; exit}' "$WORK/out.txt")
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/{print $2}' "$WORK/time.txt")
  rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$WORK/time.txt")
  reqs=$(tail -n +"$((before + 1))" "$WORK/registry.log" | grep "response completed" \
    | grep -o 'http.request.method=[A-Z]*' | sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' \
    | sed 's/http.request.method=//g; s/, $//')
  echo "run $i: $source"
  echo "  simulated clock $first -> $done_at Completed (4.16.4 verified: $verified); wall $wall, peak RSS ${rss} kB"
  echo "  registry requests: $reqs"
done
