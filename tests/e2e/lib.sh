# Helpers shared by the tmux end-to-end scripts (sourced, not run).
#
# The sourcing script sets, before `. lib.sh`:
#   CVO_BIN  the binary under test (absolute path)
#   ART      the folder for captures (emptied by e2e_prepare)
#   SOCK     the tmux server socket name (one per script, so scripts never share a server)
#   SESSION  the tmux session name
#   TIMEOUT  seconds wait_for / wait_gone poll before failing
# and defines its own `cleanup` and EXIT trap.

tm() { tmux -L "$SOCK" "$@"; }

# fail MESSAGE: print it with the captures' folder, save a last capture, exit 1.
fail() {
    echo "FAIL: $*" >&2
    capture "failure" >/dev/null 2>&1 || true
    echo "captures are in $ART" >&2
    exit 1
}

# e2e_prepare: check the binary and tmux, and empty the captures' folder.
e2e_prepare() {
    [ -x "$CVO_BIN" ] || fail "no executable at $CVO_BIN (build it: cargo build --release, or set CVO_BIN)"
    command -v tmux >/dev/null || fail "tmux is not installed"
    mkdir -p "$ART"
    rm -rf "${ART:?}"/*
}

step=0
# capture NAME: save the pane text as NN-NAME.txt and print it.
capture() {
    step=$((step + 1))
    local f
    f="$ART/$(printf '%02d' "$step")-$1.txt"
    tm capture-pane -p -t "$SESSION" >"$f"
    cat "$f"
}

# wait_for TEXT [NAME]: poll the pane until TEXT appears (deadline $TIMEOUT s).
wait_for() {
    local text="$1" deadline=$((SECONDS + TIMEOUT))
    while ((SECONDS < deadline)); do
        if tm capture-pane -p -t "$SESSION" | grep -qF -- "$text"; then
            capture "${2:-wait}" >/dev/null
            return 0
        fi
        sleep 0.1
    done
    fail "timed out after ${TIMEOUT}s waiting for '$text' (step ${2:-wait})"
}

# wait_gone TEXT [NAME]: poll until TEXT is no longer on screen.
wait_gone() {
    local text="$1" deadline=$((SECONDS + TIMEOUT))
    while ((SECONDS < deadline)); do
        if ! tm capture-pane -p -t "$SESSION" | grep -qF -- "$text"; then
            capture "${2:-gone}" >/dev/null
            return 0
        fi
        sleep 0.1
    done
    fail "timed out after ${TIMEOUT}s waiting for '$text' to disappear (step ${2:-gone})"
}

# assert_absent TEXT WHAT: fail when TEXT is on screen.
assert_absent() {
    local text="$1" what="$2"
    if tm capture-pane -p -t "$SESSION" | grep -qF -- "$text"; then
        fail "$what: '$text' is still on screen"
    fi
}

keys() { tm send-keys -t "$SESSION" "$@"; }

# e2e_terminal COLS ROWS: the tmux session $SESSION, COLS x ROWS and kept at that size, running
# a clean shell (no rc files, only PATH, HOME and TERM) to type commands into with `keys`.
e2e_terminal() {
    tm -f /dev/null new-session -d -s "$SESSION" -x "$1" -y "$2" \
        "env -i PATH=/usr/bin:/bin HOME=\"$HOME\" TERM=tmux-256color bash --norc --noprofile"
    tm set -g window-size manual
    tm resize-window -t "$SESSION" -x "$1" -y "$2"
}

# e2e_start_sim [ARG...]: starts `cvo sim serve --port 0` with ARGs in the background (its
# kubeconfig in $ART/kubeconfig, audit log in $ART/audit.jsonl, output in $ART/server.out and
# server.err), sets server_pid, and waits (at most $TIMEOUT s) for its ready line.
e2e_start_sim() {
    "$CVO_BIN" sim serve "$@" --port 0 --kubeconfig-out "$ART/kubeconfig" --audit-log "$ART/audit.jsonl" \
        >"$ART/server.out" 2>"$ART/server.err" &
    server_pid=$!
    local deadline=$((SECONDS + TIMEOUT))
    until grep -q "^cvo sim serving https://127.0.0.1:" "$ART/server.out" 2>/dev/null; do
        kill -0 "$server_pid" 2>/dev/null || fail "cvo sim serve exited: $(cat "$ART/server.err")"
        ((SECONDS < deadline)) || fail "no ready line from cvo sim serve within ${TIMEOUT}s"
        sleep 0.05
    done
}

# cpu_ticks PID: user + system CPU of the process so far, in clock ticks (100 per second).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
