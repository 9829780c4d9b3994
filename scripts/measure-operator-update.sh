#!/usr/bin/env bash
# Peak memory of `cvo operator start` while it applies an update: the demo cluster
# (`cvo sim serve --demo`, 4.16.3) is asked for 4.16.4 (spec.desiredUpdate, kubectl), and the
# operator runs as 4.16.4 would after its own rollout: --release-image the 4.16.4 image,
# --payload assets/payloads/4.16.4 (no registry pull: the pull's own peak is in docs/performance.md,
# "Pulling a release image"). `cvo sim serve` runs no cluster operators, so the script plays
# them: it sets every ClusterOperator's status.versions to the payload's (kubectl, status
# subresource) and the update can complete. It samples VmRSS every second for WINDOW seconds
# and prints the peak (VmHWM) and the progress reached.
#
# Usage: scripts/measure-operator-update.sh [WINDOW_SECONDS]   (default 120)
# Env: CVO_BIN (default target/release/cvo), SIM_BIN (default CVO_BIN; needs `sim serve --demo`).
# Needs: bash, kubectl, awk, python3 with PyYAML.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${CVO_BIN:-target/release/cvo}
SIM_BIN=${SIM_BIN:-$BIN}
WINDOW=${1:-120}
[ -x "$BIN" ] || { echo "measure-operator-update: $BIN not executable (set CVO_BIN)" >&2; exit 1; }
IMAGE=quay.io/openshift-release-dev/ocp-release@sha256:8878f38c39bf31828fcd6909657523a97dabf8dd21425d6f2d760433d191071e
D=$(mktemp -d /tmp/cvo-measure-update.XXXXXX)
SIM=; OP=
cleanup() {
  [ -n "$OP" ] && kill "$OP" 2>/dev/null && wait "$OP" 2>/dev/null
  [ -n "$SIM" ] && kill "$SIM" 2>/dev/null && wait "$SIM" 2>/dev/null
  rm -rf "$D"
}
trap cleanup EXIT
"$SIM_BIN" sim serve --demo --kubeconfig-out "$D/kc" >"$D/sim.out" 2>"$D/sim.err" &
SIM=$!
for _ in $(seq 100); do grep -q serving "$D/sim.out" 2>/dev/null && break; sleep 0.1; done
kubectl --kubeconfig "$D/kc" patch clusterversion version --type merge \
  -p "{\"spec\":{\"desiredUpdate\":{\"version\":\"4.16.4\",\"image\":\"$IMAGE\"}}}" >/dev/null
KUBECONFIG= "$BIN" operator start --release-image "$IMAGE" --payload assets/payloads/4.16.4 \
  --kubeconfig "$D/kc" --listen 127.0.0.1:0 --insecure-http --metrics-auth=none >"$D/op.out" 2>"$D/op.err" &
OP=$!
# The cluster operators "update" at once: their versions become the payload's.
python3 - assets/payloads/4.16.4/release-manifests > "$D/co-patches" <<'PY'
import json, pathlib, sys, yaml
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.yaml")):
    for d in yaml.safe_load_all(f.read_text()):
        if isinstance(d, dict) and d.get("kind") == "ClusterOperator":
            v = (d.get("status") or {}).get("versions") or []
            print(d["metadata"]["name"], json.dumps({"status": {"versions": v}}))
PY
while read -r name patch; do
  kubectl --kubeconfig "$D/kc" patch clusteroperator "$name" --subresource=status --type merge -p "$patch" >/dev/null 2>&1 || true
done < "$D/co-patches"
MAX=0
for _ in $(seq "$WINDOW"); do
  sleep 1
  R=$(awk '/^VmRSS/ { print $2 }' "/proc/$OP/status")
  [ "$R" -gt "$MAX" ] && MAX=$R
done
echo "binary: $BIN"
echo "update peak RSS (VmHWM over ${WINDOW}s): $(awk '/^VmHWM/ { print $2 }' "/proc/$OP/status") KiB (max sampled VmRSS $MAX KiB)"
echo "at the end: $(awk '/^VmRSS|^RssAnon|^RssFile/ { printf "%s %s KiB  ", $1, $2 }' "/proc/$OP/status")"
echo "progress: $(kubectl --kubeconfig "$D/kc" get clusterversion version \
  -o jsonpath='{.status.history[0].version} {.status.history[0].state}: {.status.conditions[?(@.type=="Progressing")].message}')"
