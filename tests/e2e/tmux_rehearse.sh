#!/usr/bin/env bash
# End-to-end: `cvo rehearse` in a real terminal (tmux), on the release binary.
#
# Runs `cvo rehearse --from <the aws must-gather> --payload assets/payloads/4.16.4` at 160x60,
# then pages the report with `less` and checks, from what is on screen:
#   1. the first line says the rehearsal wrote nothing to the cluster;
#   2. the preconditions block names the giant hop 4.8 -> 4.16 as blocking, waived by --force;
#   3. the manifests table has its header and the machine-config-operator row of run level 80;
#   4. the operators and pools that roll: machine-config 4.8... -> 4.16.4, master 3/3 rebooted;
#   5. the estimate says how it was computed, and the rehearsal Completed (exit code 0);
#   6. with --tui at 80x24, the dashboard's first line says after the mode that nothing is
#      written to the cluster, whole; q prints the report.
# Every capture is saved under tests/e2e/artifacts/rehearse/. Exits non-zero with a message
# naming the failed step.
#
# Usage: tests/e2e/tmux_rehearse.sh          (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/rehearse"
SOCK="cvo-e2e-rehearse"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-120}"
MG="$ROOT/tests/fixtures/upstream/must-gather-clean-snapshots/aws"
PAYLOAD="$ROOT/assets/payloads/4.16.4"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

e2e_terminal 160 60
keys "clear; '$CVO_BIN' rehearse --from '$MG' --payload '$PAYLOAD' > '$ART/report.txt'; r=\$?; echo \"rehearse-\"\"exit:\$r\"" Enter
# (The typed line never contains the marker: its quotes split it.)
wait_for "rehearse-exit:" "finished"
tm capture-pane -p -t "$SESSION" | grep -q "^rehearse-exit:0$" || fail "cvo rehearse did not exit 0 (the rehearsal did not complete)"

# Page the report in the terminal and read it off the screen.
keys "clear; LESS= less '$ART/report.txt'" Enter
# 1. Nothing written.
wait_for "on a simulated copy of the cluster: nothing was written to your cluster." "header"
# 2. Preconditions.
wait_for "blocking  ClusterVersionGiantHop (--force would waive it)" "giant-hop"
wait_for "=> the request would be refused:" "refusal"
# 3. Manifests per run level and component.
wait_for "RUN LEVEL   COMPONENT" "manifests-header"
keys "/machine-config-operator" Enter
wait_for "80          machine-config-operator" "mco-row"
# 4. Operators and pools.
keys "/ClusterOperators that roll" Enter
wait_for "machine-config 4.8.0-0.nightly-2021-07-31-065602 -> 4.16.4" "operators"
wait_for "master: 3/3 node(s) rebooted, Updated:" "pools"
# 5. The estimate and the outcome.
keys "G"
wait_for "Estimated duration:" "estimate"
wait_for "Completed: " "completed"
keys "q"
deadline=$((SECONDS + TIMEOUT))
until [ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ]; do
    ((SECONDS < deadline)) || fail "less did not quit"
    sleep 0.1
done
capture "quit" >/dev/null

# 6. --tui at 80x24: the header's first line gives the mode, then that nothing is written to
#    the cluster, whole; q quits the dashboard and the report of what was reached is printed.
tm resize-window -t "$SESSION" -x 80 -y 24
keys "clear; '$CVO_BIN' rehearse --from '$MG' --payload '$PAYLOAD' --tui --speed 200; echo \"tui-\"\"exit:\$?\"" Enter
deadline=$((SECONDS + TIMEOUT))
until [ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "1" ]; do
    ((SECONDS < deadline)) || fail "the rehearsal's dashboard did not start"
    sleep 0.1
done
wait_for "rehearsal: nothing is written to your cluster" "tui-banner"
first=$(tm capture-pane -p -t "$SESSION" | head -1)
case "$first" in
    "cvo │ active-apply │ rehearsal: nothing is written to your cluster │"*) ;;
    *) fail "the dashboard's first line is not 'cvo │ active-apply │ rehearsal: nothing is written to your cluster │ ...': $first" ;;
esac
keys "q"
wait_for "tui-exit:" "tui-quit"
# The report's end (its head has scrolled off 24 rows): how far the rehearsal got.
wait_for "s of simulated time" "tui-report"
echo "PASS: tmux_rehearse (captures in $ART)"
