#!/usr/bin/env bash
# End-to-end smoke test of the dashboard in a real terminal (tmux), against `cvo demo --snapshot` (the static stuck-update cluster).
#
# Checks: first screen (header) within a deadline; `?` opens help and Esc closes it; `/` +
# text filters the operators table; `:co` switches views; resize to 70x20 still renders; a
# too-small window shows the one-line notice; growing back redraws; `q` quits with exit code
# 0 and the terminal leaves the alternate screen; Ctrl-c, SIGHUP and a forced panic also
# restore the terminal; an idle dashboard uses ~0 CPU. Every capture is saved under
# tests/e2e/artifacts/. Exits non-zero with a message naming the failed step.
#
# Usage: tests/e2e/tmux_smoke.sh            (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts"
SOCK="cvo-e2e"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-10}"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

# 1. Start a shell pane at a fixed size; escape-time 0 so a lone Esc is delivered at once.
cleanup
e2e_terminal 120 40
tm set -s escape-time 0
keys "clear; TERM=xterm-256color XDG_STATE_HOME=\"$ART\" '$CVO_BIN' demo --snapshot; echo rc=\$?" Enter

# 2. First screen: header, headline and the tab line.
wait_for "FAILING  ClusterOperatorDegraded" "first-screen"
wait_for "[1] Overview" "tabs"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "1" ] || fail "the dashboard is not on the alternate screen"
grep -qF "Version 4.16.3" "$ART/$(printf '%02d' "$step")-tabs.txt" || fail "header lacks the current version"
grep -qF "Target 4.16.4" "$ART/$(printf '%02d' "$step")-tabs.txt" || fail "header lacks the target version"

# 3. Help opens with ? and closes with Esc.
keys '?'
wait_for "toggle this help" "help-open"
keys Escape
wait_gone "toggle this help" "help-closed"

# 4. Filter the operators table.
keys '2'
wait_for "clusteroperators[33]" "operators"
keys '/'
keys -l 'machine'
wait_for "clusteroperators[4/33] </machine>" "filter-typed"
keys Enter
wait_for "DEGR   machine-config" "filter-applied"
assert_absent "authentication" "filter"
# Colour plus word: the Degraded row is red (SGR 31 / 38;5;1 / 91) in the real terminal.
row=$(tm capture-pane -p -e -t "$SESSION" | grep -a "DEGR   machine-config" || true)
case "$row" in
    *$'\e[31m'* | *$'\e[38;5;1m'* | *$'\e[91m'* | *$'\e[1;31m'*) ;;
    *) fail "the Degraded machine-config row is not red: $(printf '%q' "$row")" ;;
esac
keys Escape
wait_for "clusteroperators[33]" "filter-cleared"

# 5. Command line: :nodes then :co (one key per call, as some apps drop fast input).
keys ':'
for c in n o d e s; do keys -l "$c"; done
keys Enter
wait_for "nodes[7]" "cmd-nodes"
keys ':'
keys -l c
keys -l o
keys Enter
wait_for "clusteroperators[33]" "cmd-co"

# 6. Details of the selected operator, then back.
keys Enter
wait_for "clusteroperator/authentication" "detail"
keys Escape
wait_gone "clusteroperator/authentication" "detail-closed"

# 7. Resize: smaller still renders; too small shows one line; growing back redraws fully.
tm resize-window -t "$SESSION" -x 70 -y 20
wait_for "clusteroperators[33]" "resize-70x20"
first=$(tm capture-pane -p -t "$SESSION" | head -1)
[ "${#first}" -le 70 ] || fail "first line wider than the window after resize"
tm resize-window -t "$SESSION" -x 50 -y 10
wait_for "terminal too small: 50x10" "too-small"
tm resize-window -t "$SESSION" -x 120 -y 40
wait_for "clusteroperators[33]" "regrown"
assert_absent "terminal too small" "regrow"

# 8. Quit with q: exit code 0 and the terminal restored (alternate screen off).
keys q
wait_for "rc=" "quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc=0" || fail "cvo demo did not exit 0: $(tm capture-pane -p -t "$SESSION" | grep rc=)"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ] || fail "alternate screen still on after quit"

# 9. Ctrl-c from inside the filter prompt also quits cleanly.
# (this run uses the pane TERM=tmux-256color, the next TERM=screen, the first xterm-256color)
keys "clear; '$CVO_BIN' demo --snapshot; echo rc2=\$?" Enter
wait_for "FAILING  ClusterOperatorDegraded" "second-start"
keys '/'
keys -l 'x'
keys C-c
wait_for "rc2=" "ctrl-c"
tm capture-pane -p -t "$SESSION" | grep -qx "rc2=0" || fail "Ctrl-c did not exit 0"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ] || fail "alternate screen still on after Ctrl-c"

# 10. SIGHUP (terminal closed) ends the process and restores the terminal.
keys "clear; TERM=screen '$CVO_BIN' demo --snapshot; echo rc3=\$?" Enter
wait_for "FAILING  ClusterOperatorDegraded" "third-start"
shell_pid=$(tm display -p -t "$SESSION" '#{pane_pid}')
cvo_pid=$(pgrep -P "$shell_pid" | head -1)
[ -n "$cvo_pid" ] || fail "cannot find the cvo process under the pane's shell ($shell_pid)"
# Idle CPU: an idle dashboard must not redraw in a loop. utime+stime in clock
# ticks (usually 1/100 s) over 3 s of idleness.
if [ -r "/proc/$cvo_pid/stat" ]; then
    sleep 1
    t0=$(cpu_ticks "$cvo_pid")
    sleep 3
    t1=$(cpu_ticks "$cvo_pid")
    echo "idle CPU: $((t1 - t0)) ticks in 3 s" >"$ART/idle-cpu.txt"
    [ $((t1 - t0)) -le 6 ] || fail "idle dashboard used $((t1 - t0)) CPU ticks in 3 s (expected ~0)"
fi
kill -HUP "$cvo_pid"
wait_for "rc3=" "sighup"
tm capture-pane -p -t "$SESSION" | grep -qx "rc3=0" || fail "SIGHUP did not end cvo cleanly"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ] || fail "alternate screen still on after SIGHUP"

# 11. A panic (forced through the test hook) restores the terminal and shows the message.
keys "clear; CVO_UI_TEST_PANIC_KEY='!' '$CVO_BIN' demo --snapshot; echo rc4=\$?" Enter
wait_for "FAILING  ClusterOperatorDegraded" "fourth-start"
keys -l '!'
wait_for "rc4=" "panic"
tm capture-pane -p -t "$SESSION" | grep -qx "rc4=101" || fail "a panic did not exit with 101"
tm capture-pane -p -t "$SESSION" | grep -qF "forced panic" || fail "the panic message is not visible"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "0" ] || fail "alternate screen still on after a panic"
# The shell's tty must be back in canonical (cooked) mode.
keys "clear; stty -a > '$ART/stty-after-panic.txt'" Enter
deadline=$((SECONDS + TIMEOUT))
until [ -s "$ART/stty-after-panic.txt" ] || ((SECONDS >= deadline)); do sleep 0.1; done
[ -s "$ART/stty-after-panic.txt" ] || fail "could not read the tty mode after the panic"
grep -qE '(^| )-icanon' "$ART/stty-after-panic.txt" && fail "raw mode still on after a panic"

# 12. `cvo tui --from` on an `oc adm upgrade status` fixture (in the repo).
FIX="$ROOT/tests/fixtures/upstream/oc-upgrade-status"
[ -f "$FIX/4.14.1-degraded-cv.yaml" ] || fail "no oc-upgrade-status fixture at $FIX"
from=""
for k in cv co mc mcp node; do from="$from --from '$FIX/4.14.1-degraded-$k.yaml'"; done
keys "clear; '$CVO_BIN' tui $from; echo rc5=\$?" Enter
wait_for "Version 4.14.0-rc.3  Target 4.14.1 " "tui-from"
wait_for "Assessment Stalled · control plane 97%" "tui-from-headline"
keys q
wait_for "rc5=" "tui-quit"
tm capture-pane -p -t "$SESSION" | grep -qx "rc5=0" || fail "cvo tui --from did not exit 0"

# 13. A live cluster that cannot be reached (closed port on localhost): no conclusions from
# empty data, the error on its own line.
cat > "$ART/unreachable.kubeconfig" <<'KUBE'
apiVersion: v1
kind: Config
clusters:
- name: closed
  cluster:
    server: https://127.0.0.1:1
    insecure-skip-tls-verify: true
users:
- name: nobody
  user:
    token: none
contexts:
- name: closed
  context: {cluster: closed, user: nobody}
current-context: closed
KUBE
keys "clear; '$CVO_BIN' tui --kubeconfig '$ART/unreachable.kubeconfig'; echo rc6=\$?" Enter
wait_for "Cannot reach the API server since" "unreachable"
tm capture-pane -p -t "$SESSION" | grep -q "^API unreachable since .* ago): " || fail "the API error has no line of its own"
assert_absent "nothing needs attention" "unreachable-no-claims"
assert_absent "No ClusterVersion" "unreachable-no-cv-claim"
keys q
wait_for "rc6=" "unreachable-quit"

echo "PASS: tmux smoke test ($step captures in $ART)"
