#!/usr/bin/env bash
# End-to-end: choosing and triggering an update in the live demo's dashboard (tmux).
#
# Starts `cvo demo --speed 20` (no `--auto`: the demo requests nothing by itself) at 120x40
# and checks, from what is on screen:
#   1. the overview's updates line lists 4.16.4 (recommended) and 4.16.5 (conditional, with
#      its risk), and nothing is requested by itself (the header keeps `Target -`);
#   2. `6` shows the Updates view; on 4.16.5 the risk's name, message and URL are in view;
#   3. Enter on 4.16.5 opens the confirm popup listing the merge patch, the preconditions and
#      the risk accepted; Esc cancels and nothing is written (still `Target -`);
#   4. Enter on 4.16.4 then `y` sends the request: the header shows the engine's outcome and the
#      update runs (a 4.16.4 history entry, the sync panel on `Desired 4.16.4`);
#   5. `q` quits with exit code 0;
#   6. `cvo demo --read-only`: the same request is refused on screen and nothing is written.
# Every capture is saved under tests/e2e/artifacts/updates/. Exits non-zero naming the step.
#
# Usage: tests/e2e/tmux_updates.sh          (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/updates"
SOCK="cvo-e2e-updates"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-90}"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

header_has() { tm capture-pane -p -t "$SESSION" | sed -n 2p | grep -qF -- "$1"; }

e2e_terminal 120 40
keys "clear; cd '$ART' && TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' demo --speed 20; echo rc=\$?" Enter

# 1. The overview line, and no request of its own.
wait_for "active-apply" "start"
wait_for "Updates (6): 4.16.4 recommended · 4.16.5 conditional (risk: OVNKubernetesEgressIPRegression)" "overview-line"
# At speed 20 the old automatic request came after 1 s: wait well past it.
sleep 4
header_has "Target -" || fail "something requested an update by itself: $(tm capture-pane -p -t "$SESSION" | sed -n 2p)"
capture "no-auto-request" >/dev/null

# 2. The Updates view and the conditional update's risk in plain view.
keys 6
wait_for "updates[2]" "updates-view"
keys j
wait_for "Risk OVNKubernetesEgressIPRegression" "risk"
wait_for "https://issues.redhat.com/browse/OCPBUGS-37029" "risk-url"

# 3. Confirm popup for 4.16.5; Esc cancels.
keys Enter
wait_for "request the conditional update to 4.16.5?" "confirm-conditional"
wait_for "Risks you accept by confirming" "confirm-risks"
wait_for "spec.desiredUpdate.version: 4.16.5" "confirm-patch"
keys Escape
wait_gone "Risks you accept by confirming" "cancelled"
sleep 2
header_has "Target -" || fail "Esc wrote a request: $(tm capture-pane -p -t "$SESSION" | sed -n 2p)"

# 4. Pick 4.16.4, confirm, watch it start.
keys k
sleep 0.3
keys Enter
wait_for "request the update to 4.16.4?" "confirm-recommended"
keys y
wait_for "Last command upgrade --to 4.16.4" "sent"
# The update runs: History gets a 4.16.4 entry (Partial while it runs, Completed at the end;
# at speed 20 it may already be done).
keys 4
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -qE '^│4\.16\.4 +(Partial|Completed)'; do
    ((SECONDS < deadline)) || fail "no 4.16.4 history entry in ${TIMEOUT}s"
    sleep 0.2
done
capture "history" >/dev/null
keys 1
wait_for "Desired 4.16.4" "overview-progress"

# 5. Quit.
keys q
wait_for "rc=" "quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo demo did not exit 0: $(tm capture-pane -p -t "$SESSION" | grep rc=)"

# 6. Read-only: refused on screen, nothing written.
keys "clear; cd '$ART' && TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' demo --speed 20 --read-only; echo rc2=\$?" Enter
wait_for "Updates (6): 4.16.4 recommended" "ro-start"
keys 6
wait_for "updates[2]" "ro-updates"
keys Enter
wait_for "Refused: --read-only" "ro-refused"
keys y
wait_for "refused, nothing written: --read-only" "ro-flash"
sleep 2
header_has "Target -" || fail "--read-only wrote a request: $(tm capture-pane -p -t "$SESSION" | sed -n 2p)"
keys q
wait_for "rc2=" "ro-quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc2=0" || fail "cvo demo --read-only did not exit 0"
echo "PASS: choosing and triggering an update in the dashboard (captures in $ART)"
