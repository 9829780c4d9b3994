#!/usr/bin/env bash
# End-to-end: `cvo` with no subcommand opens the dashboard on a kubeconfig context and drives
# the embedded engine against `cvo sim serve` (with an audit log), in a real terminal (tmux).
#
# 1. A small payload (a namespace, two ConfigMaps) is applied with `cvo reconcile --once`: the
#    cluster is converged and its ClusterVersion names the payload.
# 2. `cvo --kubeconfig K --context cvo-sim`: the engine is watch-only; the sync panel says
#    "3 of 3 manifests in sync"; no write in the audit log.
# 3. A ConfigMap is edited behind the dashboard's back; the engine re-checks on the watch
#    event, without `r`; the Drift tab (8) shows the field diff `.data.key: "edited" →
#    "payload"`; still no write.
# 4. A foreign live Lease is written; the header shows its holder without a key (the Lease is
#    followed live); `m` shows it and the refusal (how to scale the in-cluster CVO down) and
#    offers no `y`; `y` is refused all the same; no write.
# 5. The Lease is made expired; `m`, `y`: the engine takes it ("we hold it") and repairs the
#    edit (the ConfigMap is back to "payload").
# 6. `m`, `y` back to watch-only: exactly one write (the Lease release); the event log (`e`)
#    says "lease released", never "lease lost".
# Captures and the audit log are saved under tests/e2e/artifacts/tui-engine/. Exits non-zero
# with a message naming the failed step.
#
# Usage: tests/e2e/tmux_tui_engine.sh     (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/tui-engine"
SOCK="cvo-e2e-tui-engine"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-20}"

. "$ROOT/tests/e2e/lib.sh"

server_pid=""
cleanup() {
    tm kill-server >/dev/null 2>&1 || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

e2e_prepare

# writes_since N: write requests (not dry runs) in the audit log after line N, one per line.
writes_since() {
    tail -n +"$(($1 + 1))" "$ART/audit.jsonl" |
        grep -E '"verb":"(create|update|patch|delete)"' | grep -v 'dryRun' || true
}
audit_len() { wc -l <"$ART/audit.jsonl"; }

# kube METHOD PATH [BODY] [CONTENT-TYPE]: one request with the kubeconfig's bearer token;
# prints the response body.
kube() {
    local server token ca="$ART/ca.pem"
    server=$(awk '/server:/ {print $2; exit}' "$ART/kubeconfig")
    token=$(awk '/token:/ {print $2; exit}' "$ART/kubeconfig")
    [ -s "$ca" ] || awk '/certificate-authority-data:/ {print $2; exit}' "$ART/kubeconfig" | base64 -d >"$ca"
    curl -sS --fail --cacert "$ca" -H "Authorization: Bearer $token" -X "$1" "$server$2" \
        ${3:+--data "$3"} -H "Content-Type: ${4:-application/merge-patch+json}"
}

lease() { # lease HOLDER RENEW_TIME
    kube PATCH "/apis/coordination.k8s.io/v1/namespaces/openshift-cluster-version/leases/version?fieldManager=e2e&force=true" \
        "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"version\",\"namespace\":\"openshift-cluster-version\"},\"spec\":{\"holderIdentity\":\"$1\",\"leaseDurationSeconds\":137,\"renewTime\":\"$2\",\"acquireTime\":\"$2\"}}" \
        application/apply-patch+yaml >/dev/null
}

# 1. The payload and a converged cluster.
P="$ART/payload"
mkdir -p "$P/manifests" "$P/release-manifests"
echo '{"kind":"cincinnati-metadata-v0","version":"1.0.0","previous":[],"metadata":{}}' >"$P/release-manifests/release-metadata"
printf 'kind: ImageStream\napiVersion: image.openshift.io/v1\nmetadata:\n  name: 1.0.0\n' >"$P/release-manifests/image-references"
ANN='  annotations:
    include.release.openshift.io/self-managed-high-availability: "true"'
printf 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: openshift-tui\n%s\n' "$ANN" >"$P/release-manifests/0000_00_tui_00_ns.yaml"
for n in alpha beta; do
    printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: openshift-tui\n%s\ndata:\n  key: "payload"\n' \
        "$n" "$ANN" >"$P/release-manifests/0000_10_tui_${n}_cm.yaml"
done
e2e_start_sim
RUST_LOG=off "$CVO_BIN" reconcile --once --payload "$P" --kubeconfig "$ART/kubeconfig" >"$ART/reconcile.out" 2>&1 ||
    fail "cvo reconcile --once did not converge the cluster: $(cat "$ART/reconcile.out")"

# 2. `cvo` alone, watch-only.
e2e_terminal 140 45
start=$(audit_len)
tm send-keys -t "$SESSION" "clear; TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' --kubeconfig '$ART/kubeconfig' --context cvo-sim; echo rc=\$?" Enter
wait_for "3 of 3 manifests in sync" "watch-only-converged"
grep -qF "Engine Watching" "$ART/$(printf '%02d' "$step")-watch-only-converged.txt" || fail "the header does not say Watching"
grep -qF "Lease free" "$ART/$(printf '%02d' "$step")-watch-only-converged.txt" || fail "the header does not show the free Lease"
grep -qE "Updating|waiting on" "$ART/$(printf '%02d' "$step")-watch-only-converged.txt" && fail "watch-only shows an update in progress"
[ -z "$(writes_since "$start")" ] || fail "watch-only wrote: $(writes_since "$start")"

# 3. Drift.
kube PATCH /api/v1/namespaces/openshift-tui/configmaps/beta '{"data":{"key":"edited"}}' >/dev/null
from=$(audit_len)
wait_for "2 of 3 manifests in sync" "drift-found"
tm send-keys -t "$SESSION" 8
wait_for '"edited" → "payload"' "drift-view"
grep -qF "openshift-tui/beta" "$ART/$(printf '%02d' "$step")-drift-view.txt" || fail "the drift view does not name the ConfigMap"
[ -z "$(writes_since "$from")" ] || fail "watch-only wrote: $(writes_since "$from")"

# 4. A live foreign Lease: refused.
lease "in-cluster-cvo_1" "$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)"
from=$(audit_len)
wait_for "Lease held by in-cluster-cvo_1 (alive" "header-live-lease"
tm send-keys -t "$SESSION" m
wait_for "held by in-cluster-cvo_1 (alive" "switch-popup-live-lease"
wait_for "deployment/cluster-version-operator" "switch-popup-refusal"
grep -qF -- "--replicas=0" "$ART/$(printf '%02d' "$step")-switch-popup-refusal.txt" || fail "the popup does not say how to scale the in-cluster CVO down"
grep -qF "y/Enter" "$ART/$(printf '%02d' "$step")-switch-popup-refusal.txt" && fail "a refused switch offers y"
tm send-keys -t "$SESSION" y
wait_for "not switched:" "switch-refused"
sleep 0.5
[ -z "$(writes_since "$from")" ] || fail "a refused switch wrote: $(writes_since "$from")"

# 5. Expired: taken, applied.
lease "in-cluster-cvo_1" "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S.000000Z)"
tm send-keys -t "$SESSION" m
wait_for "held by in-cluster-cvo_1 (expired" "switch-popup-expired"
tm send-keys -t "$SESSION" y
wait_for "we hold it" "active-apply"
tm send-keys -t "$SESSION" r
deadline=$((SECONDS + TIMEOUT))
until kube GET /api/v1/namespaces/openshift-tui/configmaps/beta | grep -qF '"key":"payload"'; do
    ((SECONDS < deadline)) || fail "active-apply did not repair the edited ConfigMap"
    sleep 0.2
done
capture "repaired" >/dev/null

# 6. Back to watch-only: one write (the Lease release), logged as a switch.
sleep 1
from=$(audit_len)
tm send-keys -t "$SESSION" m
wait_for "switch to watch-only?" "switch-back-popup"
tm send-keys -t "$SESSION" y
wait_for "Lease free" "watch-only-again"
sleep 1
w=$(writes_since "$from")
[ "$(printf '%s\n' "$w" | grep -c .)" = 1 ] || fail "switching back wrote $(printf '%s\n' "$w" | grep -c .) times: $w"
printf '%s\n' "$w" | grep -qF '/leases/version' || fail "the one write is not the Lease: $w"
# The event log is open by default on a tall terminal; e shows it otherwise.
tm capture-pane -p -t "$SESSION" | grep -qF "engine events" || tm send-keys -t "$SESSION" e
wait_for "lease released" "event-log"
grep -qF "lease lost" "$ART/$(printf '%02d' "$step")-event-log.txt" && fail "the switch was logged as a lost lease"

tm send-keys -t "$SESSION" q
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -q "^rc="; do
    ((SECONDS < deadline)) || fail "the dashboard did not quit on q"
    sleep 0.1
done
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo did not exit 0"
echo "PASS tmux_tui_engine"
