#!/usr/bin/env bash
# Measures the handover between two `cvo operator start` processes on one Lease: on the
# converged demo cluster (`cvo sim serve --demo`, the demo payload), operator A leads and B
# follows; A is killed with SIGKILL (no Lease release), and the script prints the seconds from
# the kill to B's first write (the simulator's audit log timestamps) and to B's leading
# (`cvo_leader` on its /metrics, polled every 0.2 s).
#
# Usage: scripts/measure-failover.sh [LEASE_SECONDS]
#   LEASE_SECONDS: --lease-duration for both (renew deadline and retry period in upstream's
#   proportions: 10 ⇒ 7.8 s / 1.9 s); `upstream` (the default) passes none, so upstream's
#   137 s / 107 s / 26 s apply and a handover takes up to 137 s + two retry periods.
# Env: CVO_BIN (default target/release/cvo), SIM_BIN (the simulator's cvo, default CVO_BIN;
#      it needs `sim serve --demo`), RESYNC (--resync-interval; default upstream's),
#      KEEP=1 keeps the work directory.
# Needs: bash, curl, python3.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
SIM_BIN=${SIM_BIN:-$BIN}
LEASE=${1:-upstream}
[ -x "$BIN" ] || { echo "measure-failover: $BIN not executable (set CVO_BIN)" >&2; exit 1; }
IMAGE=quay.io/openshift-release-dev/ocp-release@sha256:32dcf759cde27a222fb983364eb95ce93be6acfd33de9210390b1c2f2bd6a9c2
D=$(mktemp -d /tmp/cvo-measure-failover.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
  [ "${KEEP:-0}" = 1 ] && echo "work directory: $D" || rm -rf "$D"
}
trap cleanup EXIT

"$SIM_BIN" sim serve --demo --kubeconfig-out "$D/kc" --audit-log "$D/audit.log" >"$D/sim.out" 2>"$D/sim.err" &
PIDS+=($!)
for _ in $(seq 100); do grep -q serving "$D/sim.out" 2>/dev/null && break; sleep 0.1; done
grep -q serving "$D/sim.out" || { echo "measure-failover: sim did not start" >&2; exit 1; }

ARGS=(operator start --release-image "$IMAGE" --payload assets/payloads/4.16.3
      --kubeconfig "$D/kc" --listen 127.0.0.1:0 --insecure-http --metrics-auth=none)
[ "$LEASE" != upstream ] && ARGS+=(--lease-duration "$LEASE")
[ -n "${RESYNC:-}" ] && ARGS+=(--resync-interval "$RESYNC")
start_op() { # name → pid in OP_PID, URL in OP_URL
  KUBECONFIG= "$BIN" "${ARGS[@]}" >"$D/$1.out" 2>"$D/$1.err" &
  OP_PID=$!; PIDS+=("$OP_PID")
  for _ in $(seq 300); do grep -q serving "$D/$1.out" 2>/dev/null && break; sleep 0.1; done
  OP_URL=$(sed -n 's/^cvo operator serving //p' "$D/$1.out")
  [ -n "$OP_URL" ] || { echo "measure-failover: operator $1 did not start" >&2; exit 1; }
}
metric() { curl -sf "$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }
wait_metric() { # url name value timeout_s
  local t=0
  until [ "$(metric "$1" "$2" || true)" = "$3" ]; do
    sleep 0.2; t=$((t + 1))
    [ "$t" -lt $(($4 * 5)) ] || { echo "measure-failover: $2 != $3 on $1 after $4 s" >&2; exit 1; }
  done
}

start_op a; A_PID=$OP_PID; A_URL=$OP_URL
wait_metric "$A_URL" cvo_leader 1 60
start_op b; B_PID=$OP_PID; B_URL=$OP_URL
# B is ready once it knows the holder; let both run a moment (A renews, B watches).
for _ in $(seq 300); do curl -sf "$B_URL/readyz" >/dev/null && break; sleep 0.2; done
sleep 5
[ "$(metric "$B_URL" cvo_leader)" = 0 ] || { echo "measure-failover: B leads before the kill" >&2; exit 1; }

KILLED=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
K0=$(date +%s.%N)
kill -9 "$A_PID"; wait "$A_PID" 2>/dev/null || true
LIMIT=$([ "$LEASE" = upstream ] && echo 400 || echo $((LEASE * 4 + 30)))
wait_metric "$B_URL" cvo_leader 1 "$LIMIT"
K1=$(date +%s.%N)
sleep 2
echo "binary: $BIN; lease: $LEASE"
awk -v a="$K0" -v b="$K1" 'BEGIN { printf "B leads (cvo_leader 1): %.2f s after kill -9 of A\n", b - a }'
python3 - "$D/audit.log" "$KILLED" <<'EOF'
import json, sys
from datetime import datetime
log, killed = sys.argv[1], sys.argv[2]
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
k = t(killed)
writes = [e for e in map(json.loads, open(log))
          if e["verb"] in ("create", "update", "patch", "delete") and t(e["time"]) > k]
if not writes:
    sys.exit("measure-failover: no write after the kill")
first = writes[0]
print(f"first write after the kill: {(t(first['time']) - k).total_seconds():.2f} s "
      f"({first['verb']} {first['path']} -> {first['status']})")
other = next((e for e in writes if "/leases/" not in e["path"]), None)
if other:
    print(f"first write other than the Lease: {(t(other['time']) - k).total_seconds():.2f} s "
          f"({other['verb']} {other['path']} -> {other['status']})")
else:
    print("first write other than the Lease: none (a converged cluster needs none)")
EOF
