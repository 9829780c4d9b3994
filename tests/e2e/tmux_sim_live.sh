#!/usr/bin/env bash
# End-to-end: the dashboard live against `cvo sim serve` in a real terminal (tmux).
#
# Starts `cvo sim serve --scenario tests/fixtures/scenarios/co-degrades.yaml` (a settled
# cluster whose dns ClusterOperator goes Degraded 3 s after the server is ready, with 40 ms of
# latency per request and watches dropped every 20 events), opens `cvo tui --kubeconfig` on it,
# and asserts that the degraded operator shows up on screen within 1 s of the scripted time
# (capture-pane every 100 ms; the measured delay is printed). Then `q` quits with exit code 0,
# and SIGTERM stops the server with exit code 0. Captures and the server's audit log are saved
# under tests/e2e/artifacts/sim-live/. Exits non-zero with a message naming the failed step.
#
# Usage: tests/e2e/tmux_sim_live.sh         (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/sim-live"
SCENARIO="$ROOT/tests/fixtures/scenarios/co-degrades.yaml"
CHANGE_AFTER=3 # seconds: the scenario's `after:` of the dns change
SOCK="cvo-e2e-sim"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-10}"
TEXT="Cluster Operator dns is degraded"

. "$ROOT/tests/e2e/lib.sh"

server_pid=""
cleanup() {
    tm kill-server >/dev/null 2>&1 || true
    if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

e2e_prepare

now() { date +%s.%N; }
# ms A B: milliseconds from time A to time B (B - A), rounded.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%d", (b - a) * 1000 + 0.5 }'; }

# 1. Start the server; wait for its ready line (it starts the scenario clock).
e2e_start_sim --scenario "$SCENARIO"
ready=$(now)
cat "$ART/server.out"
[ -s "$ART/kubeconfig" ] || fail "no kubeconfig written"

# 2. Open the dashboard on the server's kubeconfig.
e2e_terminal 120 40
tm send-keys -t "$SESSION" "clear; TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' tui --kubeconfig '$ART/kubeconfig'; echo rc=\$?" Enter

# 3. The first live screen: the settled cluster, context cvo-sim, no insight yet.
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -qF "Operators 1 healthy"; do
    ((SECONDS < deadline)) || fail "the dashboard never showed the live cluster"
    sleep 0.1
done
capture "first-screen" >/dev/null
head -5 "$ART/$(printf '%02d' "$step")-first-screen.txt"
grep -qF "context cvo-sim" "$ART/$(printf '%02d' "$step")-first-screen.txt" || fail "header lacks the kubeconfig context"
scripted=$(awk -v r="$ready" -v a="$CHANGE_AFTER" 'BEGIN { printf "%.3f", r + a }')
if tm capture-pane -p -t "$SESSION" | grep -qF "$TEXT"; then
    fail "the degraded operator is on screen before the scripted change"
fi

# 4. Poll every 100 ms for the scripted change; it must show within 1 s of the scripted time.
while :; do
    t=$(now)
    if tm capture-pane -p -t "$SESSION" | grep -qF "$TEXT"; then
        break
    fi
    late=$(ms "$scripted" "$t")
    ((late <= 1000)) || fail "'$TEXT' not on screen ${late} ms after the scripted time"
    sleep 0.1
done
delay=$(ms "$scripted" "$t")
capture "changed" >/dev/null
sed -n '1,4p;/update health/,/Error/p' "$ART/$(printf '%02d' "$step")-changed.txt"
((delay >= -150)) || fail "the change showed ${delay} ms before the scripted time"
echo "scripted change (+${CHANGE_AFTER}s) seen on screen after ${delay} ms"
grep -qF "change 0: patched ClusterOperator dns" "$ART/server.err" || fail "the server did not report the change"

# 5. q quits the dashboard with exit code 0.
tm send-keys -t "$SESSION" q
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -q "^rc="; do
    ((SECONDS < deadline)) || fail "the dashboard did not quit on q"
    sleep 0.1
done
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo tui did not exit 0"

# 6. SIGTERM stops the server cleanly (exit 0); every request was audited.
kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
[ "$rc" = 0 ] || fail "cvo sim serve exited $rc on SIGTERM: $(cat "$ART/server.err")"
grep -qF "cvo sim: stopped" "$ART/server.err" || fail "no stop notice from the server"
watches=$(grep -c '"verb":"watch"' "$ART/audit.jsonl" || true)
drops=$(grep -c '"fault":"watch drop' "$ART/audit.jsonl" || true)
((watches >= 6)) || fail "only $watches watch requests in the audit log"
echo "audit: $(wc -l <"$ART/audit.jsonl") requests, $watches watches ($drops with drops armed)"
echo "PASS tmux_sim_live (delay ${delay} ms)"
