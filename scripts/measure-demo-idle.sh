#!/usr/bin/env bash
# Idle cost of `cvo demo` after its update completes (issue 18 item 4), measured from outside:
# the demo runs in a tmux pane (`cvo demo --auto --speed SPEED`), the script waits until the
# dashboard shows 4.16.4 applied, lets it settle SETTLE seconds, then over IDLE seconds samples
#   - CPU: utime+stime ticks of the process (/proc/PID/stat), as % of one core;
#   - memory: VmRSS at the end and VmHWM (peak) in KiB (/proc/PID/status);
#   - wakeups: voluntary + involuntary context switches summed over the process's threads;
#   - screen output: bytes the dashboard wrote to the terminal (tmux pipe-pane).
#   - memory split: RssAnon (heap, stacks) and RssFile (the binary's and libraries' pages).
# Usage: scripts/measure-demo-idle.sh [SPEED] [IDLE_SECONDS] [SETTLE_SECONDS]
# Env: CVO_BIN (default target/release/cvo); MAX_RSS_KIB: exit 1 when VmRSS at the end is above
# it (.ci/run gates the release binary at 29296 KiB = 30 MB, issue 18's idle target).
# Needs tmux. Prints one line per figure.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
SPEED=${1:-10}
IDLE=${2:-60}
SETTLE=${3:-10}
[ -x "$BIN" ] || { echo "measure-demo-idle: $BIN is not an executable" >&2; exit 1; }
SOCK=cvo-demo-idle-$$
OUT=$(mktemp /tmp/cvo-demo-idle-XXXXXX)
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -f "$OUT"; }
trap cleanup EXIT
tmux -L "$SOCK" new-session -d -s m -x 120 -y 40 "exec $BIN demo --auto --speed $SPEED"
tmux -L "$SOCK" pipe-pane -t m -o "cat >> $OUT"
PID=$(tmux -L "$SOCK" display -p -t m '#{pane_pid}')
[ -d "/proc/$PID" ] || { echo "measure-demo-idle: the demo did not start" >&2; exit 1; }
# Completed: the header's version is 4.16.4 and the gauge says the release is applied.
deadline=$((SECONDS + 60 + 900 / ${SPEED%.*}))
until tmux -L "$SOCK" capture-pane -p -t m | grep -q 'Version 4.16.4' &&
      tmux -L "$SOCK" capture-pane -p -t m | grep -q 'manifests applied · reconciling'; do
  [ $SECONDS -lt $deadline ] || { echo "measure-demo-idle: no completed update" >&2;
    tmux -L "$SOCK" capture-pane -p -t m >&2; exit 1; }
  sleep 1
done
echo "demo: $BIN at speed $SPEED, completed after ${SECONDS}s; settling ${SETTLE}s"
sleep "$SETTLE"
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
switches() { cat /proc/"$PID"/task/*/status | awk '/ctxt_switches/ {n += $2} END {print n}'; }
T0=$(ticks); W0=$(switches); B0=$(stat -c %s "$OUT")
sleep "$IDLE"
T1=$(ticks); W1=$(switches); B1=$(stat -c %s "$OUT")
awk -v t="$((T1 - T0))" -v hz="$HZ" -v s="$IDLE" \
  'BEGIN { printf "idle cpu: %.3f%% of one core over %ds (%d ticks of 1/%d s)\n", 100 * t / hz / s, s, t, hz }'
awk '/VmRSS|VmHWM|RssAnon|RssFile/ {printf "%s %s KiB\n", $1, $2}' "/proc/$PID/status"
RSS=$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")
echo "threads: $(ls /proc/$PID/task | wc -l)"
awk -v w="$((W1 - W0))" -v s="$IDLE" 'BEGIN { printf "wakeups: %d context switches (%.1f/s)\n", w, w / s }'
echo "screen output: $((B1 - B0)) bytes over ${IDLE}s"
tmux -L "$SOCK" send-keys -t m q
sleep 1
if [ -n "${MAX_RSS_KIB:-}" ] && [ "$RSS" -gt "$MAX_RSS_KIB" ]; then
  echo "measure-demo-idle: resident memory $RSS KiB is above MAX_RSS_KIB=$MAX_RSS_KIB" >&2
  exit 1
fi
