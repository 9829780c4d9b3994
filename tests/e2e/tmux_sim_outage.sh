#!/usr/bin/env bash
# End-to-end: the dashboard through a scripted API outage (tmux).
#
# Starts `cvo sim serve --scenario tests/fixtures/scenarios/outage.yaml` (watches dropped at
# t=3 s; from t=6 s to t=14 s watches cut and every request answered 503; then one HTTP 410 for
# the next watch of nodes), opens `cvo tui --kubeconfig` on it and asserts: the header shows
# "API unreachable since" within 3 s of the outage's start (the client's capped retries plus one
# backoff step), it clears after the outage without any change in the cluster, and the nodes
# watch answered 410 was followed by a fresh LIST of nodes. Captures and the audit log are saved
# under tests/e2e/artifacts/sim-outage/. Exits non-zero with a message naming the failed step.
#
# Usage: tests/e2e/tmux_sim_outage.sh       (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/sim-outage"
SCENARIO="$ROOT/tests/fixtures/scenarios/outage.yaml"
OUTAGE_FROM=6
OUTAGE_UNTIL=14
SOCK="cvo-e2e-outage"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-10}"
TEXT="API unreachable since"

. "$ROOT/tests/e2e/lib.sh"

server_pid=""
cleanup() {
    tm kill-server >/dev/null 2>&1 || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

e2e_prepare

now() { date +%s.%N; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 + 0.5 }'; }
at() { awk -v r="$ready" -v a="$1" 'BEGIN { printf "%.3f", r + a }'; }

# 1. Start the server; its ready line starts the scenario clock.
e2e_start_sim --scenario "$SCENARIO"
ready=$(now)

# 2. The dashboard on the server's kubeconfig: live, no error.
e2e_terminal 120 40
tm send-keys -t "$SESSION" "clear; TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' tui --kubeconfig '$ART/kubeconfig'; echo rc=\$?" Enter
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -qF "context cvo-sim"; do
    ((SECONDS < deadline)) || fail "the dashboard never showed the live cluster"
    sleep 0.1
done
capture "live" >/dev/null

# 3. The outage shows within 3 s of its start (and not before it).
start=$(at "$OUTAGE_FROM")
while :; do
    t=$(now)
    if tm capture-pane -p -t "$SESSION" | grep -qF "$TEXT"; then break; fi
    late=$(ms "$start" "$t")
    ((late <= 3000)) || fail "'$TEXT' not on screen ${late} ms after the outage began"
    sleep 0.1
done
shown=$(ms "$start" "$t")
((shown >= 0)) || fail "'$TEXT' on screen ${shown} ms before the outage"
capture "outage" >/dev/null
echo "outage on screen ${shown} ms after it began"

# 4. After the outage the mark clears (one backoff step of at most 30 s), with no change.
end=$(at "$OUTAGE_UNTIL")
while tm capture-pane -p -t "$SESSION" | grep -qF "$TEXT"; do
    t=$(now)
    late=$(ms "$end" "$t")
    ((late <= 35000)) || fail "'$TEXT' still on screen ${late} ms after the outage ended"
    sleep 0.2
done
cleared=$(ms "$end" "$(now)")
capture "recovered" >/dev/null
echo "outage mark cleared ${cleared} ms after the outage ended"

# 5. Quit; stop the server; the nodes watch answered 410 was followed by a LIST of nodes.
tm send-keys -t "$SESSION" q
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -q "^rc="; do
    ((SECONDS < deadline)) || fail "the dashboard did not quit on q"
    sleep 0.1
done
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo tui did not exit 0"
kill -TERM "$server_pid"
wait "$server_pid" || fail "cvo sim serve did not exit 0 on SIGTERM"
server_pid=""
after_gone=$(grep '"path":"/api/v1/nodes"' "$ART/audit.jsonl" | grep -A1 '"status":410' | sed -n 2p)
[ -n "$after_gone" ] || fail "no HTTP 410 for a nodes watch in the audit log"
echo "$after_gone" | grep -qF '"verb":"list"' || fail "after the 410 the next nodes request was not a LIST: $after_gone"
errors=$(grep -c '"status":503' "$ART/audit.jsonl" || true)
echo "audit: $(wc -l <"$ART/audit.jsonl") requests, $errors answered 503"
echo "PASS tmux_sim_outage (shown after ${shown} ms, cleared after ${cleared} ms)"
