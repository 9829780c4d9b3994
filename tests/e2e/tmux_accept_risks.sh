#!/usr/bin/env bash
# End-to-end: accepting a conditional update's risk in the live demo's dashboard (tmux), then
# taking that update.
#
# The demo cluster's FeatureGate `cluster` enables ClusterUpdateAcceptRisks (a CustomNoUpgrade
# feature set), so `spec.desiredUpdate.acceptRisks` is valid there. Starts `cvo demo --speed 20`
# at 120x40 and checks, from what is on screen:
#   1. `6`, `j`: the risks pane of 4.16.5 offers `a accept risks` (the engine read the gate);
#   2. `a` opens the confirm popup: the gate's verdict and the acceptRisks line; `y` sends it;
#   3. the ClusterVersion stays valid (the engine's last command succeeded, no "Invalid"), the
#      risk shows as accepted, 4.16.5 turns Recommended (AllExposedRisksAccepted) and is listed
#      once (not also as a recommended row);
#   4. Enter on 4.16.5, `y`: the update to the conditional target runs (a 4.16.5 history
#      entry, the overview on `Desired 4.16.5`);
#   5. `q` quits with exit code 0.
# Without the gate the dashboard does not offer `a` and says why in the footer; that branch is
# covered by the unit test `accept_risks_is_offered_only_with_the_feature_gate`.
# Every capture is saved under tests/e2e/artifacts/accept-risks/. Exits non-zero naming the step.
#
# Usage: tests/e2e/tmux_accept_risks.sh     (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/accept-risks"
SOCK="cvo-e2e-accept-risks"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-90}"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

e2e_terminal 120 40
keys "clear; cd '$ART' && TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' demo --speed 20; echo rc=\$?" Enter

# 1. The gate is read: `a` is offered on the conditional update.
wait_for "active-apply" "start"
wait_for "Updates (6): 4.16.4 recommended · 4.16.5 conditional" "overview-line"
keys 6
wait_for "updates[2]" "updates-view"
keys j
wait_for "4.16.5 — Enter request · a accept risks" "offered"

# 2. Accept the risk.
keys a
wait_for "accept these risks?" "confirm-accept"
wait_for "ClusterUpdateAcceptRisks is enabled for 4.16.3" "confirm-gate"
wait_for "spec.desiredUpdate.acceptRisks: [OVNKubernetesEgressIPRegression]" "confirm-patch"
keys y
wait_for "Last command accept risks OVNKubernetesEgr" "sent"

# 3. Valid, accepted, recommended, listed once.
wait_for "Risk OVNKubernetesEgressIPRegression  (accepted)" "accepted"
wait_for "yes (AllExposedRisksAccepted)" "recommended-now"
screen="$(tm capture-pane -p -t "$SESSION")"
if grep -q "Invalid" <<<"$screen"; then
    fail "the ClusterVersion was marked Invalid after accepting the risk"
fi
n=$(grep -cE '^│4\.16\.5 ' <<<"$screen" || true)
[ "$n" = "1" ] || fail "4.16.5 is listed $n times in the Updates table (want 1)"

# 4. Take the conditional update.
keys Enter
wait_for "4.16.5?" "confirm-update"
keys y
wait_for "Last command upgrade --to 4.16.5" "update-sent"
assert_absent "allow-not-recommended" "an accepted, recommended update needs no waiver"
keys 4
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -qE '^│4\.16\.5 +(Partial|Completed)'; do
    ((SECONDS < deadline)) || fail "no 4.16.5 history entry in ${TIMEOUT}s"
    sleep 0.2
done
capture "history" >/dev/null
keys 1
wait_for "Desired 4.16.5" "overview-progress"

# 5. Quit.
keys q
wait_for "rc=" "quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo demo did not exit 0: $(tm capture-pane -p -t "$SESSION" | grep rc=)"
echo "PASS: accepting a risk and taking the conditional update in the dashboard (captures in $ART)"
