#!/usr/bin/env python3
"""Cost of the simulator's CRD schema and CEL validation, measured from outside the process.

Starts `cvo sim serve` (the binary in $CVO_BIN, default target/debug/cvo) and, over one
keep-alive HTTPS connection, for each N given: creates N ClusterOperators (validated against
upstream's CRD schema), writes each one's status through /status (schema-checked again), then
updates one ClusterVersion N times (its CRD's schema plus three CEL rules). Prints the time per
write of each phase and the server's VmRSS, so runs with different N show whether the cost
per write stays flat (linear total cost).

Usage: scripts/sim-schema-cost.py [N ...]   (default: 500 2000)
Needs: python3 (stdlib only), kubectl (to read the kubeconfig). Stops the server on exit.
"""

import base64
import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time


def view(kc, path):
    return subprocess.check_output(
        ["kubectl", "--kubeconfig", kc, "config", "view", "--raw", "-o", f"jsonpath={path}"], text=True
    )


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run(n):
    binary = os.environ.get("CVO_BIN", "target/debug/cvo")
    d = tempfile.mkdtemp()
    kc = os.path.join(d, "kubeconfig")
    p = subprocess.Popen([binary, "sim", "serve", "--kubeconfig-out", kc], stdout=subprocess.PIPE)
    try:
        p.stdout.readline()
        server = view(kc, "{.clusters[0].cluster.server}")
        token = view(kc, "{.users[0].user.token}")
        ca = base64.b64decode(view(kc, "{.clusters[0].cluster.certificate-authority-data}"))
        ctx = ssl.create_default_context(cadata=ca.decode())
        ctx.check_hostname = False
        host, port = server.removeprefix("https://").split(":")
        conn = http.client.HTTPSConnection(host, int(port), context=ctx)
        hdr = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

        def req(method, path, body):
            conn.request(method, path, json.dumps(body), hdr)
            r = conn.getresponse()
            data = r.read()
            if r.status >= 300:
                raise RuntimeError(f"{method} {path}: {r.status} {data[:300]!r}")
            return json.loads(data)

        cos = "/apis/config.openshift.io/v1/clusteroperators"
        t0 = time.perf_counter()
        made = [req("POST", cos, {"apiVersion": "config.openshift.io/v1", "kind": "ClusterOperator",
                                  "metadata": {"name": f"op-{i}"}, "spec": {}}) for i in range(n)]
        t1 = time.perf_counter()
        at = "2026-01-01T00:00:00Z"
        for o in made:
            o["status"] = {"conditions": [
                {"type": t, "status": s, "lastTransitionTime": at, "message": "m", "reason": "R"}
                for t, s in (("Available", "True"), ("Progressing", "False"), ("Degraded", "False"))],
                "versions": [{"name": "operator", "version": "4.16.4"}],
                "relatedObjects": [{"group": "", "resource": "namespaces", "name": "openshift-x"}]}
            req("PUT", f"{cos}/{o['metadata']['name']}/status", o)
        t2 = time.perf_counter()
        cvs = "/apis/config.openshift.io/v1/clusterversions"
        cv = req("POST", cvs, {"apiVersion": "config.openshift.io/v1", "kind": "ClusterVersion",
                               "metadata": {"name": "version"},
                               "spec": {"clusterID": "c", "channel": "stable-4.16",
                                        "desiredUpdate": {"version": "4.16.4", "architecture": ""}}})
        t3 = time.perf_counter()
        for i in range(n):
            cv["spec"]["channel"] = f"stable-4.{i}"
            cv = req("PUT", f"{cvs}/version", cv)
        t4 = time.perf_counter()
        us = lambda a, b: (b - a) / n * 1e6
        print(f"N={n}: ClusterOperator create {us(t0, t1):.0f} us/write, status {us(t1, t2):.0f} us/write, "
              f"ClusterVersion update (schema + CEL) {us(t3, t4):.0f} us/write, VmRSS {rss_kib(p.pid) / 1024:.1f} MiB")
    finally:
        p.terminate()
        p.wait()


if __name__ == "__main__":
    for n in [int(a) for a in sys.argv[1:]] or [500, 2000]:
        run(n)
