#!/usr/bin/env bash
# Measures `cvo reconcile` on a real kube-apiserver (../shared/tools/kube-apiserver, or
# $REALK8S_TOOLS): for each N, a fresh private server with an audit log, the ClusterVersion and
# ClusterOperator CRDs, the namespace openshift-cluster-version, a payload of N manifests from
# scripts/gen-payload.sh (full mix: CRDs + custom resources, RBAC, Services, Secrets,
# ConfigMaps), then
#   1. `cvo reconcile --until-complete` (first apply, until ClusterVersion Completed),
#   2. `cvo reconcile --once` (a converged pass, in a new process),
#   3. (STEADY=1, the default) a long-running engine's converged passes: `cargo bench --bench
#      reconcile` with CVO_BENCH_KUBECONFIG/CVO_BENCH_PAYLOAD, resync 3 s, requests per pass as
#      the engine counts them, printed after the table;
#   4. (UPDATE=1, the default) an update in one engine to a second release of N manifests
#      (gen-payload.sh VERSION 4.16.1: its ConfigMaps change): `cargo bench --bench reconcile`
#      with CVO_BENCH_UPDATE_TO as well; the writes to payload objects (audit log) against the
#      number of changed manifests, and the peak RSS with one payload and with both;
#   5. (FIRST=1, the default) on a fresh server, one engine (`cargo bench --bench reconcile`)
#      applies the payload in its first pass; the requests of its next pass (the first
#      reconciling pass of the engine that did the first apply).
# Prints one Markdown table row per run: wall time to the end of the run (Completed for 1), the
# requests cvo sent by verb (from the audit log: the admin user, without the requests of
# kube-controller-manager, kubectl and curl), writes to payload objects (create/update/patch/
# delete outside ClusterVersion, ClusterOperators, Leases and the verification record), and
# CPU (user+sys) and peak RSS from /usr/bin/time -v.
#
#   scripts/bench-realapi.sh [N...]        default: 200 1000
# Env: CVO_BIN (default target/release/cvo; built with `cargo build --release` if missing),
#      CRDS (directory of the CRDs; default tests/fixtures/crds, else the shared fixtures),
#      TIMEOUT (seconds for each run, default 120), KEEP=1 keeps the server and files,
#      PRECREATE_CV=1 creates the ClusterVersion `version` first (as the installer does) instead
#      of letting cvo create it, CONNS=1 runs 1 and 2 under `strace -e trace=connect` and adds
#      the number of TCP connections cvo opened to the server (each a TLS handshake) to the
#      row's comment (CPU and wall time then include strace's overhead).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOOLS=${REALK8S_TOOLS:-$ROOT/../shared/tools/kube-apiserver}
[ -x "$TOOLS/up.sh" ] || { echo "bench-realapi: no kube-apiserver tools in $TOOLS" >&2; exit 1; }
BIN=${CVO_BIN:-target/release/cvo}
if [ ! -x "$BIN" ]; then cargo build --release --quiet; fi
CRDS=${CRDS:-}
if [ -z "$CRDS" ]; then
    if ls tests/fixtures/crds/*clusterversions*Default*.yaml >/dev/null 2>&1; then CRDS=tests/fixtures/crds
    else CRDS=$ROOT/../shared/fixtures/crds; fi
fi
TIMEOUT=${TIMEOUT:-120}
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(200 1000)

WORK=$(mktemp -d /tmp/cvo-bench-realapi.XXXXXX)
export REALK8S_DIR=$WORK/server
cleanup() {
    if [ "${KEEP:-0}" != 1 ]; then
        "$TOOLS/down.sh" --wipe >/dev/null 2>&1 || true
        rm -rf "$WORK"
    else
        echo "kept: $WORK (stop with REALK8S_DIR=$REALK8S_DIR $TOOLS/down.sh --wipe)" >&2
    fi
}
trap cleanup EXIT

# Summarises the audit lines after line $2 of $1 (a watch counts when it ends, so each run
# ends its process before the next starts), then one /usr/bin/time -v file ($3) and the
# run's JSON summary ($4), as a table row for run $5.
row() {
    python3 - "$@" <<'PY'
import json, re, sys
audit, skip, timef, summary, label = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
others = re.compile(r"^(kube-controller-manager|kubectl|curl)")
verbs, writes, agents, server_errors = {}, 0, set(), 0
not_payload = {"clusterversions", "clusteroperators", "leases"}
with open(audit) as f:
    for i, line in enumerate(f):
        if i < skip:
            continue
        e = json.loads(line)
        # a watch is logged when its response starts and again when it ends: count it once
        if e.get("stage") == "ResponseStarted":
            continue
        if e["user"]["username"] != "realk8s-admin" or others.match(e.get("userAgent", "")):
            continue
        agents.add(e.get("userAgent", "").split(" ")[0])
        v = e["verb"]
        verbs[v] = verbs.get(v, 0) + 1
        if e.get("responseStatus", {}).get("code", 0) >= 500:
            server_errors += 1
        ref = e.get("objectRef", {})
        if v in ("create", "update", "patch", "delete") and ref.get("resource") not in not_payload \
                and ref.get("name") != "cvo-verified-manifests" and e.get("responseStatus", {}).get("code", 0) < 300:
            writes += 1
t = open(timef).read()
def field(name):
    m = re.search(re.escape(name) + r": ([0-9.:]+)", t)
    return m.group(1) if m else "?"
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
rss = int(field("Maximum resident set size (kbytes)")) / 1024
try:
    s = json.load(open(summary))
    outcome, secs = s.get("outcome", "?"), s.get("seconds", 0.0)
except Exception:
    outcome, secs = "no summary", 0.0
total = sum(verbs.values())
by_verb = ", ".join(f"{k} {v}" for k, v in sorted(verbs.items()))
print(f"| {label} | {outcome} | {secs:.2f} s | {total} | {by_verb} | {writes} | {cpu:.2f} s | {rss:.0f} MiB |"
      f" <!-- agents: {' '.join(sorted(agents))}; 5xx answers: {server_errors} -->")
PY
}

echo "| run | outcome | wall | requests | by verb | writes to payload objects | CPU | peak RSS |"
echo "|---|---|---|---:|---|---:|---:|---:|"
# A fresh server for run $1 with audit log $2: the ClusterVersion and ClusterOperator CRDs,
# the namespace, the ClusterVersion CRD warmed (sets warm_until).
fresh_server() {
    # a second try: a server started right after another one stopped can lose a port race
    AUDIT_LOG=$2 "$TOOLS/up.sh" --wipe >"$WORK/up-$1.log" 2>&1 \
        || { "$TOOLS/down.sh" --wipe >/dev/null 2>&1; sleep 2; AUDIT_LOG=$2 "$TOOLS/up.sh" --wipe >"$WORK/up-$1.log" 2>&1; } \
        || { cat "$WORK/up-$1.log" >&2; exit 1; }
    kc=$REALK8S_DIR/kubeconfig
    kubectl --kubeconfig "$kc" apply -f "$CRDS/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml" \
        -f "$CRDS/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml" >/dev/null
    kubectl --kubeconfig "$kc" wait --for condition=Established --timeout 30s \
        crd/clusterversions.config.openshift.io crd/clusteroperators.config.openshift.io >/dev/null
    kubectl --kubeconfig "$kc" create namespace openshift-cluster-version >/dev/null
    # kube-apiserver holds the first write to a custom resource whose storage it has just set
    # up (its first request) for about 2 s; on a cluster the ClusterVersion CRD has been served
    # long before its CVO starts, so the bench touches it now and starts cvo 2 s later.
    kubectl --kubeconfig "$kc" get clusterversions,clusteroperators >/dev/null 2>&1 || true
    warm_until=$((SECONDS + 3))
    if [ "${PRECREATE_CV:-0}" = 1 ]; then
        printf 'apiVersion: config.openshift.io/v1\nkind: ClusterVersion\nmetadata:\n  name: version\nspec:\n  clusterID: %s\n' \
            "$(cat /proc/sys/kernel/random/uuid)" | kubectl --kubeconfig "$kc" create -f - >/dev/null
    fi
}

for n in "${SIZES[@]}"; do
    audit=$WORK/audit-$n.jsonl
    fresh_server "$n" "$audit"
    p=$WORK/payload-$n
    scripts/gen-payload.sh "$p" "$n" >/dev/null
    while [ "$SECONDS" -lt "$warm_until" ]; do sleep 0.2; done
    for run in until-complete once; do
        mark=$(wc -l <"$audit")
        set +e
        conns=$WORK/connect-$n-$run
        trace=()
        [ "${CONNS:-0}" != 1 ] || trace=(strace -f -qq -e trace=connect -o "$conns")
        /usr/bin/time -v -o "$WORK/time-$n-$run" "${trace[@]}" "$BIN" reconcile --kubeconfig "$kc" --payload "$p" \
            "--$run" --timeout "$TIMEOUT" -o json >"$WORK/summary-$n-$run.json" 2>"$WORK/stderr-$n-$run"
        set -e
        sleep 1 # the audit log is written as requests finish
        r=$(row "$audit" "$mark" "$WORK/time-$n-$run" "$WORK/summary-$n-$run.json" "N=$n $run")
        if [ -f "$conns" ]; then
            port=$(sed -n 's#.*server: "\{0,1\}https://[^:]*:\([0-9]*\).*#\1#p' "$kc" | head -1)
            r="${r% -->}; TCP connections to the server: $(grep -c "sin_port=htons($port)" "$conns") -->"
        fi
        echo "$r"
    done
    if [ "${STEADY:-1}" = 1 ]; then
        # 3. a long-running engine's converged passes (benches/reconcile.rs against this server)
        mark=$(wc -l <"$audit")
        steady=$(CVO_BENCH_KUBECONFIG=$kc CVO_BENCH_PAYLOAD=$p cargo bench --quiet --bench reconcile 2>"$WORK/steady-$n.err" | tail -1)
        sleep 1
        echo "N=$n: ${steady:-the steady run failed: $(tail -3 "$WORK/steady-$n.err")}" >>"$WORK/steady.txt"
        python3 - "$audit" "$mark" >>"$WORK/steady.txt" <<'PY'
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1])):
    if i < int(sys.argv[2]):
        continue
    e = json.loads(line)
    agent = e.get("userAgent", "")
    if e.get("stage") != "ResponseStarted" and e["user"]["username"] == "realk8s-admin" \
            and not agent.startswith(("kube-controller-manager", "kubectl", "curl")):
        n += 1
print(f"  audit log: {n} requests from the bench process in that run (start-up and shutdown included)")
PY
    fi
    if [ "${UPDATE:-1}" = 1 ]; then
        # 4. an update to a second release of N manifests in one engine (benches/reconcile.rs):
        #    the ConfigMaps carry the version, so they are what changes
        p2=$WORK/payload-$n-next
        scripts/gen-payload.sh "$p2" "$n" 4.16.1 >/dev/null
        changed=0
        for f in "$p2"/release-manifests/0000_*.yaml; do
            cmp -s "$f" "$p/release-manifests/$(basename "$f")" || changed=$((changed + 1))
        done
        mark=$(wc -l <"$audit")
        line=$(CVO_BENCH_KUBECONFIG=$kc CVO_BENCH_PAYLOAD=$p CVO_BENCH_UPDATE_TO=$p2 \
            cargo bench --quiet --bench reconcile 2>"$WORK/update-$n.err" | tail -1)
        sleep 1
        echo "N=$n: ${line:-the update run failed: $(tail -3 "$WORK/update-$n.err")}" >>"$WORK/steady.txt"
        python3 - "$audit" "$mark" "$changed" >>"$WORK/steady.txt" <<'PY'
import json, sys
writes, requests = 0, 0
for i, line in enumerate(open(sys.argv[1])):
    if i < int(sys.argv[2]):
        continue
    e = json.loads(line)
    agent = e.get("userAgent", "")
    if e.get("stage") == "ResponseStarted" or e["user"]["username"] != "realk8s-admin" \
            or agent.startswith(("kube-controller-manager", "kubectl", "curl")):
        continue
    requests += 1
    ref = e.get("objectRef", {})
    if e["verb"] in ("create", "update", "patch", "delete") \
            and ref.get("resource") not in ("clusterversions", "clusteroperators", "leases") \
            and ref.get("name") != "cvo-verified-manifests" and e.get("responseStatus", {}).get("code", 0) < 300:
        writes += 1
print(f"  audit log: {writes} writes to payload objects for {sys.argv[3]} changed manifests, {requests} requests in that run")
PY
    fi
    if [ "${FIRST:-1}" = 1 ]; then
        # 5. the first reconciling pass of the engine that did the first apply: a fresh
        #    server, one engine (benches/reconcile.rs) applies the payload in its first pass;
        #    the requests of its second pass, as the engine counts them
        "$TOOLS/down.sh" --wipe >/dev/null 2>&1 || true
        fresh_server "$n-first" "$WORK/audit-$n-first.jsonl"
        while [ "$SECONDS" -lt "$warm_until" ]; do sleep 0.2; done
        line=$(CVO_BENCH_FIRST_APPLY=1 CVO_BENCH_KUBECONFIG=$kc CVO_BENCH_PAYLOAD=$p \
            cargo bench --quiet --bench reconcile 2>"$WORK/first-$n.err" | tail -1)
        echo "N=$n: ${line:-the first-pass run failed: $(tail -3 "$WORK/first-$n.err")}" >>"$WORK/steady.txt"
    fi
    "$TOOLS/down.sh" --wipe >/dev/null 2>&1 || true
done
[ ! -f "$WORK/steady.txt" ] || cat "$WORK/steady.txt"
