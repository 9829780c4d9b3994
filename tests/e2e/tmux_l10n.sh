#!/usr/bin/env bash
# End-to-end: the dashboard in Russian (issue 32) in a real terminal (tmux), on the release binary.
#
# Starts `cvo demo --speed 20 --auto` with LANG=ru_RU.UTF-8 (and no --lang) at 80x24 and checks,
# from what is on screen:
#   1. the header, the tab line and the sync panel speak Russian (Версия, Обзор, синхронизация);
#   2. nothing overflows at 80 columns: every captured line is at most 80 display cells wide
#      (`wc -L` counts cells), the tab line names all eight views and the footer's first hints
#      are whole;
#   3. `?` opens the Russian help, Esc closes it; `m` opens the Russian mode-switch
#      confirmation, Esc closes it without switching;
#   4. LANG=ru_RU.UTF-8 leaves `cvo status` and `cvo upgrade` in oc's English, byte for byte;
#      `cvo --lang ru upgrade` and `cvo payload inspect` (which follows the locale) speak Russian;
#   5. `q` quits with exit code 0.
# Every capture is saved under tests/e2e/artifacts/l10n/. Exits non-zero with a message naming
# the failed step.
#
# Usage: tests/e2e/tmux_l10n.sh             (binary: $CVO_BIN, default target/release/cvo)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
CVO_BIN="${CVO_BIN:-target/release/cvo}"
case "$CVO_BIN" in /*) ;; *) CVO_BIN="$ROOT/$CVO_BIN" ;; esac
ART="$ROOT/tests/e2e/artifacts/l10n"
SOCK="cvo-e2e-l10n"
SESSION="cvo"
TIMEOUT="${E2E_TIMEOUT:-30}"

. "$ROOT/tests/e2e/lib.sh"

cleanup() { tm kill-server >/dev/null 2>&1 || true; }
trap cleanup EXIT

e2e_prepare

# no_overflow NAME: the last capture's lines are at most 80 cells wide.
no_overflow() {
    local f widest
    f="$ART/$(printf '%02d' "$step")-$1.txt"
    widest=$(LC_ALL=C.UTF-8 wc -L <"$f")
    [ "$widest" -le 80 ] || fail "$1: a line is $widest cells wide at 80 columns"
}

# tmux keeps UTF-8 cells only when it runs in a UTF-8 locale (-u forces it).
LC_ALL=C.UTF-8 tm -u -f /dev/null new-session -d -s "$SESSION" -x 80 -y 24 "env -i PATH=/usr/bin:/bin HOME=\"$HOME\" TERM=tmux-256color LANG=ru_RU.UTF-8 bash --norc --noprofile"
tm set -s escape-time 0
tm set -g window-size manual
tm resize-window -t "$SESSION" -x 80 -y 24
keys "clear; cd '$ART' && TERM=xterm-256color XDG_STATE_HOME='$ART' '$CVO_BIN' demo --speed 20 --auto; echo rc=\$?" Enter

# 1. Russian header, tabs and sync panel.
wait_for "Версия 4.16.3" "header"
wait_for "[1]Обзор" "tabs"
wait_for "синхронизация (движок)" "sync"
[ "$(tm display -p -t "$SESSION" '#{alternate_on}')" = "1" ] || fail "the dashboard is not on the alternate screen"
for english in "Version 4.16.3" "Overview" "control plane" "quit" "Channel "; do
    assert_absent "$english" "Russian screen"
done

# 2. Nothing overflows at 80x24: the whole tab line, the footer's first hints.
wait_for "[8]Дрейф" "all-tabs"
no_overflow "all-tabs"
wait_for "q выход  ? справка" "footer"
no_overflow "footer"

# 3. Help and the mode-switch confirmation in Russian.
keys '?'
wait_for "выход, откуда угодно" "help-open"
no_overflow "help-open"
keys Escape
wait_gone "выход, откуда угодно" "help-closed"
keys 'm'
wait_for "Переключить движок из режима" "switch-confirm"
no_overflow "switch-confirm"
wait_for "отмена (ничего не отправляется)" "switch-keys"
keys Escape
wait_gone "Переключить движок из режима" "switch-closed"
wait_for "active-apply" "mode-kept"
# The update goes on in Russian: the History view shows the completed update.
keys '4'
wait_for "история обновлений[" "history"
no_overflow "history"

# 4. `cvo status` under the same locale prints oc's English, byte for byte.
status_ru="$(env -i PATH=/usr/bin:/bin LANG=ru_RU.UTF-8 "$CVO_BIN" status --from "$ROOT/assets/demo-cluster" 2>&1 || true)"
status_c="$(env -i PATH=/usr/bin:/bin LANG=C "$CVO_BIN" status --from "$ROOT/assets/demo-cluster" 2>&1 || true)"
[ -n "$status_c" ] || fail "cvo status printed nothing"
[ "$status_ru" = "$status_c" ] || fail "LANG=ru_RU.UTF-8 changed cvo status: $(diff <(echo "$status_c") <(echo "$status_ru") | head -5)"
upgrade_ru="$(env -i PATH=/usr/bin:/bin LANG=ru_RU.UTF-8 "$CVO_BIN" upgrade --from "$ROOT/assets/demo-cluster" 2>&1 || true)"
upgrade_c="$(env -i PATH=/usr/bin:/bin LANG=C "$CVO_BIN" upgrade --from "$ROOT/assets/demo-cluster" 2>&1 || true)"
[ "$upgrade_ru" = "$upgrade_c" ] || fail "LANG=ru_RU.UTF-8 changed cvo upgrade: $(diff <(echo "$upgrade_c") <(echo "$upgrade_ru") | head -5)"
upgrade_lang="$(env -i PATH=/usr/bin:/bin "$CVO_BIN" --lang ru upgrade --from "$ROOT/assets/demo-cluster" 2>&1 || true)"
grep -q "^Рекомендуемые обновления:" <<<"$upgrade_lang" || fail "cvo --lang ru upgrade is not Russian: $upgrade_lang"
inspect_ru="$(env -i PATH=/usr/bin:/bin LANG=ru_RU.UTF-8 "$CVO_BIN" payload inspect "$ROOT/assets/payloads/4.16.4" 2>&1 || true)"
grep -q "^Манифесты: загружено " <<<"$inspect_ru" || fail "cvo payload inspect under LANG=ru_RU.UTF-8 is not Russian: $(head -3 <<<"$inspect_ru")"

# 5. Quit.
keys 'q'
wait_for "rc=0" "quit"
echo "tmux_l10n: ok"
