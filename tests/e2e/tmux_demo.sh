#!/usr/bin/env bash
# End-to-end: the live demo update in a real terminal (tmux), on the release binary.
#
# Starts `cvo demo --speed 20 --auto` (simulator + simulated operators + the engine in active-apply,
# 4.16.3 → 4.16.4, requested by the demo itself: `--auto`) at 120x40 and checks, from what is on screen:
#   1. the dashboard comes up in active-apply mode with the engine's sync gauge;
#   2. the gauge rises: the percentages read from successive captures never fall and at least
#      three distinct values are seen before 100 %;
#   3. `7` opens the task graph (run levels as rows, components with done/total);
#   4. the update completes: `4` shows the History tab with `4.16.4  Completed` on top;
#   5. `m` opens the mode-switch confirm popup, Esc closes it without switching;
#   6. `q` quits with exit code 0 and the terminal leaves the alternate screen.
# It also records CPU use of the process during the update and idle after it (clock ticks,
# 100 per second) in artifacts/demo/cpu.txt. Every capture is saved under
# tests/e2e/artifacts/demo/. Exits non-zero with a message naming the failed step.
#
# Usage: tests/e2e/tmux_demo.sh             (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/demo"
SOCK="cvo-e2e-demo"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-90}"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

e2e_terminal 120 40
keys "clear; cd '$ART' && TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' demo --speed 20 --auto; echo rc=\$?" Enter

# 1. The dashboard in active-apply with the engine's gauge.
wait_for "active-apply" "start"
wait_for "manifests applied" "gauge"
# The engine leads: the header names the Lease as ours, never "not read yet".
wait_for "Lease we hold it" "lease-held"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "1" ] || fail "the dashboard is not on the alternate screen"
cvo_pid="$(pgrep -n -f -- "$CVO_BIN demo --speed 20" || true)"
[ -n "$cvo_pid" ] || fail "cannot find the cvo process"
t_start=$(cpu_ticks "$cvo_pid")
s_start=$SECONDS

# 2. The gauge rises: once the update to 4.16.4 is requested (the engine first reconciles
#    4.16.3, where the gauge is already at 100 %), read "done of total manifests applied (NN%)"
#    from the sync panel every 200 ms ("all N manifests applied" once settled: 100).
wait_for "Desired 4.16.4" "update-requested"
seen=()
last=-1
deadline=$((SECONDS + TIMEOUT))
while ((SECONDS < deadline)); do
    screen="$(tm capture-pane -p -t "$SESSION")"
    pct="$(printf '%s\n' "$screen" | grep -oE '[0-9]+ of [0-9]+ manifests applied \([0-9]+%\)' | head -1 | grep -oE '\([0-9]+' | tr -d '(' || true)"
    if [ -z "$pct" ] && printf '%s\n' "$screen" | grep -qE 'all [0-9]+ manifests applied'; then
        pct=100
    fi
    if [ -n "$pct" ]; then
        ((pct >= last)) || fail "the sync gauge fell from $last% to $pct%"
        if ((pct != last)); then
            seen+=("$pct")
            capture "gauge-$pct" >/dev/null
            last=$pct
        fi
        ((pct == 100)) && break
    fi
    sleep 0.2
done
echo "gauge values seen: ${seen[*]}" | tee "$ART/gauge.txt"
((last == 100)) || fail "the gauge did not reach 100% in ${TIMEOUT}s (last $last%)"
((${#seen[@]} >= 4)) || fail "the gauge did not rise through at least three values before 100%: ${seen[*]}"

# 3. The task graph.
keys 7
wait_for "task graph" "task-graph"
tm capture-pane -p -t "$SESSION" | grep -qE '✓ kube-apiserver-operator [0-9]+/[0-9]+' ||
    fail "the task graph does not show kube-apiserver-operator as done"

# 4. The Completed history entry.
keys 4
deadline=$((SECONDS + TIMEOUT))
until tm capture-pane -p -t "$SESSION" | grep -qE '^│4\.16\.4 +Completed'; do
    ((SECONDS < deadline)) || fail "no Completed 4.16.4 history entry in ${TIMEOUT}s"
    sleep 0.2
done
capture "history-completed" >/dev/null
t_done=$(cpu_ticks "$cvo_pid")
s_done=$SECONDS

# Idle: 10 s at level (reconciling only).
sleep 10
t_idle=$(cpu_ticks "$cvo_pid")
{
    echo "update: $((t_done - t_start)) ticks in $((s_done - s_start)) s"
    echo "idle:   $((t_idle - t_done)) ticks in 10 s"
} | tee "$ART/cpu.txt"
# An idle dashboard with a reconciling engine must stay far below one core (1000 ticks in 10 s).
(((t_idle - t_done) <= 200)) || fail "idle demo used $((t_idle - t_done)) CPU ticks in 10 s"

# 5. The mode switch asks first; Esc leaves the mode alone.
keys m
wait_for "watch-only" "confirm-open"
capture "confirm" >/dev/null
keys Escape
sleep 0.5
tm capture-pane -p -t "$SESSION" | head -1 | grep -qF "active-apply" || fail "Esc in the confirm popup changed the mode"

# 6. Quit.
keys q
wait_for "rc=" "quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo demo did not exit 0: $(tm capture-pane -p -t "$SESSION" | grep rc=)"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ] || fail "alternate screen still on after quit"
echo "PASS: live demo end-to-end (captures in $ART)"
