#!/usr/bin/env bash
# Measures the dashboard's embedded engine, watch-only, over a generated payload on a converged
# simulated cluster that cvo has not checked (issue 15): requests by verb and resource type from
# the `cvo sim serve` audit log, and the dashboard's memory (VmRSS / VmHWM of the process).
#
#   scripts/measure-tui-engine.sh [N] [IDLE_SECONDS]      (defaults: 1000 manifests, 60 s)
#
# Steps: `cvo sim serve --audit-log`; scripts/gen-payload.sh DIR N; `cvo reconcile --once`
# converges the cluster (and writes the verification record
# openshift-cluster-version/cvo-verified-manifests, which is then deleted: an upstream CVO never
# writes it); `cvo --kubeconfig K --context cvo-sim` (the dashboard, watch-only) in tmux. Prints
# the requests of three windows:
#   1. first pass: from the dashboard's start to "N of N manifests in sync" on screen;
#   2. second pass: `r` (re-check now) and 10 s;
#   3. idle: IDLE_SECONDS more.
# EXTRA=K first adds K ConfigMaps of 2 KiB that are not in the payload (namespace
# cvo-measure-extra), to show the engine's caches keep the payload's objects, not the cluster's.
# Binary: $CVO_BIN (default target/debug/cvo; request counts do not depend on the build, RSS
# does). Needs tmux, jq, curl. Everything runs under a temporary folder (kept with
# KEEP=1) and every process it starts is stopped on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
N=${1:-1000}
IDLE=${2:-60}
CVO_BIN=${CVO_BIN:-target/debug/cvo}
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
[ -x "$CVO_BIN" ] || { echo "measure-tui-engine: no executable at $CVO_BIN" >&2; exit 1; }
for t in tmux jq curl; do command -v "$t" >/dev/null || { echo "measure-tui-engine: $t is not installed" >&2; exit 1; }; done

W=$(mktemp -d /tmp/cvo-measure-tui.XXXXXX)
SOCK="cvo-measure-tui-$$"
server_pid=""
cleanup() {
    tmux -L "$SOCK" kill-server >/dev/null 2>&1 || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
fail() { echo "measure-tui-engine: $*" >&2; exit 1; }

"$ROOT/scripts/gen-payload.sh" "$W/payload" "$N" >/dev/null
"$CVO_BIN" sim serve --port 0 --kubeconfig-out "$W/kubeconfig" --audit-log "$W/audit.jsonl" \
    >"$W/server.out" 2>"$W/server.err" &
server_pid=$!
deadline=$((SECONDS + 30))
until grep -q "^cvo sim serving https://127.0.0.1:" "$W/server.out" 2>/dev/null; do
    kill -0 "$server_pid" 2>/dev/null || fail "cvo sim serve exited: $(cat "$W/server.err")"
    ((SECONDS < deadline)) || fail "no ready line from cvo sim serve in 30 s"
    sleep 0.1
done
RUST_LOG=off "$CVO_BIN" reconcile --once --timeout 900 --payload "$W/payload" --kubeconfig "$W/kubeconfig" \
    >"$W/reconcile.out" 2>&1 || fail "cvo reconcile --once did not converge: $(tail -5 "$W/reconcile.out")"

server=$(awk '/server:/ {print $2; exit}' "$W/kubeconfig")
token=$(awk '/token:/ {print $2; exit}' "$W/kubeconfig")
awk '/certificate-authority-data:/ {print $2; exit}' "$W/kubeconfig" | base64 -d >"$W/ca.pem"
curl -sS --fail --cacert "$W/ca.pem" -H "Authorization: Bearer $token" -X DELETE \
    "$server/api/v1/namespaces/openshift-cluster-version/configmaps/cvo-verified-manifests" >/dev/null ||
    fail "could not delete the verification record"

if [ "${EXTRA:-0}" -gt 0 ]; then
    fill=$(head -c 2048 /dev/zero | tr '\0' x)
    {
        printf 'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: cvo-measure-extra}\n'
        for i in $(seq 1 "$EXTRA"); do
            printf -- '- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: extra-%d, namespace: cvo-measure-extra}\n  data: {fill: %s}\n' "$i" "$fill"
        done
    } >"$W/extra.yaml"
    command -v kubectl >/dev/null || fail "EXTRA needs kubectl"
    kubectl --kubeconfig "$W/kubeconfig" create --validate=false -f "$W/extra.yaml" >/dev/null || fail "could not create the extra ConfigMaps"
    echo "added $EXTRA ConfigMaps of 2 KiB outside the payload"
fi

audit_len() { wc -l <"$W/audit.jsonl"; }
# report TITLE FROM TO: requests of audit lines FROM+1..TO by verb and resource type (the
# path without namespace and object name; `watch (list)` is a streaming list).
report() {
    echo "== $1: $(($3 - $2)) requests"
    sed -n "$(($2 + 1)),$3p" "$W/audit.jsonl" | jq -r '
        (.path as $p | ($p | capture("^/(api/v1|apis/[^/]+/[^/]+)/(?<rest>.*)$").rest) // $p) as $rest
        | ($rest | ltrimstr("/") | sub("^namespaces/[^/]+/(?<r>.+)$"; "\(.r)") | split("/")[0]) as $type
        | (.verb + (if ((.query // "") | test("sendInitialEvents=true")) then "(list)" else "" end)) as $v
        | "\($v) \($type)"' | sort | uniq -c | awk '{printf "  %-18s %-28s %6d\n", $2, $3, $1}'
}
rss() { awk '/^VmRSS|^VmHWM/ {printf "%s %d KiB  ", $1, $2} END {print ""}' "/proc/$1/status"; }

tmux -L "$SOCK" -f /dev/null new-session -d -s m -x 160 -y 48 \
    "env TERM=xterm-256color XDG_STATE_HOME='$W' RUST_LOG=off '$CVO_BIN' --kubeconfig '$W/kubeconfig' --context cvo-sim"
t0=$(audit_len)
start=$SECONDS
until tmux -L "$SOCK" capture-pane -p -t m | grep -qF "$N of $N manifests in sync"; do
    ((SECONDS - start < 600)) || { tmux -L "$SOCK" capture-pane -p -t m >&2; fail "no '$N of $N manifests in sync' in 600 s"; }
    sleep 0.2
done
first_secs=$((SECONDS - start))
t1=$(audit_len)
pid=$(tmux -L "$SOCK" list-panes -t m -F '#{pane_pid}')
echo "payload: $N manifests ($(ls "$W/payload/release-manifests" | grep -c yaml) files); binary: $CVO_BIN"
echo "first pass on screen after ${first_secs}s; dashboard pid $pid: $(rss "$pid")"
report "first watch-only pass without the verification record" "$t0" "$t1"
tmux -L "$SOCK" send-keys -t m r
sleep 10
t2=$(audit_len)
report "second pass (r, 10 s)" "$t1" "$t2"
echo "after the second pass: $(rss "$pid")"
sleep "$IDLE"
t3=$(audit_len)
report "idle ${IDLE} s" "$t2" "$t3"
echo "after idle: $(rss "$pid")"
tmux -L "$SOCK" capture-pane -p -t m | grep -E "manifests in sync|drift" | head -3 || true
tmux -L "$SOCK" send-keys -t m q
