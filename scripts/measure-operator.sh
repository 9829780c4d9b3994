#!/usr/bin/env bash
# Measures `cvo operator start` from outside on the converged demo cluster: `cvo sim serve
# --demo` (4.16.3, every workload of the payload present) and the operator with the demo
# payload (assets/payloads/4.16.3) as that release's image. It waits until the operator has
# finished CONVERGE_PASSES passes (default 2), then samples the operator over WINDOW seconds:
# VmRSS every SAMPLE seconds and VmHWM (peak) from /proc/PID/status, CPU as utime+stime
# ticks from /proc/PID/stat. Then it counts, from the simulator's audit log, the requests and
# the writes (create/update/patch/delete) in the window, per pass.
#
# Usage: scripts/measure-operator.sh [WINDOW_SECONDS]      (default 600)
# Env:   CVO_BIN (default target/release/cvo), SIM_BIN (the simulator's cvo, default CVO_BIN;
#        it needs `sim serve --demo`), RESYNC (seconds between passes; default
#        upstream's, random in [120, 240)), LEASE (--lease-duration; default upstream's 137),
#        SAMPLE (seconds between RSS samples, default 10), KEEP=1 keeps the work directory.
# Prints one line per figure. Needs: bash, awk, python3 (audit log), curl.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
SIM_BIN=${SIM_BIN:-$BIN}
WINDOW=${1:-600}
SAMPLE=${SAMPLE:-10}
CONVERGE_PASSES=${CONVERGE_PASSES:-2}
[ -x "$BIN" ] || { echo "measure-operator: $BIN not executable (set CVO_BIN)" >&2; exit 1; }
IMAGE=quay.io/openshift-release-dev/ocp-release@sha256:32dcf759cde27a222fb983364eb95ce93be6acfd33de9210390b1c2f2bd6a9c2
D=$(mktemp -d /tmp/cvo-measure-op.XXXXXX)
SIM=; OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null && wait "$OP" 2>/dev/null
  [ -n "$SIM" ] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null
  [ "${KEEP:-0}" = 1 ] && echo "work directory: $D" || rm -rf "$D"
}
trap cleanup EXIT

"$SIM_BIN" sim serve --demo --kubeconfig-out "$D/kc" --audit-log "$D/audit.log" >"$D/sim.out" 2>"$D/sim.err" &
SIM=$!
for _ in $(seq 100); do grep -q serving "$D/sim.out" 2>/dev/null && break; sleep 0.1; done
grep -q serving "$D/sim.out" || { echo "measure-operator: sim did not start: $(cat "$D/sim.err")" >&2; exit 1; }

ARGS=(operator start --release-image "$IMAGE" --payload assets/payloads/4.16.3
      --kubeconfig "$D/kc" --listen 127.0.0.1:0 --insecure-http --metrics-auth=none)
[ -n "${RESYNC:-}" ] && ARGS+=(--resync-interval "$RESYNC")
[ -n "${LEASE:-}" ] && ARGS+=(--lease-duration "$LEASE")
KUBECONFIG= "$BIN" "${ARGS[@]}" >"$D/op.out" 2>"$D/op.err" &
OP=$!
for _ in $(seq 300); do grep -q serving "$D/op.out" 2>/dev/null && break; sleep 0.1; done
URL=$(sed -n 's/^cvo operator serving //p' "$D/op.out")
[ -n "$URL" ] || { echo "measure-operator: operator did not start: $(tail -3 "$D/op.err")" >&2; exit 1; }
metric() { curl -sf "$URL/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }

T0=$(date +%s)
until [ "$(metric cvo_passes_total || echo 0)" -ge "$CONVERGE_PASSES" ] 2>/dev/null; do
  kill -0 "$OP" 2>/dev/null || { echo "measure-operator: operator exited: $(tail -3 "$D/op.err")" >&2; exit 1; }
  sleep 1
done
echo "converged: $CONVERGE_PASSES passes finished $(( $(date +%s) - T0 )) s after start"

HZ=$(getconf CLK_TCK)
ticks() { awk '{ print $14 + $15 }' "/proc/$OP/stat"; }
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$OP/status"; }
P0=$(metric cvo_passes_total)
START=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
C0=$(ticks); E=0; MIN=; MAX=0; SUM=0; N=0
while [ "$E" -lt "$WINDOW" ]; do
  sleep "$SAMPLE"; E=$((E + SAMPLE))
  R=$(rss); SUM=$((SUM + R)); N=$((N + 1))
  [ -z "$MIN" ] || [ "$R" -lt "$MIN" ] && MIN=$R
  [ "$R" -gt "$MAX" ] && MAX=$R
done
C1=$(ticks)
END=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
P1=$(metric cvo_passes_total)
HWM=$(awk '/^VmHWM/ { print $2 }' "/proc/$OP/status")
SPLIT=$(awk '/^RssAnon|^RssFile/ { printf "%s %s KiB  ", $1, $2 }' "/proc/$OP/status")
echo "binary: $BIN"
echo "peak RSS (VmHWM, whole run): $HWM KiB"
echo "at the end: $SPLIT(anon: heap and stacks; file: the mapped binary)"
echo "converged RSS over ${WINDOW}s: min $MIN, mean $((SUM / N)), max $MAX KiB ($N samples)"
awk -v t="$((C1 - C0))" -v hz="$HZ" -v s="$WINDOW" \
  'BEGIN { printf "CPU over %ds: %.3f%% of one core (%d ticks)\n", s, 100 * t / hz / s, t }'
python3 - "$D/audit.log" "$START" "$END" "$((P1 - P0))" <<'EOF'
import json, sys, collections
log, start, end, passes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
req, writes = 0, collections.Counter()
for line in open(log):
    e = json.loads(line)
    if not (start <= e["time"] <= end):
        continue
    req += 1
    if e["verb"] in ("create", "update", "patch", "delete"):
        what = "Lease" if "/leases/" in e["path"] else "Event" if "/events" in e["path"] else e["path"]
        writes[(e["verb"], what, e["status"])] += 1
per = lambda n: f"{n / passes:.1f}" if passes else "n/a"
print(f"passes in the window: {passes}")
print(f"requests in the window: {req} ({per(req)} per pass)")
total = sum(writes.values())
objects = sum(n for (v, what, c), n in writes.items() if what not in ("Lease", "Event"))
print(f"writes in the window: {total} ({per(total)} per pass); object writes (not Lease/Event): {objects} ({per(objects)} per pass)")
for (v, what, c), n in sorted(writes.items(), key=lambda x: -x[1]):
    print(f"  {n:6d} {v} {what} -> {c}")
EOF
