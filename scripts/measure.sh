#!/usr/bin/env bash
# Measures the release binary from outside: peak memory of `cvo status` and of the dashboard,
# and the dashboard's CPU use while idle, on a snapshot (default: the largest oc-upgrade-status
# fixture). Usage: scripts/measure.sh [SNAPSHOT_PREFIX] [IDLE_SECONDS]
# Needs: tmux, /usr/bin/time. Prints one line per figure.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
PREFIX=${1:-tests/fixtures/upstream/oc-upgrade-status/no-version-upgrading}
IDLE=${2:-30}
[ -x "$BIN" ] || { echo "measure: $BIN not built (cargo build --release)" >&2; exit 1; }
shopt -s nullglob
FILES=("$PREFIX"-*.yaml "$PREFIX"-*.json)
[ ${#FILES[@]} -gt 0 ] || { echo "measure: no files match $PREFIX-*" >&2; exit 1; }
FROM=()
for f in "${FILES[@]}"; do case "$f" in *-alerts.json) FROM+=(--alerts "$f");; *) FROM+=(--from "$f");; esac; done
SIZE=$(cat "${FILES[@]}" | wc -c)
echo "snapshot: $PREFIX (${#FILES[@]} files, $SIZE bytes)"

/usr/bin/time -f 'status: wall %es, peak RSS %M KiB' "$BIN" status "${FROM[@]}" --details all >/dev/null

SOCK=cvo-measure
tmux -L "$SOCK" kill-server 2>/dev/null || true
trap 'tmux -L "$SOCK" kill-server 2>/dev/null || true' EXIT
tmux -L "$SOCK" new-session -d -s m -x 160 -y 48 "$BIN tui ${FROM[*]}"
sleep 3
PID=$(pgrep -n -f "$BIN tui" || true)
[ -n "$PID" ] || { echo "measure: dashboard did not start" >&2; exit 1; }
HZ=$(getconf CLK_TCK)
ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
T0=$(ticks); sleep "$IDLE"; T1=$(ticks)
awk -v t="$((T1 - T0))" -v hz="$HZ" -v s="$IDLE" 'BEGIN { printf "tui idle: %.2f%% of one core over %ds (%d ticks)\n", 100 * t / hz / s, s, t }'
grep -E 'VmHWM' "/proc/$PID/status" | awk '{print "tui peak RSS: " $2 " KiB"}'
tmux -L "$SOCK" send-keys -t m q
