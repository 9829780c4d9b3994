#!/usr/bin/env bash
# End-to-end: `cvo fleet` in a real terminal (tmux) against `cvo sim serve --clusters 3`
# plus a context whose server refuses connections, merged from a second kubeconfig file
# through KUBECONFIG.
#
# Checks: the fleet view lists the four contexts with the dead one marked unreachable (its
# error in the detail lines) and the three simulated clusters up to date; `/` filters; Enter
# opens the selected cluster's dashboard (its header names the context); Esc comes back to
# the fleet with the filter kept; a ClusterVersion change on one simulated cluster (kubectl,
# when installed) shows in the view within 1 s; `q` quits with exit code 0. Captures are
# saved under tests/e2e/artifacts/fleet/. Exits non-zero with a message naming the failed
# step.
#
# Usage: tests/e2e/tmux_fleet.sh         (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/fleet"
SOCK="cvo-e2e-fleet"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-15}"

. "$ROOT/tests/e2e/lib.sh"

server_pid=""
cleanup() {
    tm kill-server >/dev/null 2>&1 || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

e2e_prepare

# 1. Three simulated clusters in one process.
e2e_start_sim --clusters 3 --from "$ROOT/assets/demo-cluster"
cat "$ART/server.out"

# 2. A second kubeconfig file with a context nothing answers for (port 9: discard, closed).
cat >"$ART/dead.yaml" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: dead
  cluster: {server: "https://127.0.0.1:9"}
users:
- name: dead
  user: {token: not-a-secret}
contexts:
- name: dead
  context: {cluster: dead, user: dead}
YAML

# 3. The fleet view.
e2e_terminal 120 40
keys "clear; TERM=xterm-256color XDG_STATE_HOME='$ART' KUBECONFIG='$ART/kubeconfig:$ART/dead.yaml' '$CVO_BIN' fleet; echo rc=\$?" Enter
wait_for "4 clusters · 1 unreachable · 3 up to date" "fleet"
f="$ART/$(printf '%02d' "$step")-fleet.txt"
cat "$f"
grep -qE "^dead +unreachable" "$f" || fail "the dead context is not marked unreachable"
for i in 0 1 2; do
    grep -qE "^cvo-sim-$i +up to date +4\.16\.3 +stable-4\.16" "$f" || fail "cvo-sim-$i row wrong"
done

# 4. The filter, then the dead cluster's error in the detail lines.
keys /
keys d e a d Enter
wait_for "filter: dead (1 shown)" "filtered"
wait_for "unreachable: list clusterversions" "dead-detail"
keys Escape
wait_gone "filter: dead" "unfiltered"

# 5. Enter opens the selected cluster's dashboard (the first row: cvo-sim-0).
keys Down Up Enter
wait_for "context cvo-sim-0" "dashboard"
wait_for "Operators" "dashboard-live"

# 6. Esc comes back to the fleet.
keys Escape
wait_for "cvo fleet · 4 clusters" "back"

# 7. A change on one cluster shows within 1 s (needs kubectl for the status patch).
if command -v kubectl >/dev/null; then
    t0=$(date +%s%N)
    KUBECONFIG="$ART/kubeconfig" kubectl --context cvo-sim-2 patch clusterversion version --type=merge \
        -p '{"spec":{"channel":"fast-4.16"}}' >/dev/null || fail "kubectl patch failed"
    wait_for "fast-4.16" "changed"
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    echo "channel change on screen after ${ms} ms (kubectl included, polled every 100 ms)"
    ((ms <= 1000)) || fail "the change took ${ms} ms to show"
else
    echo "kubectl not installed: the live-change step is skipped"
fi

# 8. q quits with exit code 0.
keys q
wait_for "rc=" "quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo fleet did not exit 0"
echo "PASS tmux_fleet"
